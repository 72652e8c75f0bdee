/// The failure of a `verify` or `restore` that found problems with entries (exit code 1); the problems
/// themselves are reported one by one before it.
public struct ArchiveProblems: DataError, CustomStringConvertible, Sendable {
    public let count: Int
    public let archive: String
    /// What was being done: "verifying", "restoring".
    public let action: String

    public init(count: Int, archive: String, action: String) {
        self.count = count
        self.archive = archive
        self.action = action
    }

    public var description: String { "\(archive): \(count) problem\(count == 1 ? "" : "s") found while \(action)" }
}
