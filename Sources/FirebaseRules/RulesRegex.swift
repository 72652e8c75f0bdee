import RegexEngine

/// A regular expression literal of the rules language, checked against the subset Firebase accepts and
/// matched by `ECMARegex` (the same engine as JSON Schema's `pattern`).
///
/// Accepted: literals and escaped punctuation, `.`, classes `[a-z]`/`[^...]`, `\d \D \w \W \s \S`,
/// `\b \B`, `\n \t \r \f \v`, `\xHH`, `\uHHHH`, groups `(...)` and `(?:...)`, alternation `|`, quantifiers
/// `* + ? {n} {n,} {n,m}` (a trailing `?` for laziness is accepted; it cannot change whether a string
/// matches), `^` only as the very first and `$` only as the very last character, and the flag `i`.
/// Rejected at load time: other flags (`g`, `m`, ...), anchors anywhere else, empty alternatives,
/// back-references, look-arounds, unknown escapes and groups nested deeper than 256. `matches()`
/// searches: the pattern may match anywhere unless anchored. Characters are Unicode scalars. Since the
/// subset has no back-references or look-arounds, matching takes time linear in the string.
public final class RulesRegex: Sendable {
    private let regex: ECMARegex

    private indirect enum Node {
        case scalar(Unicode.Scalar)
        case any
        case set(ClassRanges)
        case start
        case end
        case boundary(Bool)
        case sequence([Node])
        case alternation([Node])
        case repetition(Node, min: Int, max: Int?)

        /// The engine's tree for the node, with scalars and classes case-insensitive for the flag `i`.
        func regexNode(ignoreCase: Bool) -> RegexNode {
            switch self {
            case .scalar(let c): return .atom(ignoreCase ? .caseless(folded: RegexAtom.lower(c.value)) : .scalar(c.value))
            case .any: return .atom(.any)
            case .set(let ranges):
                let set = ScalarSet(items: ranges.ranges.map { .range($0.lowerBound, $0.upperBound) }, negated: ranges.negated)
                return .atom(ignoreCase ? .caselessSet(set) : .set(set))
            case .start: return .lineStart
            case .end: return .lineEnd
            case .boundary(let expected): return .wordBoundary(negated: !expected)
            case .sequence(let items): return .sequence(items.map { $0.regexNode(ignoreCase: ignoreCase) })
            case .alternation(let branches): return .alternation(branches.map { $0.regexNode(ignoreCase: ignoreCase) })
            case .repetition(let item, let min, let max):
                return .quantified(item.regexNode(ignoreCase: ignoreCase), min: min, max: max, greedy: true)
            }
        }
    }

    /// A character class as scalar ranges.
    private struct ClassRanges {
        var ranges: [ClosedRange<UInt32>] = []
        var negated = false
    }

    /// Parses `pattern` with `flags`; errors carry the offset within the pattern.
    public init(pattern: String, flags: String) throws(RulesExpressionError) {
        guard flags.isEmpty || flags == "i" else {
            throw RulesExpressionError(
                "unsupported regular expression flags '\(flags)' (only 'i' is allowed)", at: pattern.unicodeScalars.count)
        }
        var parser = Parser(text: Array(pattern.unicodeScalars))
        let tree = try parser.parseAll().regexNode(ignoreCase: flags == "i")
        regex = ECMARegex(tree: tree, groups: 0, source: "/\(pattern)/\(flags)")
    }

    /// Whether the pattern matches somewhere in `string`; throws when the search needs more steps than
    /// its budget (a pattern such as `(a{1,1000}){1,1000}` on a long string).
    public func matches(_ string: String) throws(RulesEvaluationError) -> Bool {
        switch regex.search(string) {
        case .matched: return true
        case .notMatched: return false
        case .overBudget(let steps):
            throw RulesEvaluationError(
                "the regular expression \(regex.source) needs more than \(steps) steps on this \(string.utf8.count)-byte string")
        }
    }

    // MARK: - Parsing

    private struct Parser {
        let text: [Unicode.Scalar]
        var position = 0
        /// Groups open around `position`.
        var depth = 0

        private static let digit: [ClosedRange<UInt32>] = [0x30...0x39]
        private static let word: [ClosedRange<UInt32>] = [0x30...0x39, 0x41...0x5A, 0x5F...0x5F, 0x61...0x7A]
        private static let space: [ClosedRange<UInt32>] = [
            0x09...0x0D, 0x20...0x20, 0xA0...0xA0, 0x1680...0x1680, 0x2000...0x200A,
            0x2028...0x2029, 0x202F...0x202F, 0x205F...0x205F, 0x3000...0x3000, 0xFEFF...0xFEFF,
        ]

        mutating func parseAll() throws(RulesExpressionError) -> Node {
            let node = try alternation()
            if position < text.count {  // only an unmatched ')' stops the top level early
                throw RulesExpressionError("unmatched ')' in regular expression", at: position)
            }
            return node
        }

        private mutating func alternation() throws(RulesExpressionError) -> Node {
            var branches: [Node] = []
            while true {
                let start = position
                let branch = try sequence()
                if case .sequence(let items) = branch, items.isEmpty {
                    throw RulesExpressionError("empty alternative in regular expression", at: start)
                }
                branches.append(branch)
                guard position < text.count, text[position] == "|" else { break }
                position += 1
            }
            return branches.count == 1 ? branches[0] : .alternation(branches)
        }

        private mutating func sequence() throws(RulesExpressionError) -> Node {
            var items: [Node] = []
            while position < text.count, text[position] != "|", text[position] != ")" {
                let atomStart = position
                var atom = try self.atom()
                if let (min, max) = try quantifier() {
                    switch atom {
                    case .start, .end, .boundary:
                        throw RulesExpressionError("an anchor cannot be repeated", at: atomStart)
                    default:
                        atom = .repetition(atom, min: min, max: max)
                    }
                    if position < text.count, text[position] == "?" { position += 1 }  // lazy: same verdict
                    if position < text.count, "*+?".unicodeScalars.contains(text[position]) || quantifierAhead() {
                        throw RulesExpressionError("nothing to repeat in regular expression", at: position)
                    }
                }
                items.append(atom)
            }
            return items.count == 1 ? items[0] : .sequence(items)
        }

        /// Whether a `{n}`, `{n,}` or `{n,m}` quantifier starts at the current position.
        private func quantifierAhead() -> Bool {
            var copy = self
            return (try? copy.braces()) != nil
        }

        private mutating func braces() throws(RulesExpressionError) -> (Int, Int?)? {
            guard position < text.count, text[position] == "{" else { return nil }
            let text = self.text
            var p = position + 1
            func digits() -> Int? {
                let start = p
                while p < text.count, RulesLexer.isDigit(text[p]) { p += 1 }
                guard p > start, p - start < 6 else { return nil }
                return Int(String(String.UnicodeScalarView(text[start..<p])))
            }
            guard let min = digits() else { return nil }
            var max: Int? = min
            if p < text.count, text[p] == "," {
                p += 1
                max = p < text.count && text[p] == "}" ? nil : digits()
                if max == nil, !(p < text.count && text[p] == "}") { return nil }
            }
            guard p < text.count, text[p] == "}" else { return nil }
            if let max, max < min {
                throw RulesExpressionError("quantifier {\(min),\(max)} has its bounds reversed", at: position)
            }
            if min > 1000 || (max ?? 0) > 1000 {
                throw RulesExpressionError("quantifier bound above 1000", at: position)
            }
            position = p + 1
            return (min, max)
        }

        private mutating func quantifier() throws(RulesExpressionError) -> (Int, Int?)? {
            guard position < text.count else { return nil }
            switch text[position] {
            case "*": position += 1; return (0, nil)
            case "+": position += 1; return (1, nil)
            case "?": position += 1; return (0, 1)
            case "{": return try braces()
            default: return nil
            }
        }

        private mutating func atom() throws(RulesExpressionError) -> Node {
            let c = text[position]
            let at = position
            position += 1
            switch c {
            case "^":
                guard at == 0 else { throw RulesExpressionError("'^' is only allowed at the start of a regular expression", at: at) }
                return .start
            case "$":
                guard at == text.count - 1 else {
                    throw RulesExpressionError("'$' is only allowed at the end of a regular expression", at: at)
                }
                return .end
            case ".":
                return .any
            case "(":
                if position < text.count, text[position] == "?" {
                    guard position + 1 < text.count, text[position + 1] == ":" else {
                        throw RulesExpressionError("unsupported group syntax '(?' in regular expression", at: at)
                    }
                    position += 2
                }
                guard depth < RegexNode.maxNesting else {
                    throw RulesExpressionError("groups nested deeper than \(RegexNode.maxNesting) levels in regular expression", at: at)
                }
                depth += 1
                let inner = try alternation()
                depth -= 1
                guard position < text.count, text[position] == ")" else {
                    throw RulesExpressionError("missing ')' in regular expression", at: at)
                }
                position += 1
                return inner
            case "[":
                return try characterClass(openedAt: at)
            case "\\":
                return try escape(at: at, inClass: false)
            case "*", "+", "?":
                throw RulesExpressionError("nothing to repeat in regular expression", at: at)
            case "{":
                position = at
                if quantifierAhead() { throw RulesExpressionError("nothing to repeat in regular expression", at: at) }
                position = at + 1
                return .scalar(c)
            default:
                return .scalar(c)
            }
        }

        private mutating func escape(at: Int, inClass: Bool) throws(RulesExpressionError) -> Node {
            guard position < text.count else { throw RulesExpressionError("trailing '\\' in regular expression", at: at) }
            let e = text[position]
            position += 1
            switch e {
            case "d": return .set(ClassRanges(ranges: Self.digit))
            case "D": return .set(ClassRanges(ranges: Self.digit, negated: true))
            case "w": return .set(ClassRanges(ranges: Self.word))
            case "W": return .set(ClassRanges(ranges: Self.word, negated: true))
            case "s": return .set(ClassRanges(ranges: Self.space))
            case "S": return .set(ClassRanges(ranges: Self.space, negated: true))
            case "b" where !inClass: return .boundary(true)
            case "B" where !inClass: return .boundary(false)
            case "n": return .scalar("\n")
            case "t": return .scalar("\t")
            case "r": return .scalar("\r")
            case "f": return .scalar("\u{0C}")
            case "v": return .scalar("\u{0B}")
            case "x", "u":
                let n = e == "x" ? 2 : 4
                guard position + n <= text.count,
                    let v = UInt32(String(String.UnicodeScalarView(text[position..<(position + n)])), radix: 16),
                    let u = Unicode.Scalar(v)
                else { throw RulesExpressionError("invalid '\\\(e)' escape in regular expression", at: at) }
                position += n
                return .scalar(u)
            default:
                if e.properties.isAlphabetic || RulesLexer.isDigit(e) {
                    let what = RulesLexer.isDigit(e) && e != "0" ? "back-references are" : "escape '\\\(e)' is"
                    throw RulesExpressionError("\(what) not supported in regular expressions", at: at)
                }
                return .scalar(e)
            }
        }

        private mutating func characterClass(openedAt at: Int) throws(RulesExpressionError) -> Node {
            var set = ClassRanges()
            if position < text.count, text[position] == "^" {
                set.negated = true
                position += 1
            }
            var first = true
            while true {
                guard position < text.count else { throw RulesExpressionError("missing ']' in regular expression", at: at) }
                if text[position] == "]" {
                    if first { throw RulesExpressionError("empty character class in regular expression", at: at) }
                    position += 1
                    return .set(set)
                }
                first = false
                let itemAt = position
                let low = try classItem()
                guard case .scalar(let lo) = low else {
                    if case .set(let inner) = low { set.ranges += inner.negated ? Self.complement(inner.ranges) : inner.ranges }
                    continue
                }
                if position + 1 < text.count, text[position] == "-", text[position + 1] != "]" {
                    position += 1
                    guard case .scalar(let hi) = try classItem() else {
                        throw RulesExpressionError("invalid range in character class", at: itemAt)
                    }
                    guard lo.value <= hi.value else {
                        throw RulesExpressionError("range '\(lo)-\(hi)' is out of order in character class", at: itemAt)
                    }
                    set.ranges.append(lo.value...hi.value)
                } else {
                    set.ranges.append(lo.value...lo.value)
                }
            }
        }

        private mutating func classItem() throws(RulesExpressionError) -> Node {
            let c = text[position]
            position += 1
            return c == "\\" ? try escape(at: position - 1, inClass: true) : .scalar(c)
        }

        private static func complement(_ ranges: [ClosedRange<UInt32>]) -> [ClosedRange<UInt32>] {
            var out: [ClosedRange<UInt32>] = []
            var next: UInt32 = 0
            for r in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) {
                if r.lowerBound > next { out.append(next...(r.lowerBound - 1)) }
                next = max(next, r.upperBound + 1)
            }
            if next <= 0x10FFFF { out.append(next...0x10FFFF) }
            return out
        }
    }
}
