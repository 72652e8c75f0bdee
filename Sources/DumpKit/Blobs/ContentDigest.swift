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
        size = Int64(content.count)
        sha256 = Self.hex(SHA256.hash(data: content))
        md5 = Base64.encode(Array(Insecure.MD5.hash(data: content)))
        var crc = CRC32C()
        crc.update(content)
        crc32c = crc.base64
    }

    /// Metadata for an object of this content.
    public func metadata(name: String, contentType: String?, customMetadata: [String: String] = [:]) -> BlobMetadata {
        BlobMetadata(name: name, size: size, contentType: contentType, sha256: sha256, md5: md5, crc32c: crc32c, customMetadata: customMetadata)
    }

    /// Lowercase hex of a digest.
    static func hex(_ digest: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(64)
        for b in digest {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0xF)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
