import JSONStream

/// The record a step is changing, and the on-error policy operations report bad values to.
public struct RecordEdit {
    /// The record's current path (a `move` changes it).
    public internal(set) var path: [String]
    /// The captures of the pattern the current step matched.
    public var captures: [String: String] {
        guard let pattern = stepPattern else { return recordCaptures }
        return pattern.match(stepPath) ?? [:]
    }
    /// The record's current value; `nil` once it is deleted.
    public internal(set) var value: JSONValue?
    /// Values set aside so far (under `skip` and `keep`).
    public internal(set) var rejects: [Reject] = []

    let policy: OnErrorPolicy
    /// The record's path as read: rejects' input pointers start there.
    private let inputPath: [String]
    /// The fields the plans moved within the record so far (renames, collect, spread), in order:
    /// a reject's field is mapped back through them to its input pointer, and forward through the
    /// later ones to its output pointer.
    private var fieldMoves: [(from: FieldPath, to: FieldPath)] = []
    /// Per reject: its field when made (`nil`: the record) and how many field moves came before.
    private var rejectFields: [(field: FieldPath?, moves: Int)] = []
    /// The captures the record came with, until a step begins.
    private let recordCaptures: [String: String]
    /// The record's path when the current step began, which the step's pattern captures from
    /// (turned into captures only when asked for).
    private var stepPath: [String]
    /// The current step and the pattern it matched (`nil` before the first step).
    private var context: StepContext?
    /// The operation running, by index in the step.
    var operationIndex = 0

    /// The name of the operation running, which rejects name.
    var operation: String { context.map { $0.operationNames[operationIndex] } ?? "" }
    private var stepPattern: PathPattern? { context?.pattern }

    @inline(__always)
    init(record: Record, policy: OnErrorPolicy) {
        path = record.path
        recordCaptures = record.captures
        value = record.value
        self.policy = policy
        inputPath = record.path
        stepPath = record.path
    }

    /// Notes that the value at `from` is now at `to` (a rename, an element collected or spread).
    mutating func noteMoved(_ from: FieldPath, to: FieldPath) {
        if fieldMoves.isEmpty { fieldMoves.reserveCapacity(8) }  // one allocation for most records
        fieldMoves.append((from, to))
    }

    /// `field` with a prefix that one of `moves` took from `from` replaced by that move's `to`, for
    /// each move in turn.
    private static func follow(_ field: FieldPath, through moves: some Sequence<(from: FieldPath, to: FieldPath)>) -> FieldPath {
        var segments = field.segments
        for (from, to) in moves where segments.starts(with: from.segments) {
            segments = to.segments + segments.dropFirst(from.segments.count)
        }
        return FieldPath(segments: segments)
    }

    /// Gives the rejects their output pointers, once the plans are done with the record.
    mutating func finishRejects() {
        guard value != nil, !rejectFields.isEmpty else { return }
        let recordPointer = JSONPointer.string(path)
        for (i, made) in rejectFields.enumerated() {
            rejects[i].outputPointer =
                recordPointer + (made.field.map { Self.follow($0, through: fieldMoves[made.moves...]).pointer } ?? "")
        }
    }

    /// Starts a step whose pattern (in `context`) matched the record's current path: later rejects
    /// name it and the record's path at this point.
    mutating func begin(_ context: StepContext) {
        self.context = context
        operationIndex = 0
        stepPath = path
    }

    /// One capture of the current step's pattern (what `captures[name]` gives), without building
    /// the dictionary.
    func capture(_ name: String) -> String? {
        guard let pattern = stepPattern else { return recordCaptures[name] }
        guard pattern.segments.count == stepPath.count else { return nil }
        for (i, segment) in pattern.segments.enumerated() {
            if case .capture(let n) = segment, n == name { return stepPath[i] }
        }
        return nil
    }

    /// The value of a field of the record, when the record is an object that has it.
    public func field(_ path: FieldPath) -> JSONValue? { value?.field(path) }

    /// Sets a field and returns whether it could; a value on the way that is not an object is reported
    /// as a bad value.
    @discardableResult
    public mutating func set(_ path: FieldPath, _ newValue: JSONValue) throws(MigrationError) -> Bool {
        do {
            try value?.setField(path, newValue)
            return value != nil
        } catch {
            try reject(
                at: error.at.isEmpty ? nil : FieldPath(segments: error.at), value: error.found,
                reason: "cannot set '\(path)': \(error.reason)")
            return false
        }
    }

    /// Removes a field and returns it.
    @discardableResult
    public mutating func remove(_ path: FieldPath) -> JSONValue? { value?.removeField(path) }

    /// Renames a field (keeping its position within the same parent object) and returns whether it could.
    @discardableResult
    public mutating func rename(_ from: FieldPath, to: FieldPath) throws(MigrationError) -> Bool {
        do {
            guard try value?.renameField(from, to: to) == true else { return false }
            noteMoved(from, to: to)
            return true
        } catch {
            try reject(
                at: error.at.isEmpty ? nil : FieldPath(segments: error.at), value: error.found,
                reason: "cannot rename '\(from)' to '\(to)': \(error.reason)")
            return false
        }
    }

    /// What `renameKey` found.
    enum KeyRename {
        /// The record has no such key.
        case missing
        case renamed
        /// The new name is taken; the value of the old key.
        case targetExists(JSONValue)
    }

    /// Renames a key of the record object in place, keeping its position, unless the new name is
    /// taken. The record must be an object, and both paths one key long.
    mutating func renameKey(_ fromPath: FieldPath, to toPath: FieldPath) -> KeyRename {
        let from = fromPath.segments[0], to = toPath.segments[0]
        let result = value!.mutateObject { object -> KeyRename in
            var found: Int?
            for i in object.members.indices {
                let key = object.members[i].key
                if found == nil, key == from {
                    found = i
                } else if key == to {
                    // The old key's value is reported only when the old key is there too.
                    guard let i = found ?? object.index(of: from) else { return .missing }
                    return .targetExists(object.members[i].value)
                }
            }
            guard let i = found else { return .missing }
            object.members[i].key = to
            return .renamed
        }
        if case .renamed = result { noteMoved(fromPath, to: toPath) }
        return result ?? .missing
    }

    /// Deletes the whole record.
    mutating func delete() { value = nil }

    /// Reports a value the operation cannot migrate, following the on-error policy: `fail` throws,
    /// `skip` removes the bad value (the fields in `removing` when given; the whole record when `at`
    /// is `nil`), `keep` leaves everything as it is; both record a `Reject`.
    ///
    /// - Parameters:
    ///   - at: the field holding the value; `nil` for the record itself.
    ///   - name: what the reject names instead of the running operation (`where`).
    public mutating func reject(
        at field: FieldPath?, value bad: JSONValue, reason: String, removing: [FieldPath]? = nil,
        operation name: String? = nil
    ) throws(MigrationError) {
        // The field's name in the input: the moves undone, the last one first.
        let inputField = field.map { Self.follow($0, through: fieldMoves.reversed().lazy.map { (from: $0.to, to: $0.from) }) }
        let r = Reject(
            pointer: JSONPointer.string(inputPath) + (inputField?.pointer ?? ""), value: bad, plan: context?.plan ?? "",
            step: context?.step ?? 0,
            stepName: context?.stepName,
            operation: name ?? operation, reason: reason)
        switch policy {
        case .fail: throw MigrationError(r)
        case .skip:
            if let fields = removing ?? field.map({ [$0] }) {
                for f in fields { value?.removeField(f) }
            } else {
                value = nil
            }
        case .keep: break
        }
        rejects.append(r)
        rejectFields.append((field, fieldMoves.count))
    }
}

/// What a record's edit needs to know about the step it is in: names for rejects, the pattern
/// for captures. The runner makes one per step and pattern up front.
final class StepContext: Sendable {
    let plan: String
    /// The step's 1-based index in its plan.
    let step: Int
    let stepName: String?
    /// The step's pattern that matched.
    let pattern: PathPattern
    /// The names of the step's operations, in order.
    let operationNames: [String]

    init(plan: String, step: PlanStep, pattern: PathPattern) {
        self.plan = plan
        self.step = step.index
        stepName = step.name
        self.pattern = pattern
        operationNames = step.operations.map(\.name)
    }
}
