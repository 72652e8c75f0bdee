import JSONStream
import RegexEngine

/// One test of a step's `where`: a field and what it must be. A step applies to a record only when
/// all its conditions hold.
///
/// ```yaml
/// where:
///   kind: note                       # shorthand for equals
///   progress: { in: [着手中, 完了] }
///   date: { type: string, matches: '^\d{4}/' }
///   completed: { exists: false }
/// ```
public struct PlanCondition: Sendable, CustomStringConvertible {
    /// What the field must be.
    public enum Test: Sendable {
        case equals(JSONValue)
        case exists(Bool)
        case oneOf([JSONValue])
        /// The field is a string in which the regular expression (ECMA-262, as JSON Schema's `pattern`)
        /// finds a match (anchor it with `^...$`).
        case matches(String)
        /// The field has this JSON type: `string`, `number`, `integer`, `boolean`, `object`, `array`.
        case type(String)
    }

    /// The field tested.
    public let field: FieldPath
    /// What it must be.
    public let test: Test
    /// Where the condition is written.
    public let location: PlanLocation
    private let regex: ECMARegex?

    /// The JSON type names `type` accepts.
    static let typeNames = ["string", "number", "integer", "boolean", "object", "array"]

    init(field: FieldPath, test: Test, location: PlanLocation, regex: ECMARegex?) {
        self.field = field
        self.test = test
        self.location = location
        self.regex = regex
    }

    /// Reads the conditions of a `where` mapping (field: value, or field: {equals|exists|in|matches|type: ...}).
    static func decode(_ node: PlanNode, _ d: PlanDecoder) throws(PlanError) -> [PlanCondition] {
        var out: [PlanCondition] = []
        for m in try d.mapping(node, "'where'") {
            let field = try d.field(m.keyNode, "a field in 'where'")
            guard case .mapping = m.value.content else {
                out.append(PlanCondition(field: field, test: .equals(m.value.jsonValue), location: m.keyNode.location, regex: nil))
                continue
            }
            let tests = try d.options(
                m.value, operation: "where \(field)", allowed: ["equals", "exists", "in", "matches", "type"], required: [])
            if tests.members.isEmpty { throw d.error(m.value.location, "the condition on '\(field)' is empty") }
            for t in tests.members {
                let test: Test
                var regex: ECMARegex?
                switch t.key {
                case "equals": test = .equals(t.value.jsonValue)
                case "exists": test = .exists(try d.bool(t.value, "'exists'"))
                case "in": test = .oneOf(try d.list(t.value, "'in'").map(\.jsonValue))
                case "matches":
                    let pattern = try d.string(t.value, "'matches'")
                    do throws(ECMARegexError) {
                        regex = try ECMARegex(pattern)
                    } catch {
                        throw d.error(t.value.location, "'\(pattern)' is not a regular expression: \(error)")
                    }
                    test = .matches(pattern)
                default: test = .type(try d.choice(t.value, "'type'", typeNames))
                }
                out.append(PlanCondition(field: field, test: test, location: t.keyNode.location, regex: regex))
            }
        }
        return out
    }

    /// Whether the condition holds for a record value; throws when a `matches` search runs out of its
    /// step budget, so the answer is unknown.
    public func holds(in record: JSONValue?) throws(Undecided) -> Bool {
        let value = record?.field(field)
        switch test {
        case .equals(let expected): return value.map { $0.isEquivalent(to: expected) } ?? false
        case .exists(let expected): return (value != nil) == expected
        case .oneOf(let options): return value.map { v in options.contains { $0.isEquivalent(to: v) } } ?? false
        case .matches:
            guard case .string(let s)? = value, let regex else { return false }
            switch regex.search(s) {
            case .matched: return true
            case .notMatched: return false
            case .overBudget(let steps):
                let reason = "'\(field)' matches /\(regex.source)/ needs more than \(steps) steps on this \(s.utf8.count)-byte string"
                throw Undecided(condition: self, reason: reason)
            }
        case .type(let name):
            guard let value else { return false }
            if name == "integer" { return value.numberValue.flatMap { ExactDecimal($0.text)?.isInteger } ?? false }
            if name == "number" { return value.numberValue != nil }
            return value.typeName == name
        }
    }

    /// A condition whose `matches` search ran out of its step budget.
    public struct Undecided: Error, Sendable {
        /// The condition.
        public let condition: PlanCondition
        /// Why, for a reject.
        public let reason: String
    }

    public var description: String {
        switch test {
        case .equals(let v): return "\(field) equals \(v.preview(limit: 40))"
        case .exists(let b): return "\(field) \(b ? "exists" : "is missing")"
        case .oneOf(let vs): return "\(field) in \(JSONValue.array(vs).preview(limit: 40))"
        case .matches(let p): return "\(field) matches /\(p)/"
        case .type(let t): return "\(field) is \(t.article) \(t)"
        }
    }
}
