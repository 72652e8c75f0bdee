import JSONStream

/// What one record became: the records to write (each at its full path), and the values set aside.
public struct MigrationResult: Sendable {
    /// The path the record was read at.
    public var originalPath: [String]
    /// Output records: the record at its original path (changed or not), or at a new path when a step
    /// moved it; empty when a step deleted it (or `skip` dropped it whole).
    public var records: [Record]
    /// Values the operations could not migrate, under `skip` and `keep`.
    public var rejects: [Reject]
    /// Whether any step applied to the record; `false` means `records` is the input, unchanged.
    public var matched: Bool

    /// The value to write at the original path: `nil` when the record was deleted or moved away.
    public var inPlace: JSONValue? { records.first { $0.path == originalPath }?.value }

    /// Records that now live at another path (the writer places them there).
    public var moved: [Record] { records.filter { $0.path != originalPath } }
}
