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
    func field(_ path: FieldPath) -> JSONValue? {
        let keys = path.segments
        // One key into an object, the common case: a single scan of the members.
        if keys.count == 1, case .object(let o) = self {
            guard let i = o.index(of: keys[0]) else { return nil }
            return o.members[i].value
        }
        var current = self
        for key in keys {
            if case .object(let o) = current {
                guard let i = o.index(of: key) else { return nil }
                current = o.members[i].value
            } else {
                guard let next = current[segment: key] else { return nil }
                current = next
            }
        }
        return current
    }

    /// Runs `body` on the members of this object in place: the payload is taken out of the enum
    /// first, so a uniquely referenced object is changed without being copied. `nil` when this is
    /// not an object (and `body` did not run).
    @inline(__always)
    mutating func mutateObject<R, E: Error>(_ body: (inout JSONObject) throws(E) -> R) throws(E) -> R? {
        guard case .object(var object) = self else { return nil }
        self = .null
        defer { self = .object(object) }
        return try body(&object)
    }

    /// Sets a field, replacing it in place or appending it (and any missing parent objects) at the end.
    mutating func setField(_ path: FieldPath, _ newValue: JSONValue) throws(FieldPathConflict) {
        try setField(path.segments, from: 0, newValue)
    }

    private mutating func setField(_ keys: [String], from depth: Int, _ newValue: JSONValue) throws(FieldPathConflict) {
        guard case .object = self else { throw FieldPathConflict(at: Array(keys[..<depth]), found: self) }
        _ = try mutateObject { (object: inout JSONObject) throws(FieldPathConflict) in
            let key = keys[depth]
            if depth == keys.count - 1 {
                object[key] = newValue
            } else if let i = object.index(of: key) {
                try object.members[i].value.setField(keys, from: depth + 1, newValue)
            } else {
                var child = JSONValue.object(JSONObject())
                try child.setField(keys, from: depth + 1, newValue)
                object.members.append(JSONObject.Member(key: key, value: child))
            }
        }
    }

    /// Removes a field and returns it; parent objects it leaves empty are removed too (the database
    /// has no empty objects).
    @discardableResult
    mutating func removeField(_ path: FieldPath) -> JSONValue? { removeField(path.segments, from: 0) }

    private mutating func removeField(_ keys: [String], from depth: Int) -> JSONValue? {
        guard depth < keys.count else { return nil }
        return mutateObject { object -> JSONValue? in
            guard let i = object.index(of: keys[depth]) else { return nil }
            if depth == keys.count - 1 { return object.members.remove(at: i).value }
            let removed = object.members[i].value.removeField(keys, from: depth + 1)
            // An object child left empty goes (even one that was empty already, as before).
            if case .object(let child) = object.members[i].value, child.isEmpty { object.members.remove(at: i) }
            return removed
        } ?? nil
    }

    /// Moves a field to another name and returns whether it was there: within the same parent object
    /// the key keeps its position, otherwise the value is appended at the end of its new parent.
    mutating func renameField(_ from: FieldPath, to: FieldPath) throws(FieldPathConflict) -> Bool {
        if from.segments.dropLast() == to.segments.dropLast(), renameInPlace(from.segments, from: 0, to: to.segments.last!) { return true }
        // All or nothing: work on a copy, kept only when both the removal and the setting succeed.
        var changed = self
        guard let value = changed.removeField(from) else { return false }
        try changed.setField(to, value)
        self = changed
        return true
    }

    private mutating func renameInPlace(_ keys: [String], from depth: Int, to newKey: String) -> Bool {
        guard depth < keys.count else { return false }
        return mutateObject { object -> Bool in
            guard let i = object.index(of: keys[depth]) else { return false }
            if depth == keys.count - 1 {
                guard object.index(of: newKey) == nil else { return false }
                object.members[i].key = newKey
                return true
            }
            return object.members[i].value.renameInPlace(keys, from: depth + 1, to: newKey)
        } ?? false
    }
}

extension String {
    /// `a` or `an` for a type name in messages.
    var article: String { first.map { "aeiou".contains($0) } == true ? "an" : "a" }
}
