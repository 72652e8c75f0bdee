/// A Pratt parser from rule expression text to a `RulesExpression` syntax tree.
///
/// It accepts the JavaScript subset Firebase rules use: literals, variables, `!`/`-` prefixes, the
/// binary operators with JavaScript precedence, `?:`, member access, indexing, calls and array literals.
/// Anything else (assignment, several statements, `**`, object literals, ...) is a syntax error.
struct RulesParser {
    private var lexer: RulesLexer
    private var token: RulesToken

    /// Parses a whole expression; fails unless all of `text` is one expression.
    static func parse(_ text: String) throws(RulesExpressionError) -> RulesExpression {
        var parser = try RulesParser(text)
        let expression = try parser.expression(above: 0)
        guard parser.token.kind == .end else { throw parser.unexpected() }
        return expression
    }

    private init(_ text: String) throws(RulesExpressionError) {
        lexer = RulesLexer(text)
        token = try lexer.next()
    }

    private mutating func advance() throws(RulesExpressionError) {
        token = try lexer.next()
    }

    private func unexpected() -> RulesExpressionError {
        if token.kind == .end { return RulesExpressionError("unexpected end of expression", at: token.offset) }
        if token.kind == .symbol("*") { return RulesExpressionError("unexpected '*' ('**' is not supported)", at: token.offset) }
        return RulesExpressionError("unexpected \(token.display)", at: token.offset)
    }

    private mutating func expect(_ symbol: String) throws(RulesExpressionError) {
        guard token.kind == .symbol(symbol) else {
            if token.kind == .end { throw RulesExpressionError("expected '\(symbol)' before the end of expression", at: token.offset) }
            throw RulesExpressionError("expected '\(symbol)', found \(token.display)", at: token.offset)
        }
        try advance()
    }

    /// Parses operators binding tighter than `precedence` (0 admits everything, 1 stops before `?:`).
    private mutating func expression(above precedence: Int) throws(RulesExpressionError) -> RulesExpression {
        var left = try prefix()
        while case .symbol(let s) = token.kind {
            if s == "?" {
                guard precedence < 1 else { break }
                let at = token.offset
                try advance()
                let then = try expression(above: 0)
                try expect(":")
                let otherwise = try expression(above: 0)
                left = RulesExpression(node: .conditional(left, then, otherwise), offset: at)
                continue
            }
            guard let op = RulesBinaryOperator(rawValue: s), op.precedence > precedence else { break }
            let at = token.offset
            try advance()
            let right = try expression(above: op.precedence)
            left = RulesExpression(node: .binary(op, left, right), offset: at)
        }
        return left
    }

    /// Parses prefix operators, then a primary expression with its member accesses and calls.
    private mutating func prefix() throws(RulesExpressionError) -> RulesExpression {
        let offset = token.offset
        if case .symbol(let s) = token.kind, let op = RulesUnaryOperator(rawValue: s) {
            try advance()
            return RulesExpression(node: .unary(op, try prefix()), offset: offset)
        }
        var e = try primary()
        while case .symbol(let s) = token.kind {
            let at = token.offset
            switch s {
            case ".":
                try advance()
                guard case .identifier(let name) = token.kind else {
                    throw RulesExpressionError("expected a property name after '.', found \(token.display)", at: token.offset)
                }
                let nameOffset = token.offset
                try advance()
                e = RulesExpression(node: .member(e, name), offset: nameOffset)
            case "[":
                try advance()
                let key = try expression(above: 0)
                try expect("]")
                e = RulesExpression(node: .index(e, key), offset: at)
            case "(":
                try advance()
                let arguments = try list(closing: ")")
                e = RulesExpression(node: .call(e, arguments), offset: at)
            default:
                return e
            }
        }
        return e
    }

    private mutating func primary() throws(RulesExpressionError) -> RulesExpression {
        let offset = token.offset
        let node: RulesExpression.Node
        switch token.kind {
        case .number(let d): node = .number(d)
        case .string(let s): node = .string(s)
        case .regex(let pattern, let flags): node = .regex(pattern: pattern, flags: flags)
        case .identifier(let name):
            switch name {
            case "true": node = .boolean(true)
            case "false": node = .boolean(false)
            case "null": node = .null
            default: node = .variable(name)
            }
        case .symbol("("):
            try advance()
            var inner = try expression(above: 0)
            try expect(")")
            inner.offset = offset
            return inner
        case .symbol("["):
            try advance()
            return RulesExpression(node: .array(try list(closing: "]")), offset: offset)
        default:
            throw unexpected()
        }
        try advance()
        return RulesExpression(node: node, offset: offset)
    }

    /// Parses comma-separated expressions up to `closing`, which has not been read yet.
    private mutating func list(closing: String) throws(RulesExpressionError) -> [RulesExpression] {
        var items: [RulesExpression] = []
        if token.kind == .symbol(closing) {
            try advance()
            return items
        }
        while true {
            items.append(try expression(above: 0))
            if token.kind == .symbol(",") {
                try advance()
                continue
            }
            try expect(closing)
            return items
        }
    }
}
