/// A fully materialised JSON value that keeps numbers as their exact text and object keys in order.
public enum JSONValue: Hashable, Sendable {
    case null
    case bool(Bool)
    /// A number kept as the exact text it was written with (`1.50`, `-0`, `1e400`).
    case number(JSONNumber)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)
}

/// A JSON number stored as its literal text, so it round-trips byte for byte.
public struct JSONNumber: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The literal text, e.g. `"1480000000000"` or `"1.50"`.
    public var text: String

    /// Wraps number text that the caller has already checked against the JSON grammar.
    public init(text: String) { self.text = text }
    public init(stringLiteral value: String) { self.text = value }
    /// The shortest text that reads back as `value`; integral values print without a fraction.
    public init(_ value: Double) {
        if value == value.rounded(), abs(value) < 1e15 {
            self.text = String(Int64(value))
        } else {
            self.text = "\(value)"
        }
    }
    public init<I: BinaryInteger>(_ value: I) { self.text = String(value) }

    public var description: String { text }
    /// The value as a `Double` (may round or overflow to infinity for extreme texts).
    public var doubleValue: Double { Double(text) ?? .nan }
    /// The value as an `Int64` when the text is an integer that fits, else `nil`.
    public var int64Value: Int64? {
        if let i = Int64(text) { return i }
        // Accept integral forms such as `1.0` or `1e3` when they are exactly representable.
        let d = doubleValue
        guard d.isFinite, d == d.rounded(), abs(d) <= 9_007_199_254_740_992 else { return nil }
        return Int64(d)
    }
    /// Whether the text has no fraction or exponent.
    public var isIntegerLiteral: Bool { !text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) }
}

/// An ordered list of object members; lookups are linear, which is fastest for record-sized objects.
public struct JSONObject: Hashable, Sendable, Sequence, ExpressibleByDictionaryLiteral {
    public struct Member: Hashable, Sendable {
        public var key: String
        public var value: JSONValue
        public init(key: String, value: JSONValue) {
            self.key = key
            self.value = value
        }
    }

    public var members: [Member]

    public init() { members = [] }
    public init(_ members: [Member]) { self.members = members }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        members = elements.map { Member(key: $0.0, value: $0.1) }
    }

    public var count: Int { members.count }
    public var isEmpty: Bool { members.isEmpty }
    public var keys: [String] { members.map(\.key) }
    public func makeIterator() -> IndexingIterator<[Member]> { members.makeIterator() }

    /// The index of `key`, if present.
    public func index(of key: String) -> Int? { members.firstIndex { $0.key == key } }

    /// Reads, replaces (keeping the position), appends, or removes (`nil`) a member.
    public subscript(key: String) -> JSONValue? {
        get { index(of: key).map { members[$0].value } }
        set {
            if let i = index(of: key) {
                if let newValue { members[i].value = newValue } else { members.remove(at: i) }
            } else if let newValue {
                members.append(Member(key: key, value: newValue))
            }
        }
    }

    /// Removes and returns the member named `key`.
    @discardableResult
    public mutating func removeValue(forKey key: String) -> JSONValue? {
        guard let i = index(of: key) else { return nil }
        return members.remove(at: i).value
    }

    /// The members sorted in the Realtime Database's child order (see `DatabaseKeyOrder`).
    public func sortedByDatabaseOrder() -> JSONObject {
        JSONObject(members.sorted { DatabaseKeyOrder.less($0.key, $1.key) })
    }
}

extension JSONValue {
    /// The object members, if this is an object.
    public var objectValue: JSONObject? { if case .object(let o) = self { return o } else { return nil } }
    /// The elements, if this is an array.
    public var arrayValue: [JSONValue]? { if case .array(let a) = self { return a } else { return nil } }
    /// The string, if this is a string.
    public var stringValue: String? { if case .string(let s) = self { return s } else { return nil } }
    /// The number, if this is a number.
    public var numberValue: JSONNumber? { if case .number(let n) = self { return n } else { return nil } }
    /// The boolean, if this is a boolean.
    public var boolValue: Bool? { if case .bool(let b) = self { return b } else { return nil } }
    /// Whether this is `null`.
    public var isNull: Bool { if case .null = self { return true } else { return false } }

    /// A short name of the value's type, as JSON Schema spells it.
    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .number(let n): return n.isIntegerLiteral ? "integer" : "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }

    /// Member or element access by one JSON Pointer segment.
    public subscript(segment segment: String) -> JSONValue? {
        switch self {
        case .object(let o): return o[segment]
        case .array(let a):
            guard let i = Int(segment), i >= 0, i < a.count, segment == String(i) else { return nil }
            return a[i]
        default: return nil
        }
    }

    /// The value at a sequence of segments below this one.
    public func value(at segments: some Sequence<String>) -> JSONValue? {
        var current: JSONValue? = self
        for s in segments {
            guard let c = current else { return nil }
            current = c[segment: s]
        }
        return current
    }
}
