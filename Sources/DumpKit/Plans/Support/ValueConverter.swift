import JSONStream

/// Converts one value between two kinds (`string` -> `integer`, `date` -> `milliseconds`), reading
/// leniently; exactness is checked by converting back with `inverse`.
struct ValueConverter: Sendable {
    /// The kinds a value can be converted between.
    enum Kind: String, Sendable, CaseIterable {
        case string, number, integer, boolean
        /// Date text in `format` and `time-zone`.
        case date
        /// Seconds or milliseconds since 1970 (or any duration) as a number.
        case seconds, milliseconds
    }

    let from: Kind
    let to: Kind
    /// The date format, for conversions from or to `date`.
    let template: DateTemplate?

    /// The pairs that can be converted; each has its reverse in the list.
    static let pairs: Set<[Kind]> = [
        [.string, .number], [.number, .string], [.string, .integer], [.integer, .string],
        [.string, .boolean], [.boolean, .string], [.boolean, .integer], [.integer, .boolean],
        [.date, .milliseconds], [.milliseconds, .date], [.date, .seconds], [.seconds, .date],
        [.seconds, .milliseconds], [.milliseconds, .seconds],
    ]

    /// The converter that undoes this one.
    var inverse: ValueConverter { ValueConverter(from: to, to: from, template: template) }

    /// The converted value, or why `value` cannot be converted.
    func convert(_ value: JSONValue) -> Result<JSONValue, ConversionFailure> {
        switch (from, to) {
        case (.string, .number):
            guard case .string(let s) = value else { return typeMismatch(value, "a string") }
            if ExactDecimal(s) != nil { return .success(.number(JSONNumber(text: s))) }
            guard let d = ExactDecimal(s, lenient: true) else { return fail("'\(s)' is not a number") }
            return .success(.number(d.jsonNumber))
        case (.string, .integer):
            guard case .string(let s) = value else { return typeMismatch(value, "a string") }
            guard let d = ExactDecimal(s, lenient: true) else { return fail("'\(s)' is not a number") }
            guard d.isInteger else { return fail("'\(s)' is not a whole number") }
            return .success(.number(d.jsonNumber))
        case (.number, .string), (.integer, .string):
            guard case .number(let n) = value else { return typeMismatch(value, "a number") }
            if from == .integer, ExactDecimal(n.text)?.isInteger != true { return fail("\(n.text) is not a whole number") }
            return .success(.string(n.text))
        case (.string, .boolean):
            guard case .string(let s) = value else { return typeMismatch(value, "a string") }
            switch s.lowercased().trimmingSpaces {
            case "true", "yes", "on", "1": return .success(.bool(true))
            case "false", "no", "off", "0": return .success(.bool(false))
            default: return fail("'\(s)' is not a boolean (true or false)")
            }
        case (.boolean, .string):
            guard case .bool(let b) = value else { return typeMismatch(value, "a boolean") }
            return .success(.string(b ? "true" : "false"))
        case (.boolean, .integer):
            guard case .bool(let b) = value else { return typeMismatch(value, "a boolean") }
            return .success(.number(b ? "1" : "0"))
        case (.integer, .boolean):
            guard case .number(let n) = value, let d = ExactDecimal(n.text) else { return typeMismatch(value, "a number") }
            return .success(.bool(d != ExactDecimal(0)))
        case (.seconds, .milliseconds), (.milliseconds, .seconds):
            guard case .number(let n) = value, let d = ExactDecimal(n.text) else { return typeMismatch(value, "a number") }
            let shifted = d.shifted(by: from == .seconds ? 3 : -3)
            return .success(.number((to == .milliseconds ? shifted.rounded() : shifted).jsonNumber))
        case (.date, .milliseconds), (.date, .seconds):
            guard case .string(let s) = value else { return typeMismatch(value, "a date string") }
            guard let ms = template!.milliseconds(from: s) else {
                return fail("'\(s)' is not a date in the format '\(template!.format)' (\(template!.zoneName))")
            }
            let d = ExactDecimal(ms)
            return .success(.number((to == .seconds ? d.shifted(by: -3) : d).jsonNumber))
        case (.milliseconds, .date), (.seconds, .date):
            guard case .number(let n) = value, let d = ExactDecimal(n.text) else { return typeMismatch(value, "a number") }
            guard let ms = (from == .seconds ? d.shifted(by: 3) : d).rounded().int64Value, abs(ms) < 253_402_300_800_000 else {
                return fail("\(n.text) is out of the range of dates")
            }
            return .success(.string(template!.string(fromMilliseconds: ms)))
        default:
            return fail("cannot convert \(from.rawValue) to \(to.rawValue)")
        }
    }

    private func typeMismatch(_ value: JSONValue, _ expected: String) -> Result<JSONValue, ConversionFailure> {
        fail("expected \(expected) to convert to \(to.rawValue), found \(value.typeName.article) \(value.typeName)")
    }

    private func fail(_ reason: String) -> Result<JSONValue, ConversionFailure> { .failure(ConversionFailure(reason: reason)) }
}

/// Why a value could not be converted.
struct ConversionFailure: Error {
    let reason: String
}

extension String {
    /// The string without leading and trailing spaces.
    var trimmingSpaces: String {
        var s = Substring(self)
        while s.first == " " { s = s.dropFirst() }
        while s.last == " " { s = s.dropLast() }
        return String(s)
    }
}
