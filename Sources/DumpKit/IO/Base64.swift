import Foundation

/// Standard base64 (RFC 4648, with padding), as buckets report md5 and crc32c.
public enum Base64 {
    /// Encodes bytes.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        Data(bytes).base64EncodedString()
    }
}
