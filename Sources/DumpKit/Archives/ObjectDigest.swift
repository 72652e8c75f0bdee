import Crypto

/// The hashes buckets report for an object (SHA-256, MD5, CRC-32C), computed over its bytes as they stream by.
package struct ObjectDigest {
    private var sha256 = SHA256()
    private var md5 = Insecure.MD5()
    private var crc32c = CRC32C()
    /// Bytes seen so far.
    package private(set) var size: Int64 = 0
    /// The first bytes, for recognising the content type.
    package private(set) var head: [UInt8] = []

    package init() {}

    /// Adds the next bytes of the object.
    package mutating func update(_ bytes: UnsafeRawBufferPointer) {
        if head.count < MediaType.sniffLength {
            head += bytes.prefix(MediaType.sniffLength - head.count)
        }
        sha256.update(bufferPointer: bytes)
        md5.update(bufferPointer: bytes)
        crc32c.update(bytes)
        size += Int64(bytes.count)
    }

    /// The CRC-32C so far as a number.
    package var crc32cValue: UInt32 { crc32c.value }

    /// The hashes in the forms `BlobMetadata` keeps: SHA-256 in lowercase hex, MD5 and CRC-32C in base64.
    package func finalize() -> (sha256: String, md5: String, crc32c: String) {
        (Hex.lowercase(sha256.finalize()), Base64.encode(Array(md5.finalize())), crc32c.base64)
    }
}
