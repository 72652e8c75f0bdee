/// A JSON syntax or limit error, with where it happened: byte offset, line:column and JSON Pointer.
public struct JSONError: Error, CustomStringConvertible, Sendable, Equatable {
    /// What went wrong.
    public enum Kind: Sendable, Equatable {
        case emptyInput
        case unexpectedEnd
        case unexpectedCharacter
        case invalidUTF8
        case invalidEscape
        case loneSurrogate
        case controlCharacter
        case trailingComma
        case invalidNumber
        case trailingData
        case depthLimit
        case sizeLimit
        case typeMismatch
    }

    public var kind: Kind
    /// A one-line explanation for people.
    public var message: String
    /// Byte offset of the error in the (decompressed) input, from 0.
    public var offset: Int64
    /// 1-based line.
    public var line: Int
    /// 1-based column, in bytes.
    public var column: Int
    /// JSON Pointer of the value being read.
    public var pointer: String
    /// The input's name (a file path), when the reader was given one.
    public var sourceName: String?

    public init(kind: Kind, message: String, offset: Int64, line: Int, column: Int, pointer: String, sourceName: String? = nil) {
        self.kind = kind
        self.message = message
        self.offset = offset
        self.line = line
        self.column = column
        self.pointer = pointer
        self.sourceName = sourceName
    }

    public var description: String {
        let place = "\(line):\(column) (byte \(offset))" + (pointer.isEmpty ? "" : " at \(pointer)")
        if let sourceName { return "\(sourceName):\(place): \(message)" }
        return "\(place): \(message)"
    }
}
