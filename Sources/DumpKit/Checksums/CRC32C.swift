/// CRC-32C (Castagnoli), the checksum Cloud Storage reports for objects (`crc32c`, base64 of the
/// big-endian value).
public struct CRC32C: Sendable {
    private static let tables: [[UInt32]] = {
        var t = [[UInt32]](repeating: [UInt32](repeating: 0, count: 256), count: 8)
        for i in 0..<256 {
            var c = UInt32(i)
            for _ in 0..<8 { c = c & 1 != 0 ? (c >> 1) ^ 0x82F6_3B78 : c >> 1 }
            t[0][i] = c
        }
        for i in 0..<256 {
            for k in 1..<8 { t[k][i] = (t[k - 1][i] >> 8) ^ t[0][Int(t[k - 1][i] & 0xFF)] }
        }
        return t
    }()

    private var crc: UInt32 = 0xFFFF_FFFF

    public init() {}

    /// Adds bytes to the checksum (slicing-by-8).
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        var c = crc
        var i = 0
        let n = bytes.count
        Self.tables.withUnsafeBufferPointer { t in
            while i + 8 <= n {
                let lo = UInt32(bytes[i]) | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2]) << 16 | UInt32(bytes[i + 3]) << 24
                let x = c ^ lo
                c = t[7][Int(x & 0xFF)] ^ t[6][Int((x >> 8) & 0xFF)] ^ t[5][Int((x >> 16) & 0xFF)] ^ t[4][Int(x >> 24)]
                    ^ t[3][Int(bytes[i + 4])] ^ t[2][Int(bytes[i + 5])] ^ t[1][Int(bytes[i + 6])] ^ t[0][Int(bytes[i + 7])]
                i += 8
            }
            while i < n {
                c = t[0][Int((c ^ UInt32(bytes[i])) & 0xFF)] ^ (c >> 8)
                i += 1
            }
        }
        crc = c
    }

    /// The checksum of everything added so far.
    public var value: UInt32 { crc ^ 0xFFFF_FFFF }

    /// The checksum as Cloud Storage shows it: base64 of the 4 big-endian bytes.
    public var base64: String {
        let v = value
        return Base64.encode([UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)])
    }
}
