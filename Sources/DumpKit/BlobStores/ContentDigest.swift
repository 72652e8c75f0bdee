import Crypto

/// The size and hashes a store keeps for an object: SHA-256 (hex), MD5 and CRC-32C (base64, as
/// buckets report them).
public struct ContentDigest: Hashable, Sendable {
    public let size: Int64
    /// Lowercase hex.
    public let sha256: String
    /// Base64, as a bucket's `md5Hash`.
    public let md5: String
    /// Base64 of the big-endian value, as a bucket's `crc32c`.
    public let crc32c: String

    /// Hashes `content`.
    public init(_ content: UnsafeRawBufferPointer) {
        self.init(content, md5: Insecure.MD5.hash(data: content))
    }

    /// Hashes `content`, taking its MD5 and CRC-32C from `recorded` when its SHA-256 is `recorded`'s
    /// (the content they were computed from): then only the SHA-256 is computed.
    public init(_ content: UnsafeRawBufferPointer, recorded: (sha256: String, md5: String, crc32c: String)?) {
        guard let recorded, recorded.sha256 == Hex.lowercase(SHA256.hash(data: content)) else {
            self = ContentDigest(content)
            return
        }
        size = Int64(content.count)
        (sha256, md5, crc32c) = recorded
    }

    /// The hashes of content that streamed through `digest`.
    package init(_ digest: ObjectDigest) {
        size = digest.size
        (sha256, md5, crc32c) = digest.finalize()
    }

    /// Hashes `content` whose MD5 is already known.
    private init(_ content: UnsafeRawBufferPointer, md5 digest: some Sequence<UInt8>) {
        size = Int64(content.count)
        sha256 = Hex.lowercase(SHA256.hash(data: content))
        md5 = Base64.encode(Array(digest))
        var crc = CRC32C()
        crc.update(content)
        crc32c = crc.base64
    }

    /// Hashes each of `contents`, their MD5s side by side (`MD5Batch`).
    static func digests(of contents: [[UInt8]]) -> [ContentDigest] {
        zip(contents, MD5Batch.digests(of: contents)).map { content, md5 in content.withUnsafeBytes { ContentDigest($0, md5: md5) } }
    }

    /// Metadata for an object of this content.
    public func metadata(name: String, contentType: String?, customMetadata: [String: String] = [:]) -> BlobMetadata {
        BlobMetadata(
            name: name, size: size, contentType: contentType, sha256: sha256, md5: md5, crc32c: crc32c, customMetadata: customMetadata)
    }
}
