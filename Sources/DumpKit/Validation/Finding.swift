import FirebaseRules
import JSONSchema

/// One problem found in a dump: validators report findings instead of throwing.
public struct Finding: Hashable, Sendable {
    /// How serious a finding is; `error` makes `dumpkit validate` exit with 1.
    public enum Severity: String, Hashable, Sendable, Comparable {
        case info, warning, error

        private var rank: Int {
            switch self {
            case .info: return 0
            case .warning: return 1
            case .error: return 2
            }
        }
        public static func < (a: Severity, b: Severity) -> Bool { a.rank < b.rank }
    }

    public var severity: Severity
    /// The rule or schema keyword that produced it, e.g. `schema:required`, `limits:key-length`,
    /// `rules:.validate`.
    public var rule: String
    /// JSON Pointer of the offending value in the dump.
    public var pointer: String
    /// One-line explanation.
    public var message: String
    /// 1-based input line and column of the value, when known.
    public var line: Int?
    public var column: Int?
    /// The check it belongs to when that is more than the rule, e.g. the schema file of a
    /// `schema:required` finding (JUnit output has one test case per group).
    public var group: String?
    /// Where in the schema the failed keyword is written, for `schema:` findings:
    /// `#/properties/name/minLength` (`URI#/...` in a referenced document), as ajv's `schemaPath`.
    public var schemaPath: String?

    public init(severity: Severity, rule: String, pointer: String, message: String, line: Int? = nil, column: Int? = nil) {
        self.severity = severity
        self.rule = rule
        self.pointer = pointer
        self.message = message
        self.line = line
        self.column = column
    }
}

extension Finding {
    /// A schema violation as an error finding, `schema:<keyword>`.
    init(_ violation: SchemaViolation) {
        self.init(severity: .error, rule: "schema:" + violation.keyword, pointer: violation.pointer, message: violation.message)
        schemaPath = violation.schemaPath
    }

    /// A rules violation as an error finding, `rules:.validate` or `rules:.write`.
    init(_ violation: RulesViolation) {
        self.init(severity: .error, rule: "rules:" + violation.rule.rawValue, pointer: violation.pointer, message: violation.message)
    }
}
