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
    /// root); each such string is `filePlaceholder` in `value`, so its text never became a `String`.
    public var files: [[String]: EmbeddedFile]

    /// What stands in `value` for a string decoded into `files`: made once per process with 128
    /// random bits, so no string of a dump is taken for it.
    public static let filePlaceholder: String = {
        var random = SystemRandomNumberGenerator()
        return "\u{0}dumpkit-decoded-file-" + String(random.next() as UInt64, radix: 16) + String(random.next() as UInt64, radix: 16)
    }()

    public init(path: [String], captures: [String: String] = [:], value: JSONValue?, files: [[String]: EmbeddedFile] = [:]) {
        self.path = path
        self.captures = captures
        self.value = value
        self.files = files
    }

    /// The path as an RFC 6901 JSON Pointer.
    public var pointer: String { JSONPointer.string(path) }
}
