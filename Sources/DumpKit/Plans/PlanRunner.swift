import Foundation
import JSONStream
import Synchronization

/// Applies a chain of plans (v1 -> v2 -> v3) to records, one at a time, and counts what it did.
///
/// Each record goes through every step of every plan in order; a step applies when one of its
/// patterns matches the record's current path (after earlier moves) and its `where` holds. Records
/// no step applies to come back unchanged. `apply` may be called from several threads at once.
public final class PlanRunner: Sendable {
    public let plans: [MigrationPlan]
    public let onError: OnErrorPolicy
    /// Every source pattern of the plans' operation steps: the records a reader must yield.
    public let patterns: [PathPattern]
    /// The `extract-blobs` steps, for the blob extractor to run after the migration.
    public let blobExtractions: [BlobExtraction]
    /// The plans' warnings, then problems of the chain (a plan that does not start where the
    /// previous one ends).
    public let warnings: [String]

    /// The operation steps of every plan, in order, with what `apply` needs worked out once.
    private let steps: [RunnerStep]
    /// Counts and examples. `apply` adds to them once per record.
    private let tally: Mutex<Tally>
    /// The stats without counts or examples: names, summaries, patterns.
    private let template: MigrationStats

    public init(plans: [MigrationPlan], onError: OnErrorPolicy) {
        self.plans = plans
        self.onError = onError
        var steps: [RunnerStep] = []
        var patterns: [PathPattern] = []
        var blobs: [BlobExtraction] = []
        var warnings: [String] = []
        for (i, plan) in plans.enumerated() {
            warnings += plan.warnings
            if i > 0, plans[i - 1].to != plan.from {
                warnings.append(
                    "\(plan.sourceFile): plan '\(plan.name)' starts at \(plan.from) but the plan before it ends at \(plans[i - 1].to)")
            }
            for step in plan.steps {
                if let options = step.extractBlobs {
                    blobs.append(BlobExtraction(plan: plan.name, step: step, options: options))
                } else {
                    steps.append(RunnerStep(plan: plan.name, step: step))
                }
            }
            for p in plan.patterns where !patterns.contains(p) { patterns.append(p) }
        }
        self.steps = steps
        self.patterns = patterns
        self.blobExtractions = blobs
        self.warnings = warnings
        template = MigrationStats(
            steps: steps.map { s in
                StepStats(
                    plan: s.plan, step: s.step.index, name: s.step.name, patterns: s.step.patterns.map(\.text),
                    operations: s.operations.map { OperationStats(name: $0.name, summary: $0.description) })
            })
        tally = Mutex(Tally(steps: steps))
    }

    /// The counts so far.
    public var stats: MigrationStats {
        tally.withLock { tally in
            var stats = template
            stats.records = tally.records
            stats.matched = tally.matched
            stats.changed = tally.changed
            stats.moved = tally.moved
            stats.deleted = tally.deleted
            stats.rejects = tally.rejects
            for si in stats.steps.indices {
                stats.steps[si].matched = tally.stepMatched[si]
                let base = tally.operationBase[si]
                for oi in stats.steps[si].operations.indices {
                    stats.steps[si].operations[oi].applied = tally.applied[base + oi]
                    stats.steps[si].operations[oi].rejected = tally.rejected[base + oi]
                }
                stats.steps[si].example = tally.examples[si]
            }
            return stats
        }
    }

    /// Migrates one record: the output records (at their full paths) and any rejects.
    ///
    /// Under `onError: .fail` the first value an operation cannot migrate throws.
    public func apply(_ record: Record) throws(MigrationError) -> MigrationResult {
        var edit = RecordEdit(record: record, policy: onError)
        // What the steps did, added to the totals at the end: plain bits for the first step, so a
        // record one step applies to allocates nothing for its counts.
        var first: StepTrace?
        var more: [StepTrace] = []
        var rare = RareTrace()
        for si in steps.indices {
            let step = steps[si]
            guard edit.value != nil, let (context, undecided) = step.match(path: edit.path, value: edit.value) else { continue }
            edit.begin(context)
            if let undecided {
                // Neither applied nor skipped knowingly: the record is a reject of the step's `where`.
                try edit.reject(at: nil, value: edit.value!, reason: undecided.reason, removing: [], operation: "where")
                continue
            }
            // The record before the step is kept only when it may become the step's example (the
            // one first in key order); holding it otherwise would make the operations copy it.
            let before = mayBeExample(si, edit.path) ? Record(path: edit.path, captures: edit.captures, value: edit.value) : nil
            var t = StepTrace(step: si)
            for oi in step.operations.indices {
                edit.operationIndex = oi
                let rejectsBefore = edit.rejects.count
                if try step.operations[oi].apply(to: &edit) {
                    if oi < 64 { t.applied |= 1 << UInt64(oi) } else { rare.appliedPast64.append((si, oi)) }
                }
                if edit.rejects.count != rejectsBefore { rare.rejected.append((si, oi, edit.rejects.count - rejectsBefore)) }
                if edit.value == nil { break }
            }
            if let before {
                rare.examples.append(
                    (
                        si,
                        MigrationExample(
                            before: before, after: edit.value.map { Record(path: edit.path, captures: edit.captures, value: $0) })
                    ))
            }
            if first == nil { first = t } else { more.append(t) }
        }
        let matched = first != nil
        edit.finishRejects()
        let output = edit.value.map { Record(path: edit.path, captures: record.captures, value: $0) }
        let changed = (first.map { $0.applied != 0 } ?? false) || more.contains { $0.applied != 0 } || !rare.appliedPast64.isEmpty
        let moved = output.map { $0.path != record.path } ?? false
        let rejects = edit.rejects.count
        tally.withLock { tally in
            tally.records += 1
            if matched { tally.matched += 1 }
            if changed { tally.changed += 1 }
            if moved { tally.moved += 1 }
            if output == nil { tally.deleted += 1 }
            tally.rejects += rejects
            if let first { tally.add(first) }
            for t in more { tally.add(t) }
            if !rare.isEmpty { tally.add(rare) }
        }
        return MigrationResult(originalPath: record.path, records: output.map { [$0] } ?? [], rejects: edit.rejects, matched: matched)
    }

    /// Whether a record at `path` would replace the current example of step `si` (so far).
    private func mayBeExample(_ si: Int, _ path: [String]) -> Bool {
        tally.withLock { $0.examplePaths[si].map { Self.precedes(path, $0) } ?? true }
    }

    /// Whether path `a` comes before `b` in the database's key order.
    fileprivate static func precedes(_ a: [String], _ b: [String]) -> Bool {
        for (x, y) in zip(a, b) where x != y { return DatabaseKeyOrder.less(x, y) }
        return a.count < b.count
    }
}

/// A step as the runner runs it (a class: one reference to retain per step and record).
private final class RunnerStep: Sendable {
    let plan: String
    let step: PlanStep
    let operations: [any PlanOperation]
    let patterns: [PathPattern]
    let conditions: [PlanCondition]
    /// One per pattern, handed to the record's edit when that pattern matches.
    let contexts: [StepContext]

    init(plan: String, step: PlanStep) {
        self.plan = plan
        self.step = step
        operations = step.operations
        patterns = step.patterns
        conditions = step.conditions
        contexts = step.patterns.map { StepContext(plan: plan, step: step, pattern: $0) }
    }

    /// The context of the first of the step's patterns that matches `path`, when every condition
    /// holds for `value` (what `PlanStep.match` decides, without building the captures), or cannot
    /// be decided (`undecided`).
    func match(path: [String], value: JSONValue?) -> (context: StepContext, undecided: PlanCondition.Undecided?)? {
        for (i, p) in patterns.enumerated() where p.matches(path) {
            do throws(PlanCondition.Undecided) {
                for condition in conditions where !(try condition.holds(in: value)) { return nil }
            } catch {
                return (contexts[i], error)
            }
            return (contexts[i], nil)
        }
        return nil
    }
}

/// What one step did to one record: the step, and the operations (first 64) that changed it.
private struct StepTrace {
    /// Index into the runner's steps.
    var step: Int
    var applied: UInt64 = 0

    init(step: Int) { self.step = step }
}

/// What most records do not have: rejects, operations past the 64th, example candidates.
private struct RareTrace {
    var appliedPast64: [(step: Int, operation: Int)] = []
    var rejected: [(step: Int, operation: Int, count: Int)] = []
    var examples: [(step: Int, example: MigrationExample)] = []

    var isEmpty: Bool { appliedPast64.isEmpty && rejected.isEmpty && examples.isEmpty }
}

/// The runner's counts: per record, per step, and per operation in flat arrays.
private struct Tally {
    var records = 0
    var matched = 0
    var changed = 0
    var moved = 0
    var deleted = 0
    var rejects = 0
    var stepMatched: [Int]
    /// Where each step's operations start in `applied` and `rejected`.
    var operationBase: [Int]
    var applied: [Int]
    var rejected: [Int]
    var examples: [MigrationExample?]
    /// The examples' paths before their step, to compare candidates without copying examples.
    var examplePaths: [[String]?]

    init(steps: [RunnerStep]) {
        stepMatched = Array(repeating: 0, count: steps.count)
        var base: [Int] = []
        var n = 0
        for s in steps {
            base.append(n)
            n += s.operations.count
        }
        operationBase = base
        applied = Array(repeating: 0, count: n)
        rejected = Array(repeating: 0, count: n)
        examples = Array(repeating: nil, count: steps.count)
        examplePaths = Array(repeating: nil, count: steps.count)
    }

    mutating func add(_ t: StepTrace) {
        stepMatched[t.step] += 1
        let base = operationBase[t.step]
        var bits = t.applied
        while bits != 0 {
            applied[base + bits.trailingZeroBitCount] += 1
            bits &= bits - 1
        }
    }

    mutating func add(_ r: RareTrace) {
        for (si, oi) in r.appliedPast64 { applied[operationBase[si] + oi] += 1 }
        for (si, oi, n) in r.rejected { rejected[operationBase[si] + oi] += n }
        for (si, example) in r.examples where examplePaths[si].map({ PlanRunner.precedes(example.before.path, $0) }) ?? true {
            examples[si] = example
            examplePaths[si] = example.before.path
        }
    }
}

/// An `extract-blobs` step handed to the blob extractor, with the step's patterns and `where`.
public struct BlobExtraction: Sendable {
    /// The plan's name.
    public let plan: String
    /// The step: `step.match(path:value:)` tells whether a record is its to extract from.
    public let step: PlanStep
    public let options: ExtractBlobsOptions
}
