import Crypto

/// Firebase download tokens (`firebaseStorageDownloadTokens`) for extracted objects, derived instead
/// of drawn at random so that re-running an extraction gives the same bytes.
public enum DownloadToken {
    /// A token for the object `name` holding content whose SHA-256 is `sha256`: formatted as a
    /// version-4 UUID like the tokens Firebase makes, equal for equal inputs and different for
    /// different names.
    public static func derive(sha256: String, name: String) -> String {
        var input = Array("dumpkit download token\0".utf8)
        input.append(contentsOf: sha256.utf8)
        input.append(0)
        input.append(contentsOf: name.utf8)
        var b = Array(SHA256.hash(data: input).prefix(16))
        b[6] = (b[6] & 0x0F) | 0x40  // version 4
        b[8] = (b[8] & 0x3F) | 0x80  // RFC 4122 variant
        let digits: StaticString = "0123456789abcdef"
        return String(unsafeUninitializedCapacity: 36) { out in
            var n = 0
            for (i, byte) in b.enumerated() {
                if i == 4 || i == 6 || i == 8 || i == 10 {
                    out[n] = UInt8(ascii: "-")
                    n += 1
                }
                out[n] = digits.utf8Start[Int(byte >> 4)]
                out[n + 1] = digits.utf8Start[Int(byte & 0xF)]
                n += 2
            }
            return n
        }
    }
}
