/// What a migration does with a value an operation cannot migrate (a date that does not parse, a
/// value missing from a map's table).
public enum OnErrorPolicy: String, Sendable, CaseIterable {
    /// Stop: `PlanRunner.apply` throws a `MigrationError` with the value's JSON Pointer.
    case fail
    /// Drop the value (the field, or the whole record when the record itself is the value) and
    /// record a `Reject`.
    case skip
    /// Keep the original value unchanged and record a `Reject`.
    case keep
}
