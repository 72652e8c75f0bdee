import JSONStream

/// Replaces values by a table: `map: { field: progress, values: { これから着手: todo, 着手中: doing }, unmapped: fail }`.
///
/// `values` is a mapping (YAML keys keep their type: `1:` is the number 1) or a list of `[from, to]`
/// pairs. Values missing from the table follow `unmapped`: `fail` (the default; a bad value), `keep`,
/// or `default` (replaced by the `default` option). With a one-to-one table and `exact` (the
/// default), a kept value that equals a mapped value is a bad value, since reversing would change it.
public struct MapOperation: PlanOperation {
    public static let name = "map"
    public let location: PlanLocation
    /// The fields mapped.
    public let fields: [FieldPath]
    /// The table, in the order written.
    public let table: [(from: JSONValue, to: JSONValue)]
    /// What happens to values the table does not list.
    public let unmapped: Unmapped
    /// Whether kept values must not be confusable with mapped ones.
    public let exact: Bool
    /// Whether no two table entries map to the same value (worked out once).
    private let oneToOne: Bool

    /// The rule for values the table does not list.
    public enum Unmapped: Sendable, Equatable {
        case fail, keep
        case `default`(JSONValue)
    }

    init(fields: [FieldPath], table: [(from: JSONValue, to: JSONValue)], unmapped: Unmapped, exact: Bool, location: PlanLocation) {
        self.fields = fields
        self.table = table
        self.unmapped = unmapped
        self.exact = exact
        self.location = location
        oneToOne = Self.isOneToOne(table)
    }

    init(_ options: PlanNode, _ context: OperationContext) throws(PlanError) {
        let d = context.decoder
        let o = try d.options(
            options, operation: Self.name, allowed: ["field", "values", "unmapped", "default", "exact"], required: ["field", "values"])
        fields = try d.fields(o["field"]!, "'field'")
        var table: [(from: JSONValue, to: JSONValue)] = []
        let values = o["values"]!
        switch values.content {
        case .mapping(let pairs):
            for (k, v) in pairs { table.append((k.jsonValue, v.jsonValue)) }
        case .sequence(let items):
            for item in items {
                guard case .sequence(let pair) = item.content, pair.count == 2 else {
                    throw d.error(item.location, "each item of 'values' must be a pair [from, to]")
                }
                table.append((pair[0].jsonValue, pair[1].jsonValue))
            }
        case .scalar:
            throw d.error(values.location, "'values' must be a mapping (from: to) or a list of [from, to] pairs")
        }
        if table.isEmpty { throw d.error(values.location, "'values' must not be empty") }
        for (i, entry) in table.enumerated() where table[..<i].contains(where: { $0.from.isEquivalent(to: entry.from) }) {
            throw d.error(values.location, "'values' lists \(entry.from.preview()) twice")
        }
        self.table = table
        let rule =
            try o["unmapped"].map { node throws(PlanError) in try d.choice(node, "'unmapped'", ["fail", "keep", "default"]) }
            ?? (o["default"] == nil ? "fail" : "default")
        switch rule {
        case "keep": unmapped = .keep
        case "default":
            guard let value = o["default"] else {
                throw d.error(o.location, "'unmapped: default' needs the option 'default' (the value to use)")
            }
            unmapped = .default(value.jsonValue)
        default: unmapped = .fail
        }
        if rule != "default", let extra = o["default"] { throw d.error(extra.location, "'default' only applies with 'unmapped: default'") }
        exact = try o["exact"].map { node throws(PlanError) in try d.bool(node, "'exact'") } ?? true
        location = context.location
        oneToOne = Self.isOneToOne(table)
    }

    public var description: String { "map \(fields.map(\.description).joined(separator: ", ")) (\(table.count) values)" }
    public var writtenFields: [FieldPath] { fields }

    /// Whether no two table entries map to the same value.
    private var isOneToOne: Bool { oneToOne }

    private static func isOneToOne(_ table: [(from: JSONValue, to: JSONValue)]) -> Bool {
        table.indices.allSatisfy { i in !table[..<i].contains { $0.to.isEquivalent(to: table[i].to) } }
    }

    /// The first table entry whose `from` is equivalent to `value`.
    private func entry(for value: JSONValue) -> (from: JSONValue, to: JSONValue)? {
        if case .string(let s) = value {
            // A string is equivalent only to an equal string.
            for entry in table { if case .string(let f) = entry.from, f == s { return entry } }
            return nil
        }
        return table.first(where: { $0.from.isEquivalent(to: value) })
    }

    public var inversion: Inversion {
        if case .default = unmapped { return .lossy("unmapped values are replaced by the default") }
        guard isOneToOne else { return .lossy("its table maps several values to the same value") }
        guard exact else { return .lossy("it keeps unmapped values with 'exact: false'") }
        let reversed = table.map { (from: $0.to, to: $0.from) }
        return .exact([MapOperation(fields: fields, table: reversed, unmapped: unmapped, exact: true, location: location)])
    }

    public func apply(to edit: inout RecordEdit) throws(MigrationError) -> Bool {
        var changed = false
        for field in fields {
            guard let value = edit.field(field) else { continue }
            if let entry = entry(for: value) {
                if entry.to != value, try edit.set(field, entry.to) { changed = true }
                continue
            }
            switch unmapped {
            case .fail:
                try edit.reject(at: field, value: value, reason: "\(value.preview()) is not in the table of 'map'")
            case .keep:
                if exact, isOneToOne, let entry = table.first(where: { $0.to.isEquivalent(to: value) }) {
                    try edit.reject(
                        at: field, value: value,
                        reason:
                            "\(value.preview()) is not in the table but equals what \(entry.from.preview()) maps to, so reversing the plan would change it (set 'exact: false' to accept)"
                    )
                }
            case .default(let d):
                if try edit.set(field, d) { changed = true }
            }
        }
        return changed
    }
}
