/// A Pratt parser from rule expression text to a `RulesExpression` syntax tree.
///
/// It accepts the JavaScript subset Firebase rules use: literals, variables, `!`/`-` prefixes, the
/// binary operators with JavaScript precedence, `?:`, member access, indexing, calls and array literals.
/// Anything else (assignment, several statements, `**`, object literals, ...) is a syntax error.
///
/// Nesting is limited to `RulesExpression.maxDepth` levels, both of brackets, conditionals and prefix
/// operators while parsing and of the resulting tree; chains of `&&` or `||` stay flat (`logical`).
struct RulesParser {
    private var lexer: RulesLexer
    private var token: RulesToken
    /// Brackets, conditionals and prefix operators open at the current token.
    private var depth = 0

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

    /// Goes one nesting level deeper at `offset`; refuses more than `RulesExpression.maxDepth`.
    private mutating func enter(at offset: Int) throws(RulesExpressionError) {
        depth += 1
        if depth > RulesExpression.maxDepth { throw Self.tooDeep(at: offset) }
    }

    private static func tooDeep(at offset: Int) -> RulesExpressionError {
        RulesExpressionError("expression nested deeper than \(RulesExpression.maxDepth) levels", at: offset)
    }

    /// A node, refused when the tree gets deeper than `RulesExpression.maxDepth`.
    private func make(_ node: RulesExpression.Node, at offset: Int) throws(RulesExpressionError) -> RulesExpression {
        let e = RulesExpression(node: node, offset: offset)
        guard e.height <= RulesExpression.maxDepth else { throw Self.tooDeep(at: offset) }
        return e
    }

    /// Parses operators binding tighter than `precedence` (0 admits everything, 1 stops before `?:`).
    private mutating func expression(above precedence: Int) throws(RulesExpressionError) -> RulesExpression {
        var left = try prefix()
        // Consecutive operands of one `&&` or `||`, collected before they become one `logical` node.
        var chain: (op: RulesBinaryOperator, operands: [RulesExpression], operators: [Int])?
        func close() throws(RulesExpressionError) {
            guard let c = chain else { return }
            left = try make(.logical(c.op, c.operands, operators: c.operators), at: c.operators[0])
            chain = nil
        }
        while case .symbol(let s) = token.kind {
            if s == "?" {
                guard precedence < 1 else { break }
                try close()
                let at = token.offset
                try advance()
                try enter(at: at)
                let then = try expression(above: 0)
                try expect(":")
                let otherwise = try expression(above: 0)
                depth -= 1
                left = try make(.conditional(left, then, otherwise), at: at)
                continue
            }
            guard let op = RulesBinaryOperator(rawValue: s), op.precedence > precedence else { break }
            let at = token.offset
            try advance()
            let right = try expression(above: op.precedence)
            if op == .and || op == .or {
                if chain?.op == op {
                    chain!.operands.append(right)
                    chain!.operators.append(at)
                } else {
                    try close()
                    chain = (op, [left, right], [at])
                }
            } else {
                try close()
                left = try make(.binary(op, left, right), at: at)
            }
        }
        try close()
        return left
    }

    /// Parses prefix operators, then a primary expression with its member accesses and calls.
    private mutating func prefix() throws(RulesExpressionError) -> RulesExpression {
        let offset = token.offset
        if case .symbol(let s) = token.kind, let op = RulesUnaryOperator(rawValue: s) {
            try advance()
            try enter(at: offset)
            let operand = try prefix()
            depth -= 1
            return try make(.unary(op, operand), at: offset)
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
                e = try make(.member(e, name), at: nameOffset)
            case "[":
                try advance()
                try enter(at: at)
                let key = try expression(above: 0)
                depth -= 1
                try expect("]")
                e = try make(.index(e, key), at: at)
            case "(":
                try advance()
                let arguments = try list(closing: ")", openedAt: at)
                e = try make(.call(e, arguments), at: at)
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
            try enter(at: offset)
            var inner = try expression(above: 0)
            depth -= 1
            try expect(")")
            inner.offset = offset
            return inner
        case .symbol("["):
            try advance()
            return try make(.array(try list(closing: "]", openedAt: offset)), at: offset)
        default:
            throw unexpected()
        }
        try advance()
        return try make(node, at: offset)
    }

    /// Parses comma-separated expressions up to `closing`, which has not been read yet; the opening
    /// bracket was at `openedAt`.
    private mutating func list(closing: String, openedAt: Int) throws(RulesExpressionError) -> [RulesExpression] {
        var items: [RulesExpression] = []
        if token.kind == .symbol(closing) {
            try advance()
            return items
        }
        try enter(at: openedAt)
        while true {
            items.append(try expression(above: 0))
            if token.kind == .symbol(",") {
                try advance()
                continue
            }
            depth -= 1
            try expect(closing)
            return items
        }
    }
}
