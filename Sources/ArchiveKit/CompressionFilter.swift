/// Compression of a byte stream, detected from magic bytes or chosen from a file name.
///
/// The raw values are libarchive's filter names, which are also the module names of its filter options.
public enum CompressionFilter: String, Sendable, CaseIterable {
    case none, gzip, zstd, xz, bzip2

    /// The number of leading bytes `detect(magic:)` looks at.
    public static let magicLength = 6

    /// Detects the compression from the first bytes of a stream (up to `magicLength`; fewer at a short end).
    public static func detect(magic: UnsafeRawBufferPointer) -> CompressionFilter {
        if magic.starts(with: [0x1F, 0x8B]) { return .gzip }
        if magic.starts(with: [0x28, 0xB5, 0x2F, 0xFD]) { return .zstd }
        if magic.starts(with: [0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00]) { return .xz }
        // "BZh" followed by the block size digit 1-9.
        if magic.count >= 4, magic.starts(with: [0x42, 0x5A, 0x68]), (0x31...0x39).contains(magic[3]) { return .bzip2 }
        return .none
    }

    /// Chooses the compression from a file name's extension (case-insensitive): `.gz`/`.tgz` is gzip,
    /// `.zst`/`.tzst` zstd, `.xz`/`.txz` xz, `.bz2`/`.tbz2` bzip2, anything else none.
    public static func forPath(_ path: String) -> CompressionFilter {
        let fileName = path.split(separator: "/", omittingEmptySubsequences: false).last ?? ""
        guard let dot = fileName.lastIndex(of: "."), dot != fileName.startIndex else { return .none }
        switch fileName[fileName.index(after: dot)...].lowercased() {
        case "gz", "tgz": return .gzip
        case "zst", "tzst": return .zstd
        case "xz", "txz": return .xz
        case "bz2", "tbz2": return .bzip2
        default: return .none
        }
    }

    /// The usual file name extension without the dot (`"gz"`, `"zst"`, ...); `nil` for `.none`.
    public var fileExtension: String? {
        switch self {
        case .none: nil
        case .gzip: "gz"
        case .zstd: "zst"
        case .xz: "xz"
        case .bzip2: "bz2"
        }
    }
}
