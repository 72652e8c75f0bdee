import Foundation
import JSONStream

/// JSON Schema's notion of equal instances, used by `const`, `enum` and `uniqueItems`: `JSONValue`'s
/// `isEquivalent(to:)` (numbers equal when mathematically equal, objects with the same members in
/// any order, strings by code points), also between a value on a tape and a `JSONValue`.
enum SchemaEquality {
    /// Whether the value at `i` in `tape` equals `b`.
    static func equal(_ i: Int, in tape: JSONTape, _ b: JSONValue) -> Bool {
        switch (tape[i].kind, b) {
        case (.null, .null): return true
        case (.false, .bool(let y)): return !y
        case (.true, .bool(let y)): return y
        case (.string, .string(var y)):
            let x = tape.bytes(i)
            return y.withUTF8 { $0.count == x.count && ($0.count == 0 || memcmp($0.baseAddress!, x.baseAddress!, x.count) == 0) }
        case (.number, .number), (.array, .array), (.object, .object): return tape.value(at: i).isEquivalent(to: b)
        default: return false
        }
    }

    /// The indices of the first two equal elements of `items`, if any.
    static func firstDuplicate(in items: [JSONValue]) -> (Int, Int)? {
        if items.count <= 16 {
            for i in items.indices {
                for j in (i + 1)..<items.count where items[i].isEquivalent(to: items[j]) { return (i, j) }
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
        static func == (a: Key, b: Key) -> Bool { a.value.isEquivalent(to: b.value) }
        func hash(into hasher: inout Hasher) { value.hashEquivalence(into: &hasher) }
    }
}
