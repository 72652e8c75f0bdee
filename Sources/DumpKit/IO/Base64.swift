import Foundation

/// Standard base64 (RFC 4648, with padding), as buckets report md5 and crc32c.
public enum Base64 {
    /// Encodes bytes.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        Data(bytes).base64EncodedString()
    }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// `prefix` (a data URI's header, say) followed by the base64 of `bytes`, encoded straight into
    /// the string's storage: a large file is held as its bytes and its text, with no copy between.
    public static func encode(_ bytes: UnsafeRawBufferPointer, after prefix: String) -> String {
        var prefix = prefix
        let head = prefix.utf8.count
        let n = bytes.count
        return String(unsafeUninitializedCapacity: head + (n + 2) / 3 * 4) { out in
            prefix.withUTF8 { p in
                for i in 0..<head { out[i] = p[i] }
            }
            alphabet.withUnsafeBufferPointer { table in
                var o = head
                var i = 0
                while i + 3 <= n {
                    let v = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
                    out[o] = table[Int(v >> 18)]
                    out[o + 1] = table[Int((v >> 12) & 63)]
                    out[o + 2] = table[Int((v >> 6) & 63)]
                    out[o + 3] = table[Int(v & 63)]
                    i += 3
                    o += 4
                }
                if n - i == 1 {
                    let v = UInt32(bytes[i]) << 16
                    out[o] = table[Int(v >> 18)]
                    out[o + 1] = table[Int((v >> 12) & 63)]
                    out[o + 2] = UInt8(ascii: "=")
                    out[o + 3] = UInt8(ascii: "=")
                } else if n - i == 2 {
                    let v = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8
                    out[o] = table[Int(v >> 18)]
                    out[o + 1] = table[Int((v >> 12) & 63)]
                    out[o + 2] = table[Int((v >> 6) & 63)]
                    out[o + 3] = UInt8(ascii: "=")
                }
            }
            return head + (n + 2) / 3 * 4
        }
    }
}
