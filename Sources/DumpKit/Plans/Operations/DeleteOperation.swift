/// Deletes the whole record (meant for steps with a `where`): `- delete`. Lossy.
public struct DeleteOperation: PlanOperation {
    public static let name = "delete"
    public let location: PlanLocation

    init(_ options: PlanNode?, _ context: OperationContext) throws(PlanError) {
        if let options {
            _ = try context.decoder.options(options, operation: Self.name, allowed: [], required: [])
        }
        location = context.location
    }

    public var description: String { "delete the record" }
    public var writtenFields: [FieldPath] { [] }
    public var inversion: Inversion { .lossy("it deletes records") }

    public func apply(to edit: inout RecordEdit) throws(MigrationError) -> Bool {
        edit.delete()
        return true
    }
}
