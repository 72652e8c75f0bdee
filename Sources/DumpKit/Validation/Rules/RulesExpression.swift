/// One node of a parsed rule expression, with where it is in the expression text.
///
/// Offsets count Unicode scalars from 0, so they point at the same place however the text was escaped
/// in the rules file. A node's offset is its first scalar, except that operators point at the operator,
/// member accesses at the member name, and calls and indexing at their opening bracket.
struct RulesExpression {
    /// What the node is.
    indirect enum Node {
        case null
        case boolean(Bool)
        case number(Double)
        case string(String)
        /// A regular expression literal `/pattern/flags`; only `matches()` accepts it.
        case regex(pattern: String, flags: String)
        /// `auth`, `now`, `root`, `data`, `newData`, `query` or a `$wildcard`.
        case variable(String)
        /// `[a, b]`, allowed only as the argument of `hasChildren()`.
        case array([RulesExpression])
        case unary(RulesUnaryOperator, RulesExpression)
        case binary(RulesBinaryOperator, RulesExpression, RulesExpression)
        case conditional(RulesExpression, RulesExpression, RulesExpression)
        /// `object.name`
        case member(RulesExpression, String)
        /// `object[key]`
        case index(RulesExpression, RulesExpression)
        /// `callee(arguments)`
        case call(RulesExpression, [RulesExpression])
    }

    var node: Node
    /// Where the node is in the expression (see the type's summary).
    var offset: Int
}

/// A prefix operator of the rules language.
enum RulesUnaryOperator: String {
    case not = "!"
    case negate = "-"
}

/// An infix operator of the rules language, with JavaScript's precedence.
enum RulesBinaryOperator: String, CaseIterable {
    case or = "||"
    case and = "&&"
    case equal = "=="
    case notEqual = "!="
    case strictEqual = "==="
    case strictNotEqual = "!=="
    case less = "<"
    case lessOrEqual = "<="
    case greater = ">"
    case greaterOrEqual = ">="
    case plus = "+"
    case minus = "-"
    case times = "*"
    case divide = "/"
    case remainder = "%"

    /// Binding strength; larger binds tighter. The conditional `?:` sits below all of these at 1.
    var precedence: Int {
        switch self {
        case .or: return 2
        case .and: return 3
        case .equal, .notEqual, .strictEqual, .strictNotEqual: return 4
        case .less, .lessOrEqual, .greater, .greaterOrEqual: return 5
        case .plus, .minus: return 6
        case .times, .divide, .remainder: return 7
        }
    }
}

/// Why an expression was rejected at load time, and where in its text.
public struct RulesExpressionError: Error, Equatable, CustomStringConvertible, Sendable {
    /// A one-line explanation, e.g. `unknown function 'foo'`.
    public var message: String
    /// Offset in the expression, counted in Unicode scalars from 0.
    public var offset: Int

    public init(_ message: String, at offset: Int) {
        self.message = message
        self.offset = offset
    }

    public var description: String { "\(message) (offset \(offset))" }
}
