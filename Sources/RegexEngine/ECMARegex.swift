/// A compiled regular expression with ECMA-262 semantics (Unicode mode): the one engine behind JSON
/// Schema's `pattern`, rules' `matches(/.../)` (`RulesRegex` checks Firebase's subset in front of it)
/// and plans' `matches`.
///
/// Semantics follow ECMA-262: `\d` and `\w` are ASCII, `\s` is Unicode white space, `.` excludes line
/// terminators, `^`/`$` anchor the whole string, and matching is a search (the pattern may match
/// anywhere). Matching runs directly over a string's UTF-8 bytes and never recurses per character.
///
/// Time is bounded: a pattern without backreferences and lookarounds is tried by the backtracker
/// with a small budget (fast on the usual patterns) and, when that runs out, by `RegexAutomaton`, in
/// time linear in the string (`^(a+)+$` included). Other patterns only backtrack, within
/// `backtrackingBudget(forBytes:)` steps. A search that runs out ends with `.overBudget` instead of
/// running for hours.
package final class ECMARegex: Sendable {
    /// The pattern as written.
    package let source: String
    private let backtracker: RegexBacktracker
    /// `nil` when the pattern has backreferences or lookarounds, or expands too far.
    private let automaton: RegexAutomaton?
    /// The match can only start at offset 0 (the pattern starts with `^`).
    private let anchored: Bool
    /// An ASCII byte every match starts with, when known (for an anchored pattern: the string).
    private let firstByte: UInt8?

    /// Parses and compiles `pattern`; throws when it is not valid ECMA-262 (Unicode mode) syntax.
    package convenience init(_ pattern: String) throws(ECMARegexError) {
        var parser = ECMARegexParser(pattern)
        let (tree, groups) = try parser.parse()
        self.init(tree: tree, groups: groups, source: pattern)
    }

    /// Whether `pattern` is valid ECMA-262 (Unicode mode) syntax, parsed without compiling it.
    package static func isValidSyntax(_ pattern: String) -> Bool {
        var parser = ECMARegexParser(pattern)
        return (try? parser.parse()) != nil
    }

    /// Compiles a syntax tree with `groups` capturing groups; `source` is the pattern for messages.
    package init(tree: RegexNode, groups: Int, source: String) {
        self.source = source
        backtracker = RegexBacktracker(tree, groups: groups)
        automaton = RegexAutomaton(tree)
        var items: ArraySlice<RegexNode>
        if case .sequence(let nodes) = tree { items = nodes[...] } else { items = [tree] }
        if case .lineStart? = items.first {
            anchored = true
            items = items.dropFirst()
        } else {
            anchored = false
        }
        if case .atom(.scalar(let c))? = items.first, c < 0x80 { firstByte = UInt8(c) } else { firstByte = nil }
    }

    /// The steps backtracking may take on a string of `count` UTF-8 bytes: a million, plus 64 a byte.
    static func backtrackingBudget(forBytes count: Int) -> Int { 1_000_000 + 64 * count }

    /// Searches `string` for a match.
    package func search(_ string: String) -> RegexResult {
        var s = string
        return s.withUTF8 { search(utf8: UnsafeRawBufferPointer($0)) }
    }

    /// Searches the valid UTF-8 `utf8` for a match.
    package func search(utf8: UnsafeRawBufferPointer) -> RegexResult {
        let bytes = utf8.assumingMemoryBound(to: UInt8.self)
        if anchored, let firstByte, bytes.first != firstByte { return .notMatched }
        let first = anchored ? nil : firstByte
        let budget = ECMARegex.backtrackingBudget(forBytes: bytes.count)
        guard let automaton else { return backtracker.search(bytes, anchored: anchored, firstByte: first, budget: budget) }
        let quick = backtracker.search(bytes, anchored: anchored, firstByte: first, budget: min(budget, 10_000 + 4 * bytes.count))
        if case .overBudget = quick {
            return automaton.search(bytes, anchored: anchored, firstByte: first, budget: RegexAutomaton.maxSteps)
        }
        return quick
    }
}

/// The outcome of a search.
package enum RegexResult: Sendable, Equatable {
    case matched
    case notMatched
    /// The search needed more than `steps` steps: the answer is unknown.
    case overBudget(steps: Int)
}

extension UnsafeBufferPointer<UInt8> {
    /// The byte length of the UTF-8 sequence starting at `pos`.
    func scalarLength(at pos: Int) -> Int {
        let lead = self[pos]
        if lead < 0x80 { return 1 }
        if lead < 0xE0 { return 2 }
        if lead < 0xF0 { return 3 }
        return 4
    }

    /// The scalar at `pos` and its length in bytes (`pos` must be below the end; the bytes valid UTF-8).
    func scalar(at pos: Int) -> (UInt32, Int) {
        let b0 = UInt32(self[pos])
        if b0 < 0x80 { return (b0, 1) }
        if b0 < 0xE0 { return ((b0 & 0x1F) << 6 | UInt32(self[pos + 1] & 0x3F), 2) }
        if b0 < 0xF0 {
            return ((b0 & 0x0F) << 12 | UInt32(self[pos + 1] & 0x3F) << 6 | UInt32(self[pos + 2] & 0x3F), 3)
        }
        return (
            (b0 & 0x07) << 18 | UInt32(self[pos + 1] & 0x3F) << 12 | UInt32(self[pos + 2] & 0x3F) << 6
                | UInt32(self[pos + 3] & 0x3F), 4
        )
    }
}
