import ArchiveKit

/// Recognises content that is already compressed, which a single-pass `.tar.zst` stores in raw frames
/// instead of compressing it again.
enum StoredContent {
    /// Whether the first bytes of a file are those of an image, video or archive format that compresses
    /// its data (JPEG, PNG, GIF, WebP, HEIC, AVIF, MP4, zip, gzip, zstd, xz, bzip2).
    static func isCompressed(head: some Collection<UInt8>) -> Bool {
        if let media = MediaType.detect(head), media != .pdf { return true }
        let magic = Array(head.prefix(CompressionFilter.magicLength))
        if magic.starts(with: [0x50, 0x4B, 0x03, 0x04]) { return true }
        return magic.withUnsafeBytes { CompressionFilter.detect(magic: $0) } != .none
    }
}
