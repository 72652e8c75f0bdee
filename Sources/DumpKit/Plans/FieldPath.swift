import JSONStream

/// A field inside a record: keys separated by `/` (`meta/created`); `~1` and `~0` stand for a `/`
/// or `~` inside a key, as in JSON Pointer.
public struct FieldPath: Hashable, Sendable, CustomStringConvertible {
    /// The unescaped keys from the record down to the field.
    public let segments: [String]

    /// Parses `a/b/c`; `nil` when the text is empty or has an empty key.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false).map { JSONPointer.unescape(String($0)) }
        guard !text.isEmpty, !parts.contains(where: \.isEmpty) else { return nil }
        segments = parts
    }

    /// A path of unescaped keys (at least one).
    public init(segments: [String]) { self.segments = segments }

    public var description: String { segments.map(JSONPointer.escape).joined(separator: "/") }

    /// The field as a JSON Pointer relative to its record (`/meta/created`).
    public var pointer: String { JSONPointer.string(segments) }

    /// Whether one of the two paths contains the other (`meta` and `meta/created`).
    public func overlaps(_ other: FieldPath) -> Bool {
        let n = min(segments.count, other.segments.count)
        return Array(segments.prefix(n)) == Array(other.segments.prefix(n))
    }

    /// The path with `index` appended (an array element).
    func appending(_ key: String) -> FieldPath { FieldPath(segments: segments + [key]) }
}

/// Why a field cannot be written: a value on its way is not an object.
struct FieldPathConflict: Error {
    /// The keys from the record to the value in the way (empty: the record itself).
    let at: [String]
    /// The value in the way.
    let found: JSONValue

    /// `'meta' is a string, not an object`.
    var reason: String {
        let place = at.isEmpty ? "the record" : "'\(FieldPath(segments: at))'"
        return "\(place) is \(found.typeName.article) \(found.typeName), not an object"
    }
}

extension JSONValue {
    /// The value of a field; `nil` when it or an object on its way is missing.
    func field(_ path: FieldPath) -> JSONValue? { value(at: path.segments) }

    /// Sets a field, replacing it in place or appending it (and any missing parent objects) at the end.
    mutating func setField(_ path: FieldPath, _ newValue: JSONValue) throws(FieldPathConflict) {
        try setField(path.segments[...], newValue, walked: [])
    }

    private mutating func setField(_ keys: ArraySlice<String>, _ newValue: JSONValue, walked: [String]) throws(FieldPathConflict) {
        guard case .object(var object) = self else { throw FieldPathConflict(at: walked, found: self) }
        let key = keys.first!
        if keys.count == 1 {
            object[key] = newValue
        } else {
            var child = object[key] ?? .object(JSONObject())
            try child.setField(keys.dropFirst(), newValue, walked: walked + [key])
            object[key] = child
        }
        self = .object(object)
    }

    /// Removes a field and returns it; parent objects it leaves empty are removed too (the database
    /// has no empty objects).
    @discardableResult
    mutating func removeField(_ path: FieldPath) -> JSONValue? { removeField(path.segments[...]) }

    private mutating func removeField(_ keys: ArraySlice<String>) -> JSONValue? {
        guard case .object(var object) = self, let key = keys.first, var child = object[key] else { return nil }
        let removed: JSONValue?
        if keys.count == 1 {
            removed = object.removeValue(forKey: key)
        } else {
            removed = child.removeField(keys.dropFirst())
            if case .object(let o) = child, o.isEmpty { object.removeValue(forKey: key) } else { object[key] = child }
        }
        self = .object(object)
        return removed
    }

    /// Moves a field to another name and returns whether it was there: within the same parent object
    /// the key keeps its position, otherwise the value is appended at the end of its new parent.
    mutating func renameField(_ from: FieldPath, to: FieldPath) throws(FieldPathConflict) -> Bool {
        if from.segments.dropLast() == to.segments.dropLast(), renameInPlace(from.segments[...], to: to.segments.last!) { return true }
        var changed = self
        guard let value = changed.removeField(from) else { return false }
        try changed.setField(to, value)
        self = changed
        return true
    }

    private mutating func renameInPlace(_ keys: ArraySlice<String>, to newKey: String) -> Bool {
        guard case .object(var object) = self, let key = keys.first else { return false }
        if keys.count == 1 {
            guard let i = object.index(of: key), object.index(of: newKey) == nil else { return false }
            object.members[i].key = newKey
        } else {
            guard var child = object[key], child.renameInPlace(keys.dropFirst(), to: newKey) else { return false }
            object[key] = child
        }
        self = .object(object)
        return true
    }
}

extension String {
    /// `a` or `an` for a type name in messages.
    var article: String { first.map { "aeiou".contains($0) } == true ? "an" : "a" }
}
