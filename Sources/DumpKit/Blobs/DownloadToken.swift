import Crypto

/// Firebase download tokens (`firebaseStorageDownloadTokens`) for extracted objects, derived instead
/// of drawn at random so that re-running an extraction gives the same bytes.
public enum DownloadToken {
    /// A token for the object `name` holding content whose SHA-256 is `sha256`: formatted as a
    /// version-4 UUID like the tokens Firebase makes, equal for equal inputs and different for
    /// different names.
    public static func derive(sha256: String, name: String) -> String {
        var b = Array(SHA256.hash(data: Array("dumpkit download token\0\(sha256)\0\(name)".utf8)).prefix(16))
        b[6] = (b[6] & 0x0F) | 0x40  // version 4
        b[8] = (b[8] & 0x3F) | 0x80  // RFC 4122 variant
        // 8-4-4-4-12 hex digits, cut on bytes (not Characters).
        var hex = Array(Hex.lowercase(b).utf8)
        for dash in [20, 16, 12, 8] { hex.insert(UInt8(ascii: "-"), at: dash) }
        return String(decoding: hex, as: UTF8.self)
    }
}
