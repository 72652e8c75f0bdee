/// One operation of a plan step: it changes a record, says which fields it writes, and knows how
/// to undo itself (or why it cannot).
public protocol PlanOperation: Sendable, CustomStringConvertible {
    /// The operation's name in plan files (`rename`, `convert`).
    static var name: String { get }
    /// Where the operation is written in its plan file.
    var location: PlanLocation { get }
    /// Fields the operation may write or remove; a `where` condition on any other field still holds
    /// after the step, so the reversed step keeps it.
    var writtenFields: [FieldPath] { get }
    /// The operations that undo this one, or why there are none.
    var inversion: Inversion { get }
    /// Applies the operation; returns whether it changed the record. Values it cannot migrate go to
    /// `edit.reject`, which follows the on-error policy.
    func apply(to edit: inout RecordEdit) throws(MigrationError) -> Bool
}

extension PlanOperation {
    /// The operation's name in plan files.
    public var name: String { Self.name }
}

/// How an operation is undone when a plan is reversed.
public enum Inversion: Sendable {
    /// These operations, in this order, give every migrated value back.
    case exact([any PlanOperation])
    /// The operation loses information; the message says what.
    case lossy(String)
}
