import JSONStream

/// Spreads an array over several fields, the inverse of `collect`:
/// `spread: { field: images, into: [image1, image2, image3] }`.
///
/// An array longer than the list, or a field of the list that already exists, is a bad value. With
/// `exact` (the default) a `null` element is a bad value too (collecting would drop it); `exact: false`
/// skips nulls and makes the step lossy.
public struct SpreadOperation: PlanOperation {
    public static let name = "spread"
    public let location: PlanLocation
    /// The array field.
    public let field: FieldPath
    /// The fields written, one per element.
    public let into: [FieldPath]
    /// Whether `null` elements are bad values.
    public let exact: Bool

    init(field: FieldPath, into: [FieldPath], exact: Bool, location: PlanLocation) {
        self.field = field
        self.into = into
        self.exact = exact
        self.location = location
    }

    init(_ options: PlanNode, _ context: OperationContext) throws(PlanError) {
        let d = context.decoder
        let o = try d.options(options, operation: Self.name, allowed: ["field", "into", "exact"], required: ["field", "into"])
        let field = try d.field(o["field"]!, "'field'")
        let intoNode = o["into"]!
        let into = try d.fields(intoNode, "'into'")
        try CollectOperation.checkDistinct(into, field, d, intoNode.location)
        self.init(
            field: field, into: into, exact: try o["exact"].map { node throws(PlanError) in try d.bool(node, "'exact'") } ?? true,
            location: context.location)
    }

    public var description: String { "spread \(field) into \(into.map(\.description).joined(separator: ", "))" }
    public var writtenFields: [FieldPath] { [field] + into }

    public var inversion: Inversion {
        guard exact else { return .lossy("it skips null elements with 'exact: false'") }
        return .exact([CollectOperation(fields: into, into: field, exact: true, location: location)])
    }

    public func apply(to edit: inout RecordEdit) throws(MigrationError) -> Bool {
        guard let value = edit.field(field) else { return false }
        guard case .array(let items) = value else {
            try edit.reject(
                at: field, value: value, reason: "expected an array to spread, found \(value.typeName.article) \(value.typeName)")
            return false
        }
        if items.count > into.count {
            try edit.reject(at: field, value: value, reason: "the array has \(items.count) elements but 'into' names \(into.count) fields")
            return false
        }
        if let taken = into.first(where: { edit.field($0) != nil }) {
            try edit.reject(at: field, value: value, reason: "cannot spread into '\(taken)': it already exists")
            return false
        }
        if exact, let hole = items.firstIndex(where: \.isNull) {
            try edit.reject(
                at: field, value: value, reason: "element \(hole) is null, which collecting would drop (set 'exact: false' to accept)")
            return false
        }
        edit.remove(field)
        for (index, (f, item)) in zip(into, items).enumerated() where !item.isNull {
            edit.noteMoved(field.appending(String(index)), to: f)
            try edit.set(f, item)
        }
        return true
    }
}
