import JSONStream

/// A value that stopped a migration under `--on-error fail`: the same facts as a `Reject`.
public struct MigrationError: Error, CustomStringConvertible, Sendable {
    /// What failed and where.
    public let reject: Reject

    public init(_ reject: Reject) { self.reject = reject }

    /// JSON Pointer of the value in the dump.
    public var pointer: String { reject.pointer }
    /// The value that could not be migrated.
    public var value: JSONValue { reject.value }

    public var description: String { reject.description }
}
