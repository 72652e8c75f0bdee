import JSONStream

/// Converts field values between kinds: `convert: { field: photo_count, to: integer }`,
/// `{ field: date, from: date, to: milliseconds, format: "yyyy/MM/dd HH:mm:ss", time-zone: Asia/Tokyo }`,
/// `{ field: savedAt, from: seconds, to: milliseconds }`.
///
/// With `exact` (the default) each converted value must convert back to the same value (`"007"` would
/// come back as `"7"`, 1.5 ms is not a whole millisecond); other values are bad values. `exact: false`
/// accepts them (rounding where needed) and makes the step lossy.
public struct ConvertOperation: PlanOperation {
    public static let name = "convert"
    public let location: PlanLocation
    /// The fields converted.
    public let fields: [FieldPath]
    let converter: ValueConverter
    /// Whether values must convert back unchanged.
    public let exact: Bool

    init(fields: [FieldPath], converter: ValueConverter, exact: Bool, location: PlanLocation) {
        self.fields = fields
        self.converter = converter
        self.exact = exact
        self.location = location
    }

    init(_ options: PlanNode, _ context: OperationContext) throws(PlanError) {
        let d = context.decoder
        let o = try d.options(
            options, operation: Self.name, allowed: ["field", "from", "to", "format", "time-zone", "exact"], required: ["field", "to"])
        fields = try d.fields(o["field"]!, "'field'")
        let kinds = ValueConverter.Kind.allCases.map(\.rawValue)
        let to = ValueConverter.Kind(rawValue: try d.choice(o["to"]!, "'to'", kinds))!
        let from: ValueConverter.Kind
        if let node = o["from"] {
            from = ValueConverter.Kind(rawValue: try d.choice(node, "'from'", kinds))!
        } else if [.number, .integer, .boolean].contains(to) {
            from = .string
        } else {
            throw d.error(o.location, "converting to \(to.rawValue) needs 'from' (one of \(kinds.joined(separator: ", ")))")
        }
        guard ValueConverter.pairs.contains([from, to]) else {
            let targets = ValueConverter.pairs.filter { $0[0] == from }.map { $0[1].rawValue }.sorted()
            throw d.error(
                o.location,
                "cannot convert \(from.rawValue) to \(to.rawValue) (\(from.rawValue) converts to \(targets.joined(separator: ", ")))")
        }
        var template: DateTemplate?
        if from == .date || to == .date {
            guard let format = o["format"], let zone = o["time-zone"] else {
                throw d.error(o.location, "date conversions need 'format' (e.g. \"yyyy/MM/dd HH:mm:ss\") and 'time-zone' (e.g. Asia/Tokyo)")
            }
            let formatText = try d.string(format, "'format'")
            let zoneText = try d.text(zone, "'time-zone'")
            do {
                template = try DateTemplate(format: formatText, timeZone: zoneText)
            } catch {
                throw d.error(format.location, error.message)
            }
        } else if let extra = o["format"] ?? o["time-zone"] {
            throw d.error(extra.location, "'format' and 'time-zone' only apply to conversions from or to date")
        }
        converter = ValueConverter(from: from, to: to, template: template)
        exact = try o["exact"].map { node throws(PlanError) in try d.bool(node, "'exact'") } ?? true
        location = context.location
    }

    public var description: String {
        var s = "convert \(fields.map(\.description).joined(separator: ", ")) from \(converter.from.rawValue) to \(converter.to.rawValue)"
        if let t = converter.template { s += " (\(t.format), \(t.zoneName))" }
        return s
    }

    public var writtenFields: [FieldPath] { fields }

    public var inversion: Inversion {
        guard exact else { return .lossy("it converts with 'exact: false', so some values do not convert back") }
        return .exact([ConvertOperation(fields: fields, converter: converter.inverse, exact: true, location: location)])
    }

    public func apply(to edit: inout RecordEdit) throws(MigrationError) -> Bool {
        var changed = false
        for field in fields {
            guard let value = edit.field(field) else { continue }
            switch converter.convert(value) {
            case .failure(let f):
                try edit.reject(at: field, value: value, reason: f.reason)
            case .success(let converted):
                if exact, let problem = roundTripProblem(value, converted) {
                    try edit.reject(at: field, value: value, reason: problem)
                    continue
                }
                if converted != value, try edit.set(field, converted) { changed = true }
            }
        }
        return changed
    }

    /// Why `converted` would not give `original` back when the plan is reversed, or `nil` when it would.
    private func roundTripProblem(_ original: JSONValue, _ converted: JSONValue) -> String? {
        switch converter.inverse.convert(converted) {
        case .success(let back) where back.isEquivalent(to: original): return nil
        case .success(let back):
            return "\(original.preview()) would come back as \(back.preview()) if the plan were reversed (set 'exact: false' to accept)"
        case .failure:
            return "\(original.preview()) would not convert back if the plan were reversed (set 'exact: false' to accept)"
        }
    }
}
