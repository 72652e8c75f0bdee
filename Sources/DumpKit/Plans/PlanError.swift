/// A plan file that cannot be used: where it is wrong (file, line, column, step) and why.
///
/// Printed as `todolist.yaml:12:5: step 2 ('todolist'): unknown operation 'renam'`; steps count from 1.
public struct PlanError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The plan file's name as given to `MigrationPlan.parse` or `load`.
    public var file: String
    /// 1-based line and column of the offending node, when known.
    public var line: Int?
    public var column: Int?
    /// 1-based index of the step, when the error is inside one.
    public var step: Int?
    /// The step's `name`, when it has one.
    public var stepName: String?
    /// One-line explanation.
    public var message: String

    public init(file: String, line: Int? = nil, column: Int? = nil, step: Int? = nil, stepName: String? = nil, message: String) {
        self.file = file
        self.line = line
        self.column = column
        self.step = step
        self.stepName = stepName
        self.message = message
    }

    public var description: String {
        var out = file
        if let line {
            out += ":\(line)"
            if let column { out += ":\(column)" }
        }
        out += ": "
        if let step {
            out += "step \(step)"
            if let stepName { out += " ('\(stepName)')" }
            out += ": "
        }
        return out + message
    }
}

/// Where something is written in a plan file: 1-based line and column.
public struct PlanLocation: Hashable, Sendable, CustomStringConvertible {
    public var line: Int
    public var column: Int

    public init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }

    public var description: String { "\(line):\(column)" }
}
