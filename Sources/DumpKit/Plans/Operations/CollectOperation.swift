import JSONStream

/// Gathers several fields into one array, skipping missing ones:
/// `collect: { fields: [image1, image2, image3], into: images }`.
///
/// The sources are removed and the array is appended at the end; when none is present nothing is
/// written (the database has no empty arrays). With `exact` (the default) the present fields must
/// come first (`image1`, `image2`, not `image2` alone), since `spread` puts the array back from
/// the first field on; a record with a gap is a bad value. `exact: false` closes gaps and makes
/// the step lossy.
public struct CollectOperation: PlanOperation {
    public static let name = "collect"
    public let location: PlanLocation
    /// The fields gathered, in array order.
    public let fields: [FieldPath]
    /// The array field written.
    public let into: FieldPath
    /// Whether gaps are bad values.
    public let exact: Bool

    init(fields: [FieldPath], into: FieldPath, exact: Bool, location: PlanLocation) {
        self.fields = fields
        self.into = into
        self.exact = exact
        self.location = location
    }

    init(_ options: PlanNode, _ context: OperationContext) throws(PlanError) {
        let d = context.decoder
        let o = try d.options(options, operation: Self.name, allowed: ["fields", "into", "exact"], required: ["fields", "into"])
        let fieldsNode = o["fields"]!
        let fields = try d.fields(fieldsNode, "'fields'")
        let into = try d.field(o["into"]!, "'into'")
        try Self.checkDistinct(fields, into, d, fieldsNode.location)
        self.init(
            fields: fields, into: into, exact: try o["exact"].map { node throws(PlanError) in try d.bool(node, "'exact'") } ?? true,
            location: context.location)
    }

    /// Refuses lists that name a field twice or that overlap the array field.
    static func checkDistinct(_ fields: [FieldPath], _ array: FieldPath, _ d: PlanDecoder, _ location: PlanLocation) throws(PlanError) {
        for (i, f) in fields.enumerated() {
            if fields[..<i].contains(where: { $0.overlaps(f) }) {
                throw d.error(location, "'\(f)' is listed twice or inside another listed field")
            }
            if f.overlaps(array) { throw d.error(location, "'\(f)' overlaps the array field '\(array)'") }
        }
    }

    public var description: String { "collect \(fields.map(\.description).joined(separator: ", ")) into \(into)" }
    public var writtenFields: [FieldPath] { fields + [into] }

    public var inversion: Inversion {
        guard exact else { return .lossy("it closes gaps with 'exact: false', so spreading does not put values back in their fields") }
        return .exact([SpreadOperation(field: into, into: fields, exact: true, location: location)])
    }

    public func apply(to edit: inout RecordEdit) throws(MigrationError) -> Bool {
        // One pass: the present values in order, and whether a missing field comes before a present one.
        var present: [JSONValue] = []
        var sawGap = false
        var gapBeforePresent = false
        for f in fields {
            if let v = edit.field(f) {
                if present.isEmpty { present.reserveCapacity(fields.count) }
                present.append(v)
                if sawGap { gapBeforePresent = true }
            } else {
                sawGap = true
            }
        }
        guard !present.isEmpty else { return false }
        if let existing = edit.field(into) {
            try edit.reject(at: into, value: existing, reason: "cannot collect into '\(into)': it already exists")
            return false
        }
        if exact, gapBeforePresent {
            let values = fields.map { edit.field($0) }
            let gap = values.firstIndex(where: { $0 == nil })!
            var group = JSONObject()
            for (f, v) in zip(fields, values) { if let v { group[f.description] = v } }
            try edit.reject(
                at: nil, value: .object(group),
                reason:
                    "'\(fields[gap])' is missing but a later field is present; spreading '\(into)' back would shift the values (set 'exact: false' to accept)",
                removing: fields)
            return false
        }
        var index = 0
        for f in fields where edit.field(f) != nil {
            edit.noteMoved(f, to: into.appending(String(index)))
            index += 1
        }
        for f in fields { edit.remove(f) }
        return try edit.set(into, .array(present))
    }
}
