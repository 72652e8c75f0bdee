import JSONStream

/// Paths as bytes whose bytewise order is the paths' order key by key, each key in the database's
/// order (`DatabaseKeyOrder`: 32-bit integers numerically, then the rest by bytes), so that sorting
/// keys sorts paths (a path before the paths below it) and a path's key is a prefix of its
/// descendants' keys.
///
/// Each key is `0x01` and its integer value plus 2^31 as four big-endian bytes, or `0x02` and its
/// UTF-8; a `0x00` byte in either is written `0x00 0xFF`, and the key ends with `0x00 0x01`. Two zero
/// bytes never occur, so `separator` sorts before anything that can follow a path.
package enum PathKey {
    /// What may follow a path's key to order entries at one path (`0x00 0x00`).
    static let separator: [UInt8] = [0, 0]

    /// Appends the key of `path` to `bytes`.
    static func append(_ path: [String], to bytes: inout [UInt8]) {
        func add(_ b: UInt8) {
            bytes.append(b)
            if b == 0 { bytes.append(0xFF) }
        }
        for segment in path {
            var s = segment
            s.withUTF8 { utf8 in
                if let n = DatabaseKeyOrder.integerValue(utf8) {
                    bytes.append(1)
                    let biased = UInt32(bitPattern: n) ^ 0x8000_0000
                    for shift in stride(from: 24, through: 0, by: -8) { add(UInt8(truncatingIfNeeded: biased >> UInt32(shift))) }
                } else {
                    bytes.append(2)
                    for b in utf8 { add(b) }
                }
            }
            bytes.append(0)
            bytes.append(1)
        }
    }

    /// The key of `path`.
    package static func of(_ path: [String]) -> [UInt8] {
        var bytes: [UInt8] = []
        append(path, to: &bytes)
        return bytes
    }

    /// The path a key was made from.
    package static func path(_ key: some Collection<UInt8>) -> [String] {
        var path: [String] = []
        var segment: [UInt8] = []
        var escape = false
        var start = true
        for b in key {
            if start {
                start = false
                segment.removeAll(keepingCapacity: true)
                segment.append(b)  // the kind of key
            } else if escape {
                escape = false
                if b == 1 {
                    path.append(text(segment))
                    start = true
                } else {
                    segment.append(0)
                }
            } else if b == 0 {
                escape = true
            } else {
                segment.append(b)
            }
        }
        return path
    }

    /// A key's text from its kind byte and unescaped bytes.
    private static func text(_ segment: [UInt8]) -> String {
        guard segment.first == 1, segment.count == 5 else { return String(decoding: segment.dropFirst(), as: UTF8.self) }
        let biased = segment[1...].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        return String(Int32(bitPattern: biased ^ 0x8000_0000))
    }

    /// Whether the path of key `a` is the path of key `b` or above it.
    static func isPrefix(_ a: ArraySlice<UInt8>, of b: ArraySlice<UInt8>) -> Bool {
        a.count <= b.count && a.elementsEqual(b.prefix(a.count))
    }
}
