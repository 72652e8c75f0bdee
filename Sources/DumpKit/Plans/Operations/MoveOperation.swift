import JSONStream

/// Moves the record to a path built from the step pattern's captures: `move: /v2/todolist/{id}`.
public struct MoveOperation: PlanOperation {
    public static let name = "move"
    public let location: PlanLocation
    /// The new path; its `{name}` segments are filled from the captures.
    public let target: PathPattern
    /// The patterns of the step, which the inverse moves records back to.
    public let sources: [PathPattern]

    init(target: PathPattern, sources: [PathPattern], location: PlanLocation) {
        self.target = target
        self.sources = sources
        self.location = location
    }

    init(_ options: PlanNode, _ context: OperationContext) throws(PlanError) {
        let d = context.decoder
        let node: PlanNode
        if case .mapping = options.content {
            node = try d.options(options, operation: Self.name, allowed: ["to"], required: ["to"])["to"]!
        } else {
            node = options
        }
        let text = try d.string(node, "the target of 'move'")
        do {
            target = try PathPattern(text)
        } catch {
            throw d.error(node.location, "\(error)")
        }
        if target.segments.contains(.wildcard) { throw d.error(node.location, "a move target cannot contain '*': it must name one path") }
        for pattern in context.patterns {
            for name in target.captureNames where !pattern.captureNames.contains(name) {
                throw d.error(node.location, "the target uses {\(name)}, which the pattern \(pattern) does not capture")
            }
        }
        sources = context.patterns
        location = context.location
    }

    public var description: String { "move to \(target)" }
    public var writtenFields: [FieldPath] { [] }

    public var inversion: Inversion {
        guard sources.count == 1, let source = sources.first else {
            return .lossy("several patterns move into \(target), so a moved record's origin is unknown")
        }
        if source.segments.contains(.wildcard) { return .lossy("the key matched by '*' in \(source) is not kept in \(target)") }
        let lost = source.captureNames.filter { !target.captureNames.contains($0) }
        if !lost.isEmpty { return .lossy("\(target) does not use {\(lost.joined(separator: "}, {"))} of \(source)") }
        return .exact([MoveOperation(target: source, sources: [target], location: location)])
    }

    public func apply(to edit: inout RecordEdit) throws(MigrationError) -> Bool {
        let path = target.segments.map { segment -> String in
            switch segment {
            case .literal(let key): return key
            case .capture(let name): return edit.capture(name) ?? ""
            case .wildcard: return ""
            }
        }
        guard path != edit.path else { return false }
        edit.path = path
        return true
    }
}
