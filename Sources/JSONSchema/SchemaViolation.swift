/// One failed assertion: what `JSONSchema.validate` reports for an invalid instance.
public struct SchemaViolation: Hashable, Sendable {
    /// The keyword that failed (`required`, `maxLength`, `additionalProperties`, ...).
    public var keyword: String
    /// The JSON Pointer of the failing value, after the validated instance's own prefix.
    public var pointer: String
    /// Where the keyword is written in the schema: `#/properties/name/minLength` in the compiled
    /// document, the referenced document's URI before the `#` in others (ajv's `schemaPath`).
    public var schemaPath: String
    /// One line saying what is wrong.
    public var message: String

    public init(keyword: String, pointer: String, schemaPath: String, message: String) {
        self.keyword = keyword
        self.pointer = pointer
        self.schemaPath = schemaPath
        self.message = message
    }
}
