/// Why a schema could not be compiled; invalid *instances* never throw, they produce violations.
public struct JSONSchemaError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public enum Kind: Sendable, Equatable {
        /// A keyword has the wrong type or value (`"minLength": -1`, `"type": 1`, a bad `pattern`).
        case invalidKeyword
        /// A `$ref`/`$dynamicRef` target could not be found or loaded.
        case unresolvableReference
        /// `$schema` names an unknown or unsupported dialect, or a required vocabulary is unknown.
        case unsupportedDialect
        /// The resolver failed to load or parse a referenced document.
        case resolverFailed
    }

    public var kind: Kind
    public var message: String
    /// The URI of the schema document the problem is in.
    public var document: String
    /// JSON Pointer of the offending keyword inside that document.
    public var pointer: String

    public init(kind: Kind, message: String, document: String, pointer: String) {
        self.kind = kind
        self.message = message
        self.document = document
        self.pointer = pointer
    }

    /// `<document>#<pointer>: <message>`.
    public var description: String { "\(document)#\(pointer): \(message)" }
}
