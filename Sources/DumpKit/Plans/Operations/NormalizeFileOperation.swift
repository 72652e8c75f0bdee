import JSONStream

/// Brings Salada `File` values to one shape: `normalize-file: { field: images, shape: object, restore: true }`.
///
/// Salada stored a file as its bare name (era 1, `"1482814956123"`) or as `{name, url, mimeType}`
/// (era 2). `shape: object` turns names into `{name}` and keeps objects; `shape: name` keeps only the
/// name. Inline images (`data:` URIs) are left as they are for `extract-blobs`. A field holding an
/// array is normalised element by element.
///
/// `restore: true` states how to undo it: an object with only a `name` goes back to the bare name,
/// anything else stays. With `exact` (the default) each value must come back that way (an era-2
/// object without `url` would come back as a bare name); other values are bad values.
public struct NormalizeFileOperation: PlanOperation {
    public static let name = "normalize-file"
    public let location: PlanLocation
    /// The field holding a File value or an array of them.
    public let field: FieldPath
    /// The shape written.
    public let shape: Shape
    /// Whether the step may be reversed by `Shape.bareNames`.
    public let restore: Bool
    /// Whether values must come back unchanged.
    public let exact: Bool

    /// The shapes a File value can be brought to.
    public enum Shape: String, Sendable {
        /// `{name, url?, mimeType?}`.
        case object
        /// The name string.
        case name
        /// Objects with only a name become the bare name; the undoing of `object` and `name`.
        case bareNames = "bare-names"
    }

    init(field: FieldPath, shape: Shape, restore: Bool, exact: Bool, location: PlanLocation) {
        self.field = field
        self.shape = shape
        self.restore = restore
        self.exact = exact
        self.location = location
    }

    init(_ options: PlanNode, _ context: OperationContext) throws(PlanError) {
        let d = context.decoder
        let o = try d.options(
            options, operation: Self.name, allowed: ["field", "shape", "restore", "exact"], required: ["field", "shape"])
        self.init(
            field: try d.field(o["field"]!, "'field'"),
            shape: Shape(
                rawValue: try d.choice(o["shape"]!, "'shape'", [Shape.object.rawValue, Shape.name.rawValue, Shape.bareNames.rawValue]))!,
            restore: try o["restore"].map { node throws(PlanError) in try d.bool(node, "'restore'") } ?? false,
            exact: try o["exact"].map { node throws(PlanError) in try d.bool(node, "'exact'") } ?? true,
            location: context.location)
    }

    public var description: String { "normalize-file \(field) to \(shape.rawValue)" + (restore ? " (restorable)" : "") }
    public var writtenFields: [FieldPath] { [field] }

    public var inversion: Inversion {
        if shape == .bareNames {
            return .exact([NormalizeFileOperation(field: field, shape: .object, restore: true, exact: true, location: location)])
        }
        guard restore else { return .lossy("it does not say how to restore the original shape (add 'restore: true')") }
        guard exact else { return .lossy("it normalises with 'exact: false', so some values do not come back") }
        return .exact([NormalizeFileOperation(field: field, shape: .bareNames, restore: true, exact: true, location: location)])
    }

    public func apply(to edit: inout RecordEdit) throws(MigrationError) -> Bool {
        guard let value = edit.field(field) else { return false }
        let result: JSONValue
        if case .array(let items) = value {
            var out: [JSONValue] = []
            out.reserveCapacity(items.count)
            for (i, item) in items.enumerated() {
                if let n = try normalize(item, at: field.appending(String(i)), in: &edit, removing: []) {
                    out.append(n)
                } else if edit.policy == .keep {
                    out.append(item)
                }
            }
            result = .array(out)
        } else {
            guard let n = try normalize(value, at: field, in: &edit, removing: nil) else { return false }
            result = n
        }
        guard result != value else { return false }
        return try edit.set(field, result)
    }

    /// The normalised value, or `nil` after reporting a bad one.
    /// `path` is only built for a reject.
    private func normalize(_ value: JSONValue, at path: @autoclosure () -> FieldPath, in edit: inout RecordEdit, removing: [FieldPath]?)
        throws(MigrationError) -> JSONValue?
    {
        guard let n = Self.normalized(value, to: shape) else {
            try edit.reject(
                at: path(), value: value, reason: "not a Salada File value (a name string or an object with a 'name' string)",
                removing: removing)
            return nil
        }
        if restore, exact, shape != .bareNames, let back = Self.normalized(n, to: .bareNames), !back.isEquivalent(to: value) {
            try edit.reject(
                at: path(), value: value,
                reason: "\(value.preview()) would come back as \(back.preview()) if the plan were reversed (set 'exact: false' to accept)",
                removing: removing)
            return nil
        }
        return n
    }

    /// `value` in `shape`, or `nil` when it is not a File value.
    static func normalized(_ value: JSONValue, to shape: Shape) -> JSONValue? {
        switch value {
        case .string(let s):
            if s.hasPrefix("data:") { return value }
            return shape == .object ? .object(JSONObject([JSONObject.Member(key: "name", value: value)])) : value
        case .object(let o):
            guard case .string(let name)? = o["name"] else { return nil }
            switch shape {
            case .object: return value
            case .name: return .string(name)
            case .bareNames: return o.count == 1 ? .string(name) : value
            }
        default:
            return nil
        }
    }
}
