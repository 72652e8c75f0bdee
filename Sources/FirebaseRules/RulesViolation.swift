/// A node of a dump (or of a simulated write) that its rules refuse.
public struct RulesViolation: Hashable, Sendable {
    /// Which rule refused it.
    public enum Rule: String, Hashable, Sendable {
        /// A `.validate` that is false, or fails at run time (`null.length`).
        case validate = ".validate"
        /// No `.write` on the node's path lets this `auth` write it (strict dump validation).
        case write = ".write"
    }

    public var rule: Rule
    /// The JSON Pointer of the node.
    public var pointer: String
    /// One line: the expression and why it failed, or that nothing lets the write through.
    public var message: String

    public init(rule: Rule, pointer: String, message: String) {
        self.rule = rule
        self.pointer = pointer
        self.message = message
    }
}
