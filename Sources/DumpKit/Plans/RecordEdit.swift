import JSONStream

/// The record a step is changing, and the on-error policy operations report bad values to.
public struct RecordEdit {
    /// The record's current path (a `move` changes it).
    public internal(set) var path: [String]
    /// The captures of the pattern the current step matched.
    public internal(set) var captures: [String: String]
    /// The record's current value; `nil` once it is deleted.
    public internal(set) var value: JSONValue?
    /// Values set aside so far (under `skip` and `keep`).
    public internal(set) var rejects: [Reject] = []

    let policy: OnErrorPolicy
    /// The record's pointer when the current step began, which rejects are reported under.
    private var stepPointer = ""
    private var plan = ""
    private var step = 0
    private var stepName: String?
    var operation = ""

    init(record: Record, policy: OnErrorPolicy) {
        path = record.path
        captures = record.captures
        value = record.value
        self.policy = policy
        stepPointer = record.pointer
    }

    /// Starts a step: later rejects name it and the record's path at this point.
    mutating func begin(plan: String, step: Int, stepName: String?, captures: [String: String]) {
        self.plan = plan
        self.step = step
        self.stepName = stepName
        self.captures = captures
        stepPointer = JSONPointer.string(path)
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
            try reject(at: error.at.isEmpty ? nil : FieldPath(segments: error.at), value: error.found, reason: "cannot set '\(path)': \(error.reason)")
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
            return try value?.renameField(from, to: to) ?? false
        } catch {
            try reject(at: error.at.isEmpty ? nil : FieldPath(segments: error.at), value: error.found, reason: "cannot rename '\(from)' to '\(to)': \(error.reason)")
            return false
        }
    }

    /// Deletes the whole record.
    mutating func delete() { value = nil }

    /// Reports a value the operation cannot migrate, following the on-error policy: `fail` throws,
    /// `skip` removes the bad value (the fields in `removing` when given; the whole record when `at`
    /// is `nil`), `keep` leaves everything as it is; both record a `Reject`.
    ///
    /// - Parameter at: the field holding the value; `nil` for the record itself.
    public mutating func reject(at field: FieldPath?, value bad: JSONValue, reason: String, removing: [FieldPath]? = nil) throws(MigrationError) {
        let r = Reject(
            pointer: stepPointer + (field?.pointer ?? ""), value: bad, plan: plan, step: step, stepName: stepName,
            operation: operation, reason: reason)
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
    }
}
