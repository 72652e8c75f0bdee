/// One token of a rule expression.
struct RulesToken: Equatable {
    enum Kind: Equatable {
        case number(Double)
        case string(String)
        case regex(pattern: String, flags: String)
        case identifier(String)
        /// An operator or punctuation mark such as `===`, `(` or `?`.
        case symbol(String)
        case end
    }

    var kind: Kind
    /// Offset of the token's first scalar in the expression.
    var offset: Int

    /// How the token reads in a message.
    var display: String {
        switch kind {
        case .number: return "number"
        case .string: return "string"
        case .regex: return "regular expression"
        case .identifier(let name): return "'\(name)'"
        case .symbol(let s): return "'\(s)'"
        case .end: return "end of expression"
        }
    }
}

/// Splits a rule expression into tokens.
///
/// A `/` starts a regular expression literal where an operand is expected (at the start, after an
/// operator or an opening bracket) and is division elsewhere, as in JavaScript.
struct RulesLexer {
    private let text: [Unicode.Scalar]
    private var position = 0
    /// Whether the previous token ends an operand, so that `/` means division.
    private var afterOperand = false

    init(_ expression: String) {
        text = Array(expression.unicodeScalars)
    }

    private static let symbols: [String] = [
        "===", "!==", "==", "!=", "<=", ">=", "&&", "||",
        "(", ")", "[", "]", ".", ",", "?", ":", "!", "<", ">", "+", "-", "*", "/", "%",
    ]

    /// Reads the next token.
    mutating func next() throws(RulesExpressionError) -> RulesToken {
        skipWhitespace()
        let start = position
        guard position < text.count else { return RulesToken(kind: .end, offset: start) }
        let c = text[position]
        let token: RulesToken.Kind
        if Self.isDigit(c) || (c == "." && position + 1 < text.count && Self.isDigit(text[position + 1])) {
            token = try number()
        } else if c == "'" || c == "\"" {
            token = try string(quote: c)
        } else if Self.isIdentifierStart(c) {
            while position < text.count, Self.isIdentifierPart(text[position]) { position += 1 }
            token = .identifier(String(String.UnicodeScalarView(text[start..<position])))
        } else if c == "/" && !afterOperand {
            token = try regex()
        } else {
            token = try symbol()
        }
        switch token {
        case .number, .string, .regex, .identifier: afterOperand = true
        case .symbol(let s): afterOperand = s == ")" || s == "]"
        case .end: afterOperand = false
        }
        return RulesToken(kind: token, offset: start)
    }

    private mutating func skipWhitespace() {
        while position < text.count, text[position].properties.isWhitespace { position += 1 }
    }

    private mutating func symbol() throws(RulesExpressionError) -> RulesToken.Kind {
        for s in Self.symbols where matches(s) {
            position += s.unicodeScalars.count
            return .symbol(s)
        }
        let c = text[position]
        switch c {
        case "=": throw RulesExpressionError("assignment is not allowed; use '==' to compare", at: position)
        case ";": throw RulesExpressionError("a rule is a single expression; ';' is not allowed", at: position)
        case "&", "|": throw RulesExpressionError("bitwise '\(c)' is not supported; use '\(c)\(c)'", at: position)
        default: throw RulesExpressionError("unexpected character '\(c)'", at: position)
        }
    }

    private func matches(_ s: String) -> Bool {
        var i = position
        for u in s.unicodeScalars {
            guard i < text.count, text[i] == u else { return false }
            i += 1
        }
        return true
    }

    private mutating func number() throws(RulesExpressionError) -> RulesToken.Kind {
        let start = position
        while position < text.count, Self.isDigit(text[position]) { position += 1 }
        if position < text.count, text[position] == "." {
            position += 1
            while position < text.count, Self.isDigit(text[position]) { position += 1 }
        }
        if position < text.count, text[position] == "e" || text[position] == "E" {
            var p = position + 1
            if p < text.count, text[p] == "+" || text[p] == "-" { p += 1 }
            if p < text.count, Self.isDigit(text[p]) {
                position = p
                while position < text.count, Self.isDigit(text[position]) { position += 1 }
            }
        }
        if position < text.count, Self.isIdentifierPart(text[position]) {
            throw RulesExpressionError("unexpected '\(text[position])' after a number", at: position)
        }
        let literal = String(String.UnicodeScalarView(text[start..<position]))
        guard let value = Double(literal) else { throw RulesExpressionError("invalid number '\(literal)'", at: start) }
        return .number(value)
    }

    private mutating func string(quote: Unicode.Scalar) throws(RulesExpressionError) -> RulesToken.Kind {
        let start = position
        position += 1
        var out = String.UnicodeScalarView()
        while true {
            guard position < text.count else { throw RulesExpressionError("unterminated string", at: start) }
            let c = text[position]
            position += 1
            if c == quote { return .string(String(out)) }
            if c == "\n" || c == "\r" { throw RulesExpressionError("line break inside a string", at: position - 1) }
            guard c == "\\" else {
                out.append(c)
                continue
            }
            guard position < text.count else { throw RulesExpressionError("unterminated string", at: start) }
            let e = text[position]
            position += 1
            switch e {
            case "n": out.append("\n")
            case "t": out.append("\t")
            case "r": out.append("\r")
            case "b": out.append("\u{08}")
            case "f": out.append("\u{0C}")
            case "v": out.append("\u{0B}")
            case "0": out.append("\u{00}")
            case "x": out.append(try hexScalar(digits: 2, escapeAt: position - 2))
            case "u":
                if position < text.count, text[position] == "{" {
                    let close = text[position...].firstIndex(of: "}") ?? text.count
                    let hex = String(String.UnicodeScalarView(text[(position + 1)..<close]))
                    guard close < text.count, !hex.isEmpty, let v = UInt32(hex, radix: 16), let u = Unicode.Scalar(v) else {
                        throw RulesExpressionError("invalid \\u{...} escape", at: position - 2)
                    }
                    position = close + 1
                    out.append(u)
                } else {
                    out.append(try hexScalar(digits: 4, escapeAt: position - 2))
                }
            default: out.append(e)  // \' \" \\ \/ and any other character stand for themselves
            }
        }
    }

    private mutating func hexScalar(digits: Int, escapeAt offset: Int) throws(RulesExpressionError) -> Unicode.Scalar {
        guard position + digits <= text.count,
            let v = UInt32(String(String.UnicodeScalarView(text[position..<(position + digits)])), radix: 16),
            let u = Unicode.Scalar(v)
        else { throw RulesExpressionError("invalid hexadecimal escape", at: offset) }
        position += digits
        return u
    }

    private mutating func regex() throws(RulesExpressionError) -> RulesToken.Kind {
        let start = position
        position += 1
        var body = String.UnicodeScalarView()
        var inClass = false
        while true {
            guard position < text.count, text[position] != "\n" else {
                throw RulesExpressionError("unterminated regular expression", at: start)
            }
            let c = text[position]
            position += 1
            if c == "/" && !inClass { break }
            body.append(c)
            if c == "\\" {
                guard position < text.count else { throw RulesExpressionError("unterminated regular expression", at: start) }
                body.append(text[position])
                position += 1
            } else if c == "[" {
                inClass = true
            } else if c == "]" {
                inClass = false
            }
        }
        guard !body.isEmpty else { throw RulesExpressionError("empty regular expression", at: start) }
        let flagsStart = position
        while position < text.count, Self.isIdentifierPart(text[position]) { position += 1 }
        return .regex(pattern: String(body), flags: String(String.UnicodeScalarView(text[flagsStart..<position])))
    }

    static func isDigit(_ c: Unicode.Scalar) -> Bool { c >= "0" && c <= "9" }

    private static func isIdentifierStart(_ c: Unicode.Scalar) -> Bool {
        (c >= "a" && c <= "z") || (c >= "A" && c <= "Z") || c == "_" || c == "$"
    }

    private static func isIdentifierPart(_ c: Unicode.Scalar) -> Bool { isIdentifierStart(c) || isDigit(c) }
}
