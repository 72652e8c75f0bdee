/// How an upload proves its bytes to the store (a multipart part, whose payload is sent
/// `UNSIGNED-PAYLOAD`, and an object sent whole with the hashes it records):
/// `x-amz-checksum-crc32c` (what AWS's SDKs send since 2025), `Content-MD5` (what older S3-compatible
/// stores understand), or nothing (stores that reject both; TLS still guards the bytes).
public enum ChecksumMode: String, Sendable, CaseIterable {
    case crc32c
    case md5
    case off
}
