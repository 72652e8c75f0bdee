import JSONStream

/// Sets a missing time field from the record's push-ID key (its first 8 characters encode the
/// creation time in milliseconds): `backfill: { field: createdAt }`, `unit: seconds` for seconds.
///
/// A key that is not a push ID is a bad value. Lossy: the reverse cannot tell a backfilled time
/// from a real one.
public struct BackfillOperation: PlanOperation {
    public static let name = "backfill"
    public let location: PlanLocation
    /// The field set when missing.
    public let field: FieldPath
    /// Whether the time is written in seconds instead of milliseconds.
    public let inSeconds: Bool

    init(_ options: PlanNode, _ context: OperationContext) throws(PlanError) {
        let d = context.decoder
        let o = try d.options(options, operation: Self.name, allowed: ["field", "unit"], required: ["field"])
        field = try d.field(o["field"]!, "'field'")
        inSeconds = try o["unit"].map { node throws(PlanError) in try d.choice(node, "'unit'", ["milliseconds", "seconds"]) } == "seconds"
        location = context.location
    }

    public var description: String { "backfill \(field) from the push ID (\(inSeconds ? "seconds" : "milliseconds"))" }
    public var writtenFields: [FieldPath] { [field] }
    public var inversion: Inversion { .lossy("it adds times the reverse cannot tell from real ones") }

    public func apply(to edit: inout RecordEdit) throws(MigrationError) -> Bool {
        guard edit.field(field) == nil else { return false }
        let key = edit.path.last ?? ""
        guard let ms = PushID.timestamp(key) else {
            try edit.reject(
                at: field, value: .string(key), reason: "the key '\(key)' is not a push ID, so it holds no creation time", removing: [])
            return false
        }
        let time = ExactDecimal(ms)
        return try edit.set(field, .number((inSeconds ? time.shifted(by: -3) : time).jsonNumber))
    }
}
