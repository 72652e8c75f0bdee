import Foundation
import JSONStream

/// Applies a chain of plans (v1 -> v2 -> v3) to records, one at a time, and counts what it did.
///
/// Each record goes through every step of every plan in order; a step applies when one of its
/// patterns matches the record's current path (after earlier moves) and its `where` holds. Records
/// no step applies to come back unchanged. `apply` may be called from several threads at once.
public final class PlanRunner: @unchecked Sendable {
    public let plans: [MigrationPlan]
    public let onError: OnErrorPolicy
    /// Every source pattern of the plans' operation steps: the records a reader must yield.
    public let patterns: [PathPattern]
    /// The `extract-blobs` steps, for the blob extractor to run after the migration.
    public let blobExtractions: [BlobExtraction]
    /// The plans' warnings, then problems of the chain (a plan that does not start where the
    /// previous one ends).
    public let warnings: [String]

    private let steps: [(plan: String, step: PlanStep)]
    private let lock = NSLock()
    private var totals: MigrationStats

    public init(plans: [MigrationPlan], onError: OnErrorPolicy) {
        self.plans = plans
        self.onError = onError
        var steps: [(plan: String, step: PlanStep)] = []
        var patterns: [PathPattern] = []
        var blobs: [BlobExtraction] = []
        var warnings: [String] = []
        for (i, plan) in plans.enumerated() {
            warnings += plan.warnings
            if i > 0, plans[i - 1].to != plan.from {
                warnings.append("\(plan.sourceFile): plan '\(plan.name)' starts at \(plan.from) but the plan before it ends at \(plans[i - 1].to)")
            }
            for step in plan.steps {
                if let options = step.extractBlobs {
                    blobs.append(BlobExtraction(plan: plan.name, step: step, options: options))
                } else {
                    steps.append((plan.name, step))
                }
            }
            for p in plan.patterns where !patterns.contains(p) { patterns.append(p) }
        }
        self.steps = steps
        self.patterns = patterns
        self.blobExtractions = blobs
        self.warnings = warnings
        totals = MigrationStats(
            steps: steps.map { plan, step in
                StepStats(
                    plan: plan, step: step.index, name: step.name, patterns: step.patterns.map(\.text),
                    operations: step.operations.map { OperationStats(name: $0.name, summary: $0.description) })
            })
    }

    /// The counts so far.
    public var stats: MigrationStats { lock.withLock { totals } }

    /// Migrates one record: the output records (at their full paths) and any rejects.
    ///
    /// Under `onError: .fail` the first value an operation cannot migrate throws.
    public func apply(_ record: Record) throws(MigrationError) -> MigrationResult {
        var edit = RecordEdit(record: record, policy: onError)
        var trace: [StepTrace] = []
        for (si, entry) in steps.enumerated() {
            guard edit.value != nil, let captures = entry.step.match(path: edit.path, value: edit.value) else { continue }
            edit.begin(plan: entry.plan, step: entry.step.index, stepName: entry.step.name, captures: captures)
            let before = Record(path: edit.path, captures: captures, value: edit.value)
            var t = StepTrace(step: si, applied: [], rejected: [], example: MigrationExample(before: before, after: nil))
            for op in entry.step.operations {
                edit.operation = op.name
                let rejectsBefore = edit.rejects.count
                t.applied.append(try op.apply(to: &edit))
                t.rejected.append(edit.rejects.count - rejectsBefore)
                if edit.value == nil { break }
            }
            t.example.after = edit.value.map { Record(path: edit.path, captures: captures, value: $0) }
            trace.append(t)
        }
        let matched = !trace.isEmpty
        let output = edit.value.map { Record(path: edit.path, captures: record.captures, value: $0) }
        let result = MigrationResult(originalPath: record.path, records: output.map { [$0] } ?? [], rejects: edit.rejects, matched: matched)
        lock.withLock {
            totals.records += 1
            if matched { totals.matched += 1 }
            if trace.contains(where: { $0.applied.contains(true) }) { totals.changed += 1 }
            if let output, output.path != record.path { totals.moved += 1 }
            if output == nil { totals.deleted += 1 }
            totals.rejects += edit.rejects.count
            for t in trace {
                totals.steps[t.step].matched += 1
                for (oi, applied) in t.applied.enumerated() where applied { totals.steps[t.step].operations[oi].applied += 1 }
                for (oi, rejected) in t.rejected.enumerated() { totals.steps[t.step].operations[oi].rejected += rejected }
                if totals.steps[t.step].example.map({ Self.precedes(t.example.before.path, $0.before.path) }) ?? true {
                    totals.steps[t.step].example = t.example
                }
            }
        }
        return result
    }

    /// Whether path `a` comes before `b` in the database's key order.
    private static func precedes(_ a: [String], _ b: [String]) -> Bool {
        for (x, y) in zip(a, b) where x != y { return DatabaseKeyOrder.less(x, y) }
        return a.count < b.count
    }
}

/// What one step did to one record, merged into the totals under the lock.
private struct StepTrace {
    /// Index into the runner's steps.
    var step: Int
    /// Per operation run (the list stops early when the record was deleted).
    var applied: [Bool]
    var rejected: [Int]
    var example: MigrationExample
}

/// An `extract-blobs` step handed to the blob extractor, with the step's patterns and `where`.
public struct BlobExtraction: Sendable {
    /// The plan's name.
    public let plan: String
    /// The step: `step.match(path:value:)` tells whether a record is its to extract from.
    public let step: PlanStep
    public let options: ExtractBlobsOptions
}
