import Foundation
import JSONStream

/// JSON Schema's notion of equal instances, used by `const`, `enum` and `uniqueItems`.
///
/// Unlike `JSONValue`'s `==` (which compares number text and member order), numbers are equal when
/// they are mathematically equal (`1.0 == 1`, `1e2 == 100`, exactly, for any size) and objects are
/// equal when they have the same members in any order.
enum SchemaEquality {
    /// Whether two instances are equal under JSON Schema rules.
    static func equal(_ a: JSONValue, _ b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        case (.string(let x), .string(let y)): return sameScalars(x, y)
        case (.number(let x), .number(let y)):
            if x.text == y.text { return true }
            guard let dx = ExactDecimal(x.text), let dy = ExactDecimal(y.text) else { return false }
            return dx == dy
        case (.array(let x), .array(let y)):
            guard x.count == y.count else { return false }
            for (u, v) in zip(x, y) where !equal(u, v) { return false }
            return true
        case (.object(let x), .object(let y)):
            guard x.count == y.count else { return false }
            for m in x.members {
                guard let other = y[m.key], equal(m.value, other) else { return false }
            }
            return true
        default:
            return false
        }
    }

    /// Whether the value at `i` in `tape` equals `b` (as `equal` compares them).
    static func equal(_ i: Int, in tape: JSONTape, _ b: JSONValue) -> Bool {
        switch (tape[i].kind, b) {
        case (.null, .null): return true
        case (.false, .bool(let y)): return !y
        case (.true, .bool(let y)): return y
        case (.string, .string(var y)):
            let x = tape.bytes(i)
            return y.withUTF8 { $0.count == x.count && ($0.count == 0 || memcmp($0.baseAddress!, x.baseAddress!, x.count) == 0) }
        case (.number, .number): return equal(tape.value(at: i), b)
        case (.array, .array), (.object, .object): return equal(tape.value(at: i), b)
        default: return false
        }
    }

    /// Code-point equality: Swift's `==` on strings treats canonically equivalent strings (`"é"`
    /// and `"e\u{301}"`) as equal, JSON Schema does not.
    static func sameScalars(_ a: String, _ b: String) -> Bool {
        a.utf8.count == b.utf8.count && a.utf8.elementsEqual(b.utf8)
    }

    /// Hashes consistently with `equal`: numbers by exact value, objects independent of member order.
    static func hash(_ value: JSONValue, into hasher: inout Hasher) {
        switch value {
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
            hasher.combine(s)
        case .array(let a):
            hasher.combine(4 as UInt8)
            hasher.combine(a.count)
            for e in a { hash(e, into: &hasher) }
        case .object(let o):
            hasher.combine(5 as UInt8)
            hasher.combine(o.count)
            // Order-independent: the sum of the members' own hashes.
            var sum = 0
            for m in o.members {
                var h = Hasher()
                h.combine(m.key)
                hash(m.value, into: &h)
                sum = sum &+ h.finalize()
            }
            hasher.combine(sum)
        }
    }

    /// The indices of the first two equal elements of `items`, if any.
    static func firstDuplicate(in items: [JSONValue]) -> (Int, Int)? {
        if items.count <= 16 {
            for i in items.indices {
                for j in (i + 1)..<items.count where equal(items[i], items[j]) { return (i, j) }
            }
            return nil
        }
        var seen: [Key: Int] = [:]
        seen.reserveCapacity(items.count)
        for (j, item) in items.enumerated() {
            if let i = seen.updateValue(j, forKey: Key(value: item)) { return (i, j) }
        }
        return nil
    }

    /// A dictionary key with JSON Schema equality.
    private struct Key: Hashable {
        let value: JSONValue
        static func == (a: Key, b: Key) -> Bool { SchemaEquality.equal(a.value, b.value) }
        func hash(into hasher: inout Hasher) { SchemaEquality.hash(value, into: &hasher) }
    }
}
