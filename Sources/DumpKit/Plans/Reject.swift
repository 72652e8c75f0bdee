import JSONStream

/// A value an operation could not migrate, kept aside under `--on-error skip` or `keep` (the command
/// writes them as NDJSON, one `jsonValue` a line).
public struct Reject: Hashable, Sendable, CustomStringConvertible {
    /// JSON Pointer of the value in the input dump: the record's path as read, and the field's name
    /// before the plans renamed, collected or spread it.
    public var pointer: String
    /// JSON Pointer of the value in the output dump (where a `skip` would have put it): the record's
    /// new path and the field's new name; `nil` when the record is not in the output, or the run
    /// stopped at this value (`fail`).
    public var outputPointer: String?
    /// The value as it was before the operation.
    public var value: JSONValue
    /// The plan's `name`.
    public var plan: String
    /// 1-based index of the step in its plan.
    public var step: Int
    /// The step's `name`, when it has one.
    public var stepName: String?
    /// The operation's name (`convert`, `map`).
    public var operation: String
    /// Why the value could not be migrated.
    public var reason: String

    /// A reject with every fact given.
    public init(
        pointer: String, outputPointer: String? = nil, value: JSONValue, plan: String, step: Int, stepName: String?, operation: String,
        reason: String
    ) {
        self.pointer = pointer
        self.outputPointer = outputPointer
        self.value = value
        self.plan = plan
        self.step = step
        self.stepName = stepName
        self.operation = operation
        self.reason = reason
    }

    /// Where the value failed, as people read it: `plan 'todolist' step 1 ('todolist') convert`.
    public var origin: String {
        "plan '\(plan)' step \(step)" + (stepName.map { " ('\($0)')" } ?? "") + " \(operation)"
    }

    public var description: String { "\(pointer.isEmpty ? "/" : pointer): \(origin): \(reason) (value \(value.preview()))" }

    /// The reject as one JSON object: `pointer`, `outputPointer` (when known), `value`, `plan`,
    /// `step`, `stepName` (when named), `operation`, `reason`.
    public var jsonValue: JSONValue {
        var o: JSONObject = ["pointer": .string(pointer)]
        if let outputPointer { o["outputPointer"] = .string(outputPointer) }
        o["value"] = value
        o["plan"] = .string(plan)
        o["step"] = .number(JSONNumber(step))
        if let stepName { o["stepName"] = .string(stepName) }
        o["operation"] = .string(operation)
        o["reason"] = .string(reason)
        return .object(o)
    }
}
