import XCTest

@testable import RegexEngine

/// The regular-expression engine shared by schemas, rules and plans: the automaton agrees with the
/// backtracker, pathological patterns finish within steps linear in the string (counted, not timed),
/// budgets turn into findings, and long strings and deep nesting cannot crash it.
final class RegexEngineTests: XCTestCase {
    private func parse(_ pattern: String) throws -> (RegexNode, groups: Int) {
        var parser = ECMARegexParser(pattern)
        return try parser.parse()
    }

    private func withBytes<T>(_ string: String, _ body: (UnsafeBufferPointer<UInt8>) -> T) -> T {
        var s = string
        return s.withUTF8(body)
    }

    func testAutomatonAgreesWithBacktracker() throws {
        let patterns = [
            "a", "^a$", "^$", "", "a|b", "^(a|ab)(b|bb)(a*)$", "^(?:ab){2,3}$", "^(a*)*b$", "(a|)+b", "^(?:a?){3}a{3}$",
            "^a.*?b", #"\bab\b"#, #"\Ba"#, "^[^ab]+$", "^[a-c]{2,}$", "b+$", "^(?:a|b)*?a{2}$", "^(?:(a)|b)+$", "-*",
            "^(?:a*|b)*$", "^.$", "(?:)", "a{0}b", "^a{0,2}b?$", "é+", #"^\p{L}+$"#, "^[-a]*b", "(?:^|-)a", "a(?:$|-)",
            "^(?:a|-a|b-)*$", "(?:a{1,2}){2}-",
        ]
        let alphabet = ["a", "b", "-", "é"]
        var subjects = [""]
        for length in 1...4 {
            subjects += subjects.filter { $0.count == length - 1 }.flatMap { s in alphabet.map { s + $0 } }
        }
        for pattern in patterns {
            let (tree, groups) = try parse(pattern)
            let backtracker = RegexBacktracker(tree, groups: groups)
            let automaton = try XCTUnwrap(RegexAutomaton(tree), pattern)
            let regex = try ECMARegex(pattern)
            for subject in subjects {
                withBytes(subject) { bytes in
                    let expected = backtracker.search(bytes, anchored: false, firstByte: nil, budget: 1_000_000)
                    XCTAssertTrue(expected == .matched || expected == .notMatched)
                    let found = automaton.search(bytes, anchored: false, firstByte: nil, budget: 1_000_000)
                    XCTAssertEqual(found, expected, "/\(pattern)/ on \"\(subject)\"")
                    XCTAssertEqual(regex.search(subject), expected, "/\(pattern)/ on \"\(subject)\"")
                }
            }
        }
    }

    /// The same agreement on 400 random patterns (a fixed seed) over a small alphabet.
    func testAutomatonAgreesWithBacktrackerOnRandomPatterns() throws {
        var seed: UInt64 = 25
        func random(_ n: Int) -> Int {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return Int((seed >> 33) % UInt64(n))
        }
        func pattern(_ depth: Int) -> String {
            var out = ""
            for _ in 0...random(3) {
                var atom: String
                switch random(depth > 2 ? 8 : 10) {
                case 0, 1: atom = "a"
                case 2: atom = "b"
                case 3: atom = "."
                case 4: atom = "[a-]"
                case 5: atom = ["^", "$", #"\b"#, #"\B"#][random(4)]
                case 6: atom = "-"
                case 7: atom = ""
                case 8: atom = "(" + pattern(depth + 1) + "|" + pattern(depth + 1) + ")"
                default: atom = "(?:" + pattern(depth + 1) + ")"
                }
                if !atom.isEmpty, !["^", "$", #"\b"#, #"\B"#].contains(atom) {
                    atom += ["", "", "*", "+", "?", "{2}", "{0,2}", "{1,}", "*?"][random(9)]
                }
                out += atom
            }
            return out
        }
        var subjects = [""]
        for length in 1...4 {
            subjects += subjects.filter { $0.count == length - 1 }.flatMap { s in ["a", "b", "-"].map { s + $0 } }
        }
        for _ in 0..<400 {
            let source = pattern(0)
            let (tree, groups) = try parse(source)
            let backtracker = RegexBacktracker(tree, groups: groups)
            let automaton = try XCTUnwrap(RegexAutomaton(tree), source)
            for subject in subjects {
                withBytes(subject) { bytes in
                    let expected = backtracker.search(bytes, anchored: false, firstByte: nil, budget: 1_000_000)
                    let found = automaton.search(bytes, anchored: false, firstByte: nil, budget: 1_000_000)
                    XCTAssertEqual(found, expected, "/\(source)/ on \"\(subject)\"")
                }
            }
        }
    }

    func testAutomatonIsOnlyBuiltWithoutBackreferencesAndLookarounds() throws {
        for pattern in [#"(a)\1"#, "a(?=b)", "(?<!a)b", "(?:(?:(?:a{1,100}){1,100}){1,100})"] {
            XCTAssertNil(RegexAutomaton(try parse(pattern).0), pattern)
        }
        XCTAssertNotNil(RegexAutomaton(try parse("(?:a{1,10}){1,100}").0))
    }

    /// The classic exponential patterns: each gives its answer, and the automaton needs at most a
    /// fixed number of steps per byte of the 10 KB string.
    func testPathologicalPatternsTakeLinearSteps() throws {
        let n = 10_000
        let a = String(repeating: "a", count: n), x = String(repeating: "X", count: n)
        let cases: [(String, String, RegexResult)] = [
            ("^(a+)+$", String(repeating: "a", count: 27) + "!", .notMatched),
            ("^(a+)+$", a + "!", .notMatched),
            ("^(a+)+$", a, .matched),
            ("(a+)+$", a + "!", .notMatched),
            ("(a|a)*$", a + "!", .matched),
            ("^(a|a)*$", a + "!", .notMatched),
            ("(a|aa)+$", a + "!", .notMatched),
            ("(.+)*$", a + "\n", .matched),
            ("^(.+)*$", a + "\n", .notMatched),
            ("(X+)+b", x, .notMatched),
            ("(X*)+b", x, .notMatched),
            ("^((a*)*)*b$", a, .notMatched),
            ("^(?:a?){30}a{30}$", String(repeating: "a", count: 30), .matched),
            (#"^(\w+\s?)*$"#, String(repeating: "word ", count: n / 5) + "!", .notMatched),
        ]
        for (pattern, subject, expected) in cases {
            XCTAssertEqual(try ECMARegex(pattern).search(subject), expected, "/\(pattern)/ on \(subject.utf8.count) bytes")
            let automaton = try XCTUnwrap(RegexAutomaton(try parse(pattern).0))
            withBytes(subject) { bytes in
                XCTAssertEqual(automaton.search(bytes, anchored: false, firstByte: nil, budget: 100 * (bytes.count + 1)), expected, pattern)
            }
        }
    }

    func testBacktrackingOnlyPatternsStopAtTheBudget() throws {
        let subject = String(repeating: "a", count: 30) + "!"
        let budget = ECMARegex.backtrackingBudget(forBytes: subject.utf8.count)
        XCTAssertEqual(try ECMARegex(#"^(a+)+\1$"#).search(subject), .overBudget(steps: budget))
        XCTAssertEqual(try ECMARegex(#"^(?=(a|a)*$)"#).search(subject), .overBudget(steps: budget))
        XCTAssertEqual(try ECMARegex(#"^(a+)\1$"#).search(String(repeating: "a", count: 10_000)), .matched)
        let (tree, groups) = try parse(#"^(a+)+\1$"#)
        withBytes(subject) { bytes in
            let result = RegexBacktracker(tree, groups: groups).search(bytes, anchored: true, firstByte: nil, budget: 5_000)
            XCTAssertEqual(result, .overBudget(steps: 5_000))
        }
    }

    func testECMARegexSemantics() throws {
        func matches(_ pattern: String, _ s: String) throws -> Bool { try ECMARegex(pattern).search(s) == .matched }
        XCTAssertFalse(try matches(#"^\d$"#, "৪"))
        XCTAssertTrue(try matches(#"^\p{Nd}$"#, "৪"))
        XCTAssertFalse(try matches(#"^\w$"#, "é"))
        XCTAssertTrue(try matches(#"^\s$"#, "\u{3000}"))
        XCTAssertFalse(try matches("^a$", "a\n"))
        XCTAssertFalse(try matches("^.$", "\n"))
        XCTAssertTrue(try matches("^.$", "🐲"))
        XCTAssertTrue(try matches("b+", "aabbcc"))
        XCTAssertTrue(try matches(#"^(a|ab)(c|bcd)(d*)$"#, "abcd"))
        XCTAssertTrue(try matches(#"^(?:ab){2,3}$"#, "ababab"))
        XCTAssertFalse(try matches(#"^(?:ab){2,3}$"#, "abababab"))
        XCTAssertTrue(try matches(#"^(a*)*b$"#, "aaab"))
        XCTAssertTrue(try matches(#"^(\w+)-\1$"#, "abc-abc"))
        XCTAssertFalse(try matches(#"^(?<w>\w+)-\k<w>$"#, "abc-abd"))
        XCTAssertTrue(try matches(#"^a.*?b"#, "axxbyyb"))
        XCTAssertTrue(try matches(#"foo(?=bar)"#, "foobar"))
        XCTAssertFalse(try matches(#"foo(?!bar)"#, "foobar"))
        XCTAssertTrue(try matches(#"(?<=\$)\d+"#, "cost $42"))
        XCTAssertFalse(try matches(#"(?<!\$)\b\d+"#, "$42"))
        XCTAssertTrue(try matches(#"^[^\d\s]+$"#, "abc"))
        XCTAssertTrue(try matches(#"^\u{1F432}\x41\u0042\cJ$"#, "🐲AB\n"))
        for invalid in [#"\a"#, "(a", "a)", "a{", "[b-a]", "*a", #"\1(a)\2"#, #"[\d-z]"#, #"\p{Nope}"#] {
            XCTAssertThrowsError(try ECMARegex(invalid), invalid)
        }
    }

    func testNestingDeeperThanTheLimitIsRefused() throws {
        let deep = String(repeating: "(", count: 10_000) + "a" + String(repeating: ")", count: 10_000)
        XCTAssertThrowsError(try ECMARegex(deep)) { error in
            XCTAssertEqual((error as? ECMARegexError)?.message, "groups nested deeper than 256 levels")
            XCTAssertEqual((error as? ECMARegexError)?.offset, 256)
        }
        let fine = String(repeating: "(?:", count: 256) + "a" + String(repeating: ")*", count: 256)
        XCTAssertEqual(try ECMARegex(fine).search("aaa"), .matched)
    }
}
