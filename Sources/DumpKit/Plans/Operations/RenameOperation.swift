/// Renames fields, nested paths included: `rename: { _createdAt: createdAt, meta/created: createdAt }`.
///
/// A key renamed within its object keeps its position; a field moved to another object is appended
/// at the end of it. A field that is missing is left alone; a target that already exists is a bad value.
public struct RenameOperation: PlanOperation {
    public static let name = "rename"
    public let location: PlanLocation
    /// Old and new field paths, in the order written.
    public let pairs: [(from: FieldPath, to: FieldPath)]

    init(pairs: [(from: FieldPath, to: FieldPath)], location: PlanLocation) {
        self.pairs = pairs
        self.location = location
    }

    init(_ options: PlanNode, _ context: OperationContext) throws(PlanError) {
        let d = context.decoder
        var pairs: [(from: FieldPath, to: FieldPath)] = []
        for m in try d.mapping(options, "the fields of 'rename' (old: new)") {
            let from = try d.field(m.keyNode, "a field to rename")
            let to = try d.field(m.value, "the new name of '\(from)'")
            if from.overlaps(to) { throw d.error(m.keyNode.location, "cannot rename '\(from)' to '\(to)': one contains the other") }
            pairs.append((from, to))
        }
        if pairs.isEmpty { throw d.error(options.location, "'rename' needs at least one 'old: new' pair") }
        self.pairs = pairs
        location = context.location
    }

    public var description: String { "rename " + pairs.map { "\($0.from) -> \($0.to)" }.joined(separator: ", ") }
    public var writtenFields: [FieldPath] { pairs.flatMap { [$0.from, $0.to] } }

    public var inversion: Inversion {
        .exact([RenameOperation(pairs: pairs.reversed().map { (from: $0.to, to: $0.from) }, location: location)])
    }

    public func apply(to edit: inout RecordEdit) throws(MigrationError) -> Bool {
        var changed = false
        for (from, to) in pairs {
            // A key renamed within a record object: one scan finds both names, and the key is
            // changed in place (what the general path below does, without its repeated lookups).
            if from.segments.count == 1, to.segments.count == 1, case .object? = edit.value {
                switch edit.renameKey(from, to: to) {
                case .missing: continue
                case .renamed: changed = true
                case .targetExists(let value):
                    try edit.reject(at: from, value: value, reason: "cannot rename '\(from)' to '\(to)': '\(to)' already exists")
                }
                continue
            }
            guard let value = edit.field(from) else { continue }
            if edit.field(to) != nil {
                try edit.reject(at: from, value: value, reason: "cannot rename '\(from)' to '\(to)': '\(to)' already exists")
                continue
            }
            if try edit.rename(from, to: to) { changed = true }
        }
        return changed
    }
}
