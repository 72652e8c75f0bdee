import JSONStream

/// Why evaluating a rule failed at run time (e.g. `null.contains('x')`); Firebase then treats the rule
/// as false.
public struct RulesEvaluationError: Error, Equatable, CustomStringConvertible, Sendable {
    /// A one-line explanation.
    public var message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }
}

/// A value while a rule is evaluated, with JavaScript-like behaviour where the rules language follows it.
enum RulesValue {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    /// A JSON object or array: `auth` and its members, `query`.
    case object(JSONValue)
    /// What `val()` returns for a node with children; materialised only when compared.
    case node(RulesSnapshot)
    case snapshot(RulesSnapshot)
    case regex(RulesRegex)

    /// A JSON value as a rules value: numbers become doubles, objects and arrays stay JSON.
    init(_ json: JSONValue) {
        switch json {
        case .null: self = .null
        case .bool(let b): self = .bool(b)
        case .number(let n): self = .number(n.doubleValue)
        case .string(let s): self = .string(s)
        case .object, .array: self = .object(json)
        }
    }

    /// The type's name in messages.
    var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .number: return "number"
        case .string: return "string"
        case .object, .node: return "object"
        case .snapshot: return "snapshot"
        case .regex: return "regular expression"
        }
    }

    /// The value shown in messages.
    var display: String {
        switch self {
        case .null: return "null"
        case .bool(let b): return String(b)
        case .number(let d): return Self.numberText(d)
        case .string(let s): return "'\(s)'"
        default: return typeName
        }
    }

    /// JavaScript's `String(number)`: `1`, `0.5`, `1e+21`, `1e-7`, `NaN`, `Infinity`.
    static func numberText(_ d: Double) -> String {
        if d.isNaN { return "NaN" }
        if d.isInfinite { return d < 0 ? "-Infinity" : "Infinity" }
        if d == 0 { return "0" }
        // Swift prints the shortest round-tripping digits; re-lay them out as ECMAScript does.
        let text = "\(abs(d))"
        let parts = text.split(separator: "e", maxSplits: 1)
        var mantissa = String(parts[0])
        var exponent = parts.count > 1 ? Int(parts[1])! : 0
        if let dot = mantissa.firstIndex(of: ".") {
            exponent += mantissa.distance(from: mantissa.startIndex, to: dot)
            mantissa.remove(at: dot)
        } else {
            exponent += mantissa.count
        }
        // `mantissa` is now the digits and `exponent` the position of the decimal point after them.
        while mantissa.hasPrefix("0") {
            mantissa.removeFirst()
            exponent -= 1
        }
        while mantissa.hasSuffix("0") { mantissa.removeLast() }
        let k = mantissa.count
        let n = exponent
        let body: String
        if k <= n && n <= 21 {
            body = mantissa + String(repeating: "0", count: n - k)
        } else if 0 < n && n <= 21 {
            body = String(mantissa.prefix(n)) + "." + String(mantissa.dropFirst(n))
        } else if -6 < n && n <= 0 {
            body = "0." + String(repeating: "0", count: -n) + mantissa
        } else {
            let e = n - 1
            let digits = k == 1 ? mantissa : String(mantissa.prefix(1)) + "." + String(mantissa.dropFirst())
            body = digits + "e" + (e < 0 ? "-" : "+") + String(abs(e))
        }
        return d < 0 ? "-" + body : body
    }

    /// The text JavaScript would use for this value as a property key or in string concatenation.
    var keyText: String? {
        switch self {
        case .null: return "null"
        case .bool(let b): return String(b)
        case .number(let d): return Self.numberText(d)
        case .string(let s): return s
        default: return nil
        }
    }

    /// `a === b` for the types equality accepts (null, booleans, numbers, strings, objects); objects are
    /// compared by content. Other types are an error.
    static func equal(_ a: RulesValue, _ b: RulesValue) throws(RulesEvaluationError) -> Bool {
        switch (a, b) {
        case (.snapshot, _), (.regex, _), (_, .snapshot), (_, .regex):
            throw RulesEvaluationError("cannot compare \(a.typeName) with \(b.typeName)")
        case (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        case (.number(let x), .number(let y)): return x == y
        case (.string(let x), .string(let y)): return x.utf8.elementsEqual(y.utf8)
        case (.object, .object), (.object, .node), (.node, .object), (.node, .node):
            return a.materialized == b.materialized
        default: return false
        }
    }

    /// The JSON of an object value, with export wrappers (`.priority`, `.value`) removed.
    private var materialized: JSONValue? {
        switch self {
        case .object(let json): return RulesSnapshot.plain(json)
        case .node(let snapshot): return snapshot.plainValue
        default: return nil
        }
    }

    /// `a < b` (or `<=` when `orEqual`): both sides must be numbers, strings or null, and of one type.
    static func less(_ a: RulesValue, _ b: RulesValue, orEqual: Bool) throws(RulesEvaluationError) -> Bool {
        switch (a, b) {
        case (.number(let x), .number(let y)): return orEqual ? x <= y : x < y
        case (.string(let x), .string(let y)):
            if orEqual && x.utf16.elementsEqual(y.utf16) { return true }
            return x.utf16.lexicographicallyPrecedes(y.utf16)
        case (.null, .null): return orEqual
        default:
            throw RulesEvaluationError(
                "cannot order \(a.display) and \(b.display): both sides must be numbers, strings or null, of the same type")
        }
    }

    /// `object.key` on a value whose type is only known at run time.
    static func member(of object: RulesValue, _ key: String) throws(RulesEvaluationError) -> RulesValue {
        switch object {
        case .null, .bool, .number:
            return .null
        case .string(let s):
            if key == "length" { return .number(Double(s.utf16.count)) }
            if RulesCompiler.stringMethods[key] != nil {
                throw RulesEvaluationError("string method '\(key)' must be called")
            }
            return .null
        case .object(let json):
            return json[segment: key].map(RulesValue.init) ?? .null
        case .node(let snapshot):
            return snapshot.plainValue?[segment: key].map(RulesValue.init) ?? .null
        case .snapshot, .regex:
            throw RulesEvaluationError("cannot read property '\(key)' of a \(object.typeName)")
        }
    }
}
