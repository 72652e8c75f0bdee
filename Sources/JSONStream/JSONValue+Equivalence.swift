#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension JSONValue {
    /// Whether two values hold the same data: object members in any order, numbers by exact
    /// decimal value (`1.50` equals `1.5`, `1e2` equals `100`, for any size), strings by their
    /// code points (not Swift's canonical equivalence: `"é"` and `"e\u{301}"` differ, as they do to
    /// the database and to JSON Schema). Unlike `==`, which compares number text and member order.
    public func isEquivalent(to other: JSONValue) -> Bool {
        switch (self, other) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.string(let a), .string(let b)): return Self.sameCodePoints(a, b)
        case (.number(let a), .number(let b)):
            if a.text == b.text { return true }
            guard let x = ExactDecimal(a.text), let y = ExactDecimal(b.text) else { return false }
            return x == y
        case (.array(let a), .array(let b)):
            guard a.count == b.count else { return false }
            for (u, v) in zip(a, b) where !u.isEquivalent(to: v) { return false }
            return true
        case (.object(let a), .object(let b)):
            guard a.count == b.count else { return false }
            for m in a.members {
                guard let value = b[m.key], m.value.isEquivalent(to: value) else { return false }
            }
            return true
        default: return false
        }
    }

    /// Whether two strings have the same code points: their UTF-8 bytes compared with `memcmp`
    /// (Swift's `==` is canonical equivalence, and comparing the UTF-8 views element by element is
    /// slow on the hot path of plans' `map` and `where`).
    public static func sameCodePoints(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        var a = a, b = b
        return a.withUTF8 { x in b.withUTF8 { y in x.isEmpty || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0 } }
    }

    /// Hashes consistently with `isEquivalent(to:)`: numbers by exact value, objects independent of
    /// member order.
    public func hashEquivalence(into hasher: inout Hasher) {
        switch self {
        case .null:
            hasher.combine(0 as UInt8)
        case .bool(let b):
            hasher.combine(1 as UInt8)
            hasher.combine(b)
        case .number(let n):
            hasher.combine(2 as UInt8)
            if let d = ExactDecimal(n.text) { hasher.combine(d) } else { hasher.combine(n.text) }
        case .string(let s):
            hasher.combine(3 as UInt8)
            hasher.combine(s.utf8.count)
            for byte in s.utf8 { hasher.combine(byte) }
        case .array(let a):
            hasher.combine(4 as UInt8)
            hasher.combine(a.count)
            for e in a { e.hashEquivalence(into: &hasher) }
        case .object(let o):
            hasher.combine(5 as UInt8)
            hasher.combine(o.count)
            // Order-independent: the sum of the members' own hashes.
            var sum = 0
            for m in o.members {
                var h = Hasher()
                h.combine(m.key)
                m.value.hashEquivalence(into: &h)
                sum = sum &+ h.finalize()
            }
            hasher.combine(sum)
        }
    }
}
