import Crypto
import Foundation
import JSONStream

/// A declarative migration from one schema version to the next, read from a YAML or JSON plan file.
///
/// ```yaml
/// name: todolist
/// from: v1
/// to: v2
/// steps:
///   - name: todolist
///     match: /v1/todolist/{id}
///     ops:
///       - rename: { _createdAt: createdAt }
///       - move: /v2/todolist/{id}
/// ```
public struct MigrationPlan: Sendable {
    /// The plan's `name`, used in rejects, errors and stats.
    public let name: String
    /// The schema version the plan reads and the one it writes.
    public let from: String
    public let to: String
    /// The plan's `description`, if it has one.
    public let summary: String?
    /// The steps, in order.
    public let steps: [PlanStep]
    /// The file the plan was read from, as given (used in every error and warning).
    public let sourceFile: String
    /// Problems that do not stop the plan from running, as `file:line:column: step N ('name'): message`:
    /// steps that can never match, deletes without `where`, stated inverses that do not move back.
    public let warnings: [String]
    /// The SHA-256 of the file's bytes (lowercase hex), when the plan was loaded from a file.
    public internal(set) var sourceSHA256: String?

    init(name: String, from: String, to: String, summary: String?, steps: [PlanStep], sourceFile: String) {
        self.name = name
        self.from = from
        self.to = to
        self.summary = summary
        self.steps = steps
        self.sourceFile = sourceFile
        warnings = PlanLinter.warnings(for: steps, file: sourceFile)
    }

    /// The source patterns of the steps that run operations, in order, without repeats: the records
    /// a reader must hand to the plan.
    public var patterns: [PathPattern] {
        var out: [PathPattern] = []
        for step in steps where step.extractBlobs == nil {
            for p in step.patterns where !out.contains(p) { out.append(p) }
        }
        return out
    }

    /// Plans larger than this are refused before they are parsed.
    public static let maxFileBytes = 16 << 20

    /// Reads a plan file (a path, a FIFO, or `-` for standard input; compressed as any input may be):
    /// JSON when its name ends in `.json`, YAML otherwise.
    public static func load(path: String) throws(PlanError) -> MigrationPlan {
        var bytes: [UInt8] = []
        do {
            let file = try InputFile(path: path)
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            while true {
                let n = try chunk.withUnsafeMutableBytes { try file.read(into: $0) }
                if n == 0 { break }
                bytes += chunk[0..<n]
                if bytes.count > maxFileBytes { throw InputError(file: path, message: "larger than \(maxFileBytes >> 20) MiB: not a plan") }
            }
        } catch let e as InputError {
            throw PlanError(file: path, message: "cannot read the plan: \(e.message)")
        } catch {
            throw PlanError(file: path, message: "cannot read the plan: \(error)")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw PlanError(file: path, message: "the plan is not UTF-8 text")
        }
        var plan = try parse(text: text, fileName: path)
        plan.sourceSHA256 = Hex.lowercase(SHA256.hash(data: bytes))
        return plan
    }

    /// Reads a plan from text; `fileName` names it in errors and picks the syntax (`.json` or YAML).
    public static func parse(text: String, fileName: String) throws(PlanError) -> MigrationPlan {
        let root =
            fileName.lowercased().hasSuffix(".json")
            ? try PlanNode.parseJSON(text, file: fileName) : try PlanNode.parseYAML(text, file: fileName)
        let d = PlanDecoder(file: fileName)
        let members = try d.mapping(root, "a plan")
        let allowed = ["name", "description", "from", "to", "steps"]
        for m in members where !allowed.contains(m.key) {
            throw d.error(
                m.keyNode.location,
                "unknown key '\(m.key)' in a plan (a plan has \(allowed.joined(separator: ", ")))" + d.suggestion(m.key, allowed))
        }
        func member(_ key: String) throws(PlanError) -> PlanNode {
            guard let node = members.first(where: { $0.key == key })?.value else { throw d.error(root.location, "a plan needs '\(key)'") }
            return node
        }
        let name = try d.text(try member("name"), "'name'")
        let from = try d.text(try member("from"), "'from'")
        let to = try d.text(try member("to"), "'to'")
        let summary = try members.first { $0.key == "description" }.map { m throws(PlanError) in try d.string(m.value, "'description'") }
        let stepsNode = try member("steps")
        let stepNodes = try d.list(stepsNode, "'steps'")
        if stepNodes.isEmpty { throw d.error(stepsNode.location, "'steps' must not be empty") }
        var steps: [PlanStep] = []
        for (i, node) in stepNodes.enumerated() {
            let step = try PlanStep.decode(node, index: i + 1, file: fileName)
            if step.extractBlobs == nil, let blobStep = steps.last(where: { $0.extractBlobs != nil }) {
                throw PlanError(
                    file: fileName, line: step.location.line, column: step.location.column, step: step.index, stepName: step.name,
                    message: "comes after the extract-blobs \(blobStep.label), which runs after the migration; put extract-blobs steps last"
                )
            }
            steps.append(step)
        }
        return MigrationPlan(name: name, from: from, to: to, summary: summary, steps: steps, sourceFile: fileName)
    }

    /// The plan that undoes this one (`to` -> `from`): steps in reverse order, each running the
    /// inverses of its operations in reverse order, or the step's own `inverse:` list.
    ///
    /// Each reversed step matches where the forward step left its records (its `move` target) and keeps
    /// the `where` conditions on fields the step does not touch. A lossy operation (drop, delete,
    /// default, backfill, a many-to-one map, a convert with `exact: false`...) in a step without
    /// `inverse:` makes the plan irreversible: the error names the step and the operation.
    ///
    /// A reversed step takes every record at its forward step's output paths. So a step that moves
    /// records where an earlier step leaves records it does not take itself makes the plan
    /// irreversible: its reversal could not tell the two apart.
    public func reversed() throws(PlanError) -> MigrationPlan {
        for (j, later) in steps.enumerated() where later.operations.contains(where: { $0 is MoveOperation }) {
            for earlier in steps[..<j] {
                for left in earlier.outputPatterns {
                    guard let target = later.outputPatterns.first(where: { $0.overlaps(left) }),
                        !later.patterns.contains(where: { $0.covers(left) })
                    else { continue }
                    throw PlanError(
                        file: sourceFile, line: later.location.line, column: later.location.column, step: later.index,
                        stepName: later.name,
                        message:
                            "cannot reverse: this step moves records to \(target), where step \(earlier.index) leaves records at \(left) that this step does not take, so the reversed plan could not tell them apart; move them to paths of their own"
                    )
                }
            }
        }
        var reversedSteps: [PlanStep] = []
        for step in steps.reversed() {
            let operations: [any PlanOperation]
            if let stated = step.inverse {
                operations = stated
            } else if let blobs = step.extractBlobs {
                throw PlanError(
                    file: sourceFile, line: blobs.location.line, column: blobs.location.column, step: step.index, stepName: step.name,
                    message:
                        "cannot reverse 'extract-blobs': it moves images out of the records; give the step an 'inverse:' list of operations"
                )
            } else {
                var inverted: [any PlanOperation] = []
                for op in step.operations.reversed() {
                    switch op.inversion {
                    case .exact(let ops): inverted += ops
                    case .lossy(let why):
                        throw PlanError(
                            file: sourceFile, line: op.location.line, column: op.location.column, step: step.index, stepName: step.name,
                            message: "cannot reverse '\(op.name)': \(why); give the step an 'inverse:' list of operations")
                    }
                }
                operations = inverted
            }
            let written = step.operations.flatMap(\.writtenFields) + operations.flatMap(\.writtenFields)
            let conditions = step.conditions.filter { c in !written.contains { $0.overlaps(c.field) } }
            reversedSteps.append(
                PlanStep(
                    index: reversedSteps.count + 1, name: step.name, patterns: step.outputPatterns, conditions: conditions,
                    operations: operations, extractBlobs: nil, inverse: step.extractBlobs == nil ? step.operations : nil,
                    location: step.location))
        }
        var plan = MigrationPlan(name: name, from: to, to: from, summary: summary, steps: reversedSteps, sourceFile: sourceFile)
        plan.sourceSHA256 = sourceSHA256
        return plan
    }
}
