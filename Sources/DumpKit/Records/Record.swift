import JSONStream

/// One subtree of a dump that a pattern matched: its path, the pattern's captures and its value.
public struct Record: Hashable, Sendable {
    /// The unescaped keys from the root to this record.
    public var path: [String]
    /// Values captured by `{name}` segments of the pattern that matched.
    public var captures: [String: String]
    /// The record's value; `nil` deletes the record from the output.
    public var value: JSONValue?
    public init(path: [String], captures: [String: String] = [:], value: JSONValue?) {
        self.path = path
        self.captures = captures
        self.value = value
    }

    /// The path as an RFC 6901 JSON Pointer.
    public var pointer: String { JSONPointer.string(path) }
}
