import JSONStream

/// One subtree of a dump that a pattern matched: its path, the pattern's captures and its value.
public struct Record: Hashable, Sendable {
    /// The unescaped keys from the root to this record.
    public var path: [String]
    /// Values captured by `{name}` segments of the pattern that matched.
    public var captures: [String: String]
    /// The record's value; `nil` deletes the record from the output.
    public var value: JSONValue?
    /// Files the reader already decoded from strings of this record, by the string's path (from the
    /// root); each such string is empty in `value`, so its text never became a `String`.
    public var files: [[String]: EmbeddedFile]

    public init(path: [String], captures: [String: String] = [:], value: JSONValue?, files: [[String]: EmbeddedFile] = [:]) {
        self.path = path
        self.captures = captures
        self.value = value
        self.files = files
    }

    /// The path as an RFC 6901 JSON Pointer.
    public var pointer: String { JSONPointer.string(path) }
}
