/// Why a pattern is not a valid ECMA-262 regular expression (Unicode mode).
package struct ECMARegexError: Error, Sendable, CustomStringConvertible {
    package let message: String
    /// Offset of the problem in Unicode scalars from the start of the pattern.
    package let offset: Int
    package var description: String { "\(message) at offset \(offset)" }
}

/// Parses ECMA-262 pattern syntax with the Unicode (`u`) flag's stricter rules.
struct ECMARegexParser {
    private let s: [Unicode.Scalar]
    private var i = 0
    private var nextGroup = 1
    private var totalGroups = 0
    private var groupNames: [String: Int] = [:]
    private var namedReferences: [(name: String, offset: Int)] = []
    /// Groups and lookarounds open around `i`.
    private var depth = 0

    init(_ pattern: String) { s = Array(pattern.unicodeScalars) }

    /// The syntax tree and the number of capturing groups.
    mutating func parse() throws(ECMARegexError) -> (RegexNode, groups: Int) {
        totalGroups = countGroups()
        let node = try parseDisjunction()
        if i < s.count { throw fail(s[i] == ")" ? "unmatched ')'" : "unexpected '\(s[i])'") }
        for ref in namedReferences where groupNames[ref.name] == nil {
            throw ECMARegexError(message: "reference to undefined group name '\(ref.name)'", offset: ref.offset)
        }
        return (resolveNames(node), totalGroups)
    }

    private func fail(_ message: String) -> ECMARegexError { ECMARegexError(message: message, offset: i) }

    private var peek: Unicode.Scalar? { i < s.count ? s[i] : nil }

    private func peek(_ offset: Int) -> Unicode.Scalar? { i + offset < s.count ? s[i + offset] : nil }

    /// Counts capturing groups up front so `\2` before group 2 is still a backreference.
    private func countGroups() -> Int {
        var count = 0, j = 0, inClass = false
        while j < s.count {
            switch s[j] {
            case "\\": j += 1
            case "[": inClass = true
            case "]": inClass = false
            case "(" where !inClass:
                if j + 1 < s.count, s[j + 1] == "?" {
                    if j + 2 < s.count, s[j + 2] == "<", j + 3 < s.count, s[j + 3] != "=", s[j + 3] != "!" { count += 1 }
                } else {
                    count += 1
                }
            default: break
            }
            j += 1
        }
        return count
    }

    private mutating func parseDisjunction() throws(ECMARegexError) -> RegexNode {
        var alternatives = [try parseAlternative()]
        while peek == "|" {
            i += 1
            alternatives.append(try parseAlternative())
        }
        return alternatives.count == 1 ? alternatives[0] : .alternation(alternatives)
    }

    /// Parses the body of a group or lookaround whose opening (at `start`) was read, and its `)`.
    private mutating func parseNested(openedAt start: Int) throws(ECMARegexError) -> RegexNode {
        guard depth < RegexNode.maxNesting else {
            throw ECMARegexError(message: "groups nested deeper than \(RegexNode.maxNesting) levels", offset: start)
        }
        depth += 1
        let body = try parseDisjunction()
        depth -= 1
        guard peek == ")" else { throw fail("missing ')'") }
        i += 1
        return body
    }

    private mutating func parseAlternative() throws(ECMARegexError) -> RegexNode {
        var terms: [RegexNode] = []
        while let c = peek, c != "|", c != ")" {
            terms.append(try parseTerm())
        }
        switch terms.count {
        case 0: return .empty
        case 1: return terms[0]
        default: return .sequence(terms)
        }
    }

    private mutating func parseTerm() throws(ECMARegexError) -> RegexNode {
        let c = s[i]
        let assertion: RegexNode?
        switch c {
        case "^": i += 1; assertion = .lineStart
        case "$": i += 1; assertion = .lineEnd
        case "\\" where peek(1) == "b" || peek(1) == "B":
            assertion = .wordBoundary(negated: peek(1) == "B")
            i += 2
        case "("
        where peek(1) == "?"
            && (peek(2) == "=" || peek(2) == "!"
                || (peek(2) == "<" && (peek(3) == "=" || peek(3) == "!"))):
            let behind = peek(2) == "<"
            let negated = (behind ? peek(3) : peek(2)) == "!"
            let start = i
            i += behind ? 4 : 3
            let body = try parseNested(openedAt: start)
            assertion = .look(body, behind: behind, negated: negated)
        default:
            assertion = nil
        }
        if let assertion {
            if let q = peek, q == "*" || q == "+" || q == "?" || q == "{" { throw fail("nothing to repeat") }
            return assertion
        }
        let atom = try parseAtom()
        return try parseQuantifier(atom)
    }

    private mutating func parseQuantifier(_ atom: RegexNode) throws(ECMARegexError) -> RegexNode {
        guard let c = peek else { return atom }
        var min = 0, max: Int?
        switch c {
        case "*": i += 1
        case "+": i += 1; min = 1
        case "?": i += 1; max = 1
        case "{":
            i += 1
            guard let lo = parseDecimal() else { throw fail("incomplete quantifier") }
            min = lo
            max = lo
            if peek == "," {
                i += 1
                max = parseDecimal()
            }
            guard peek == "}" else { throw fail("incomplete quantifier") }
            i += 1
            if let max, max < min { throw fail("numbers out of order in {} quantifier") }
        default:
            return atom
        }
        var greedy = true
        if peek == "?" {
            i += 1
            greedy = false
        }
        return .quantified(atom, min: min, max: max, greedy: greedy)
    }

    private mutating func parseDecimal() -> Int? {
        var value: Int?
        while let c = peek, c.value >= 0x30 && c.value <= 0x39 {
            value = min((value ?? 0) * 10 + Int(c.value - 0x30), Int(Int32.max))
            i += 1
        }
        return value
    }

    private mutating func parseAtom() throws(ECMARegexError) -> RegexNode {
        let c = s[i]
        switch c {
        case ".":
            i += 1
            return .atom(.any)
        case "(":
            let start = i
            i += 1
            var capture: Int?
            if peek == "?" {
                if peek(1) == ":" {
                    i += 2
                } else if peek(1) == "<" {
                    i += 2
                    let name = try parseGroupName()
                    guard groupNames[name] == nil else { throw fail("duplicate group name '\(name)'") }
                    capture = nextGroup
                    groupNames[name] = nextGroup
                    nextGroup += 1
                } else {
                    throw fail("invalid group")
                }
            } else {
                capture = nextGroup
                nextGroup += 1
            }
            let body = try parseNested(openedAt: start)
            return .group(body, capture: capture)
        case "[":
            return .atom(.set(try parseClass()))
        case "\\":
            return try parseAtomEscape()
        case "*", "+", "?", "{":
            throw fail("nothing to repeat")
        case "]", "}":
            throw fail("lone '\(c)'")
        default:
            i += 1
            return .atom(.scalar(c.value))
        }
    }

    private mutating func parseGroupName() throws(ECMARegexError) -> String {
        var name = ""
        while let c = peek, c != ">" {
            guard c.properties.isIDContinue || c == "$" else { throw fail("invalid group name") }
            name.unicodeScalars.append(c)
            i += 1
        }
        guard peek == ">", let first = name.unicodeScalars.first, first.properties.isIDStart || first == "$" || first == "_" else {
            throw fail("invalid group name")
        }
        i += 1
        return name
    }

    private mutating func parseAtomEscape() throws(ECMARegexError) -> RegexNode {
        guard let c = peek(1) else { throw fail("\\ at end of pattern") }
        if c.isASCII, c.value >= 0x31 && c.value <= 0x39 {
            i += 1
            let n = parseDecimal() ?? 0
            guard n <= totalGroups else { throw fail("invalid escape \\\(n)") }
            return .backreference(n)
        }
        if c == "k" {
            let offset = i
            i += 2
            guard peek == "<" else { throw fail("invalid named reference") }
            i += 1
            let name = try parseGroupName()
            namedReferences.append((name, offset))
            return .backreference(-(namedReferences.count))
        }
        switch try parseClassOrCharacterEscape(inClass: false) {
        case .scalar(let v): return .atom(.scalar(v))
        case .builtin(let b, let negated): return .atom(.set(ScalarSet(items: [.builtin(b, negated: negated)], negated: false)))
        }
    }

    private enum Escaped {
        case scalar(UInt32)
        case builtin(ScalarSet.BuiltinClass, negated: Bool)
    }

    /// Parses `\...` at `i` (a character escape or a class escape such as `\d`).
    private mutating func parseClassOrCharacterEscape(inClass: Bool) throws(ECMARegexError) -> Escaped {
        i += 1  // the backslash
        guard let c = peek else { throw fail("\\ at end of pattern") }
        i += 1
        switch c {
        case "d", "D": return .builtin(.digit, negated: c == "D")
        case "w", "W": return .builtin(.word, negated: c == "W")
        case "s", "S": return .builtin(.space, negated: c == "S")
        case "p", "P":
            guard peek == "{" else { throw fail("invalid property escape") }
            i += 1
            var name = ""
            while let n = peek, n != "}" {
                name.unicodeScalars.append(n)
                i += 1
            }
            guard peek == "}", let property = UnicodeProperty(name: name) else { throw fail("unsupported property \\p{\(name)}") }
            i += 1
            return .builtin(.property(property), negated: c == "P")
        case "f": return .scalar(0x0C)
        case "n": return .scalar(0x0A)
        case "r": return .scalar(0x0D)
        case "t": return .scalar(0x09)
        case "v": return .scalar(0x0B)
        case "b" where inClass: return .scalar(0x08)
        case "-" where inClass: return .scalar(0x2D)
        case "c":
            guard let letter = peek, letter.isASCII, letter.properties.isAlphabetic else { throw fail("invalid control escape") }
            i += 1
            return .scalar(letter.value % 32)
        case "0":
            if let next = peek, next.isASCII, next.value >= 0x30 && next.value <= 0x39 { throw fail("invalid decimal escape") }
            return .scalar(0)
        case "x":
            guard let v = parseHex(count: 2) else { throw fail("invalid \\x escape") }
            return .scalar(v)
        case "u":
            return .scalar(try parseUnicodeEscape())
        case "^", "$", "\\", ".", "*", "+", "?", "(", ")", "[", "]", "{", "}", "|", "/":
            return .scalar(c.value)
        default:
            i -= 1
            throw fail("invalid escape \\\(c)")
        }
    }

    private mutating func parseUnicodeEscape() throws(ECMARegexError) -> UInt32 {
        if peek == "{" {
            i += 1
            var value: UInt32 = 0, digits = 0
            while let c = peek, let d = c.hexDigitValue {
                value = value * 16 + d
                digits += 1
                guard value <= 0x10FFFF else { throw fail("\\u{...} out of range") }
                i += 1
            }
            guard digits > 0, peek == "}" else { throw fail("invalid \\u{...} escape") }
            i += 1
            return value
        }
        guard let lead = parseHex(count: 4) else { throw fail("invalid \\u escape") }
        if (0xD800...0xDBFF).contains(lead), peek == "\\", peek(1) == "u" {
            let save = i
            i += 2
            if let trail = parseHex(count: 4), (0xDC00...0xDFFF).contains(trail) {
                return 0x10000 + ((lead - 0xD800) << 10) + (trail - 0xDC00)
            }
            i = save
        }
        return lead
    }

    private mutating func parseHex(count: Int) -> UInt32? {
        var value: UInt32 = 0
        for k in 0..<count {
            guard let c = peek(k), let d = c.hexDigitValue else { return nil }
            value = value * 16 + d
        }
        i += count
        return value
    }

    private mutating func parseClass() throws(ECMARegexError) -> ScalarSet {
        i += 1  // [
        var negated = false
        if peek == "^" {
            negated = true
            i += 1
        }
        var items: [ScalarSet.Item] = []
        while true {
            guard let c = peek else { throw fail("missing ']'") }
            if c == "]" {
                i += 1
                break
            }
            let first = try parseClassAtom()
            if peek == "-", let after = peek(1), after != "]" {
                i += 1
                let second = try parseClassAtom()
                guard case .scalar(let lo) = first, case .scalar(let hi) = second else {
                    throw fail("invalid character class range")
                }
                guard lo <= hi else { throw fail("range out of order in character class") }
                items.append(.range(lo, hi))
            } else {
                switch first {
                case .scalar(let v): items.append(.range(v, v))
                case .builtin(let b, let n): items.append(.builtin(b, negated: n))
                }
            }
        }
        return ScalarSet(items: items, negated: negated)
    }

    private mutating func parseClassAtom() throws(ECMARegexError) -> Escaped {
        let c = s[i]
        if c == "\\" { return try parseClassOrCharacterEscape(inClass: true) }
        i += 1
        return .scalar(c.value)
    }

    /// Replaces the placeholders of `\k<name>` (negative numbers) with group numbers.
    private func resolveNames(_ node: RegexNode) -> RegexNode {
        guard !namedReferences.isEmpty else { return node }
        switch node {
        case .backreference(let n) where n < 0:
            return .backreference(groupNames[namedReferences[-n - 1].name] ?? 0)
        case .group(let body, let capture): return .group(resolveNames(body), capture: capture)
        case .sequence(let nodes): return .sequence(nodes.map(resolveNames))
        case .alternation(let nodes): return .alternation(nodes.map(resolveNames))
        case .quantified(let body, let min, let max, let greedy): return .quantified(resolveNames(body), min: min, max: max, greedy: greedy)
        case .look(let body, let behind, let negated): return .look(resolveNames(body), behind: behind, negated: negated)
        default: return node
        }
    }
}

extension Unicode.Scalar {
    /// 0...15 for an ASCII hexadecimal digit.
    fileprivate var hexDigitValue: UInt32? {
        switch value {
        case 0x30...0x39: return value - 0x30
        case 0x41...0x46: return value - 0x41 + 10
        case 0x61...0x66: return value - 0x61 + 10
        default: return nil
        }
    }
}
