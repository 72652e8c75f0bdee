import JSONStream

/// Sets fields that are missing: `default: { completed: false, meta/tags: [] }`.
///
/// New fields are appended at the end of their object. Lossy: the reverse cannot tell a default from
/// a value the data had.
public struct DefaultOperation: PlanOperation {
    public static let name = "default"
    public let location: PlanLocation
    /// Fields and their default values, in the order written.
    public let values: [(field: FieldPath, value: JSONValue)]

    init(_ options: PlanNode, _ context: OperationContext) throws(PlanError) {
        let d = context.decoder
        var values: [(field: FieldPath, value: JSONValue)] = []
        for m in try d.mapping(options, "the fields of 'default' (field: value)") {
            let value = m.value.jsonValue
            if value.isNull { throw d.error(m.value.location, "the default of '\(m.key)' is null, which the database cannot hold") }
            values.append((try d.field(m.keyNode, "a field"), value))
        }
        if values.isEmpty { throw d.error(options.location, "'default' needs at least one 'field: value' pair") }
        self.values = values
        location = context.location
    }

    public var description: String { "default " + values.map { "\($0.field) = \($0.value.preview(limit: 30))" }.joined(separator: ", ") }
    public var writtenFields: [FieldPath] { values.map(\.field) }
    public var inversion: Inversion { .lossy("it adds values the reverse cannot tell from real ones") }

    public func apply(to edit: inout RecordEdit) throws(MigrationError) -> Bool {
        var changed = false
        for (field, value) in values where edit.field(field) == nil {
            if try edit.set(field, value) { changed = true }
            if edit.value == nil { break }
        }
        return changed
    }
}
