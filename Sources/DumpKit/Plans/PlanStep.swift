import JSONStream

/// One step of a plan: the records it applies to (`match` patterns and `where` conditions) and the
/// operations it runs on each, in order.
public struct PlanStep: Sendable {
    /// 1-based position in the plan.
    public let index: Int
    /// The step's `name`, used in messages.
    public let name: String?
    /// Source patterns; a record at a path any of them matches (and meeting `conditions`) goes
    /// through the step.
    public let patterns: [PathPattern]
    /// The `where` conditions; all must hold.
    public let conditions: [PlanCondition]
    /// The operations, in order; empty for an `extract-blobs` step.
    public let operations: [any PlanOperation]
    /// Set for a step that hands its records to the blob extractor instead of running operations.
    public let extractBlobs: ExtractBlobsOptions?
    /// Operations the plan author states undo this step, used by `MigrationPlan.reversed()`.
    public let inverse: [any PlanOperation]?
    /// Where the step is written.
    public let location: PlanLocation

    init(
        index: Int, name: String?, patterns: [PathPattern], conditions: [PlanCondition], operations: [any PlanOperation],
        extractBlobs: ExtractBlobsOptions?, inverse: [any PlanOperation]?, location: PlanLocation
    ) {
        self.index = index
        self.name = name
        self.patterns = patterns
        self.conditions = conditions
        self.operations = operations
        self.extractBlobs = extractBlobs
        self.inverse = inverse
        self.location = location
    }

    /// `step 2 ('todolist')`.
    public var label: String { "step \(index)" + (name.map { " ('\($0)')" } ?? "") }

    /// The captures of the first pattern matching `path`, when every condition holds for `value`;
    /// throws when a condition cannot be decided (see `PlanCondition.holds`).
    public func match(path: [String], value: JSONValue?) throws(PlanCondition.Undecided) -> [String: String]? {
        for p in patterns {
            guard let captures = p.match(path) else { continue }
            for condition in conditions where !(try condition.holds(in: value)) { return nil }
            return captures
        }
        return nil
    }

    /// Where the step's records are after it: the last `move` target, else the source patterns.
    public var outputPatterns: [PathPattern] { Self.outputs(of: operations, from: patterns) }

    private static func outputs(of operations: [any PlanOperation], from patterns: [PathPattern]) -> [PathPattern] {
        if let move = operations.last(where: { $0 is MoveOperation }) as? MoveOperation { return [move.target] }
        return patterns
    }

    // MARK: - Reading

    /// Reads a step from its node.
    static func decode(_ node: PlanNode, index: Int, file: String) throws(PlanError) -> PlanStep {
        var d = PlanDecoder(file: file, step: index)
        let members = try d.mapping(node, "a step")
        let allowed = ["name", "match", "where", "ops", "inverse"]
        for m in members where !allowed.contains(m.key) {
            throw d.error(
                m.keyNode.location,
                "unknown key '\(m.key)' in a step (a step has \(allowed.joined(separator: ", ")))" + d.suggestion(m.key, allowed))
        }
        func member(_ key: String) -> PlanNode? { members.first { $0.key == key }?.value }
        if let n = member("name") { d.stepName = try d.text(n, "'name'") }
        guard let matchNode = member("match") else {
            throw d.error(node.location, "a step needs 'match' (a path pattern or a list of them)")
        }
        var patterns: [PathPattern] = []
        let matchItems: [PlanNode]
        if case .sequence(let items) = matchNode.content { matchItems = items } else { matchItems = [matchNode] }
        if matchItems.isEmpty { throw d.error(matchNode.location, "'match' must not be empty") }
        for item in matchItems {
            let text = try d.string(item, "'match' (a path pattern or a list of them)")
            do {
                patterns.append(try PathPattern(text))
            } catch {
                throw d.error(item.location, "\(error)")
            }
        }
        for (i, p) in patterns.enumerated() where patterns[..<i].contains(p) {
            throw d.error(matchNode.location, "'match' lists \(p) twice")
        }
        let conditions = try member("where").map { n throws(PlanError) in try PlanCondition.decode(n, d) } ?? []
        guard let opsNode = member("ops") else { throw d.error(node.location, "a step needs 'ops' (a list of operations)") }
        let (operations, blobs) = try decodeOperations(opsNode, d, patterns: patterns, inverse: false)
        let output = outputs(of: operations, from: patterns)
        let inverse = try member("inverse").map { n throws(PlanError) in try decodeOperations(n, d, patterns: output, inverse: true).0 }
        return PlanStep(
            index: index, name: d.stepName, patterns: patterns, conditions: conditions, operations: operations, extractBlobs: blobs,
            inverse: inverse, location: node.location)
    }

    /// Reads a list of operations, each a mapping of one key (its name) to its options, or a bare name;
    /// an `inverse` list may be empty (the reversed step then changes nothing) but not extract blobs.
    private static func decodeOperations(_ node: PlanNode, _ d: PlanDecoder, patterns: [PathPattern], inverse: Bool) throws(PlanError) -> (
        [any PlanOperation], ExtractBlobsOptions?
    ) {
        let items = try d.list(node, "'ops'")
        var ops: [any PlanOperation] = []
        var blobs: ExtractBlobsOptions?
        for item in items {
            let name: String
            let options: PlanNode?
            let nameLocation: PlanLocation
            switch item.content {
            case .scalar(.string(let s), _):
                (name, options, nameLocation) = (s, nil, item.location)
            case .mapping(let pairs) where pairs.count == 1:
                guard let key = pairs[0].key.text else { throw d.error(item.location, "an operation's name must be a string") }
                (name, options, nameLocation) = (key, pairs[0].value, pairs[0].key.location)
            default:
                throw d.error(
                    item.location,
                    "an operation is a mapping of one key, its name, to its options (e.g. '- rename: { old: new }'), not \(item.kindName)")
            }
            let context = OperationContext(decoder: d, patterns: patterns, location: nameLocation)
            if name == ExtractBlobsOptions.name {
                guard !inverse else { throw d.error(nameLocation, "'extract-blobs' cannot be part of an 'inverse'") }
                blobs = try ExtractBlobsOptions(options, context)
            } else {
                ops.append(try OperationCatalog.decode(name, options, context))
            }
        }
        if items.isEmpty && !inverse { throw d.error(node.location, "'ops' must not be empty") }
        if blobs != nil && items.count > 1 {
            throw d.error(
                node.location, "'extract-blobs' must be the only operation of its step (the blob extractor runs it after the migration)")
        }
        return (ops, blobs)
    }
}
