/// Removes fields: `drop: [legacy, meta/tmp]`. Lossy.
public struct DropOperation: PlanOperation {
    public static let name = "drop"
    public let location: PlanLocation
    /// The fields removed.
    public let fields: [FieldPath]

    init(_ options: PlanNode, _ context: OperationContext) throws(PlanError) {
        fields = try context.decoder.fields(options, "the fields of 'drop'")
        location = context.location
    }

    public var description: String { "drop \(fields.map(\.description).joined(separator: ", "))" }
    public var writtenFields: [FieldPath] { fields }
    public var inversion: Inversion { .lossy("it removes fields") }

    public func apply(to edit: inout RecordEdit) throws(MigrationError) -> Bool {
        var changed = false
        for field in fields where edit.remove(field) != nil { changed = true }
        return changed
    }
}
