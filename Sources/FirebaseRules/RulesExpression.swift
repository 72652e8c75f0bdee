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
        /// `a || b || c`: the operands of consecutive `&&` or `||` (one operator), kept flat so that
        /// a long chain does not nest; `operators` are the offsets of the operators between them.
        case logical(RulesBinaryOperator, [RulesExpression], operators: [Int])
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
    /// The number of nodes on the longest path down from this one (1 for a leaf).
    let height: Int

    /// The most `height` (and nesting of brackets and prefix operators) the parser accepts, so that
    /// compiling, evaluating and freeing an expression never recurse deeply.
    static let maxDepth = 256

    init(node: Node, offset: Int) {
        self.node = node
        self.offset = offset
        switch node {
        case .null, .boolean, .number, .string, .regex, .variable: height = 1
        case .array(let items): height = 1 + (items.map(\.height).max() ?? 0)
        case .unary(_, let x), .member(let x, _): height = 1 + x.height
        case .binary(_, let l, let r), .index(let l, let r): height = 1 + max(l.height, r.height)
        case .logical(_, let operands, _): height = 1 + (operands.map(\.height).max() ?? 0)
        case .conditional(let t, let a, let b): height = 1 + max(t.height, a.height, b.height)
        case .call(let callee, let arguments): height = 1 + max(callee.height, arguments.map(\.height).max() ?? 0)
        }
    }
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
