import JSONStream

/// Counts of a migration, per step and per operation, with one example record per step.
public struct MigrationStats: Sendable {
    /// Records handed to `PlanRunner.apply`.
    public var records = 0
    /// Records at least one step applied to.
    public var matched = 0
    /// Records an operation changed (moved ones included).
    public var changed = 0
    /// Records that left their path.
    public var moved = 0
    /// Records deleted (or dropped whole under `skip`).
    public var deleted = 0
    /// Values set aside under `skip` or `keep`.
    public var rejects = 0
    /// One entry per step of every plan, in order.
    public var steps: [StepStats]

    /// The stats as one JSON object, for a report file.
    public var jsonValue: JSONValue {
        .object([
            "records": .number(JSONNumber(records)), "matched": .number(JSONNumber(matched)), "changed": .number(JSONNumber(changed)),
            "moved": .number(JSONNumber(moved)), "deleted": .number(JSONNumber(deleted)), "rejects": .number(JSONNumber(rejects)),
            "steps": .array(steps.map(\.jsonValue)),
        ])
    }
}

/// What one step did.
public struct StepStats: Sendable {
    /// The plan's name and the step's 1-based index and name.
    public var plan: String
    /// The step's 1-based index in its plan.
    public var step: Int
    /// The step's name.
    public var name: String?
    /// The step's source patterns as written.
    public var patterns: [String]
    /// Records the step applied to (pattern matched and `where` held).
    public var matched = 0
    /// One entry per operation, in order.
    public var operations: [OperationStats]
    /// The record that comes first in the database's key order among those the step applied to,
    /// before and after the step; the same whatever order or concurrency the records came in.
    public var example: MigrationExample?

    var jsonValue: JSONValue {
        var o: JSONObject = ["plan": .string(plan), "step": .number(JSONNumber(step))]
        if let name { o["name"] = .string(name) }
        o["patterns"] = .array(patterns.map { .string($0) })
        o["matched"] = .number(JSONNumber(matched))
        o["operations"] = .array(operations.map(\.jsonValue))
        if let example { o["example"] = example.jsonValue }
        return .object(o)
    }
}

/// What one operation did.
public struct OperationStats: Sendable {
    /// The operation's name (`rename`) and a one-line summary (`rename _createdAt -> createdAt`).
    public var name: String
    /// One line about what it does.
    public var summary: String
    /// Records the operation changed.
    public var applied = 0
    /// Values it set aside (under `skip` and `keep`).
    public var rejected = 0

    var jsonValue: JSONValue {
        .object([
            "name": .string(name), "summary": .string(summary), "applied": .number(JSONNumber(applied)),
            "rejected": .number(JSONNumber(rejected)),
        ])
    }
}

/// A record before and after a step (`after` is `nil` when the step deleted it).
public struct MigrationExample: Sendable {
    /// The record as the step got it.
    public var before: Record
    /// The record as the step left it.
    public var after: Record?

    var jsonValue: JSONValue {
        func record(_ r: Record) -> JSONValue { .object(["pointer": .string(r.pointer), "value": r.value ?? .null]) }
        var o: JSONObject = ["before": record(before)]
        if let after { o["after"] = record(after) }
        return .object(o)
    }
}
