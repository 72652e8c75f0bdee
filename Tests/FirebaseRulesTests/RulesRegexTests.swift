import JSONStream
import XCTest

@testable import FirebaseRules

/// The rules language's regular expressions on the shared engine: its subset is checked in front,
/// pathological patterns and long strings neither stall nor crash, and a budget runs out as an error.
final class RulesRegexTests: XCTestCase {
    func testRulesRegexNestingDeeperThanTheLimitIsRefused() throws {
        let deep = String(repeating: "(", count: 10_000) + "a" + String(repeating: ")", count: 10_000)
        XCTAssertThrowsError(try RulesRegex(pattern: deep, flags: "")) { error in
            XCTAssertEqual((error as? RulesExpressionError)?.offset, 256)
        }
    }

    func testRulesPathologicalPatternsAndLongStrings() throws {
        let a = String(repeating: "a", count: 10_000)
        for (pattern, subject, expected) in [
            ("^(a+)+$", a + "!", false), ("(a|a)*$", a + "!", true), ("(a|aa)+$", a + "!", false),
            ("(.+)*$", a + "\n", true), ("(X+)+b", String(repeating: "X", count: 10_000), false),
            ("^(A+)+$", a, true),
        ] {
            XCTAssertEqual(try RulesRegex(pattern: pattern, flags: pattern == "^(A+)+$" ? "i" : "").matches(subject), expected, pattern)
        }
        // Matching never recurses per character: 30,000 characters and 10 MiB go through.
        let long = String(repeating: "ab", count: 15_000)
        XCTAssertTrue(try RulesRegex(pattern: "^(ab)+$", flags: "").matches(long))
        XCTAssertFalse(try RulesRegex(pattern: "^(a|b)*c$", flags: "").matches(long))
        let huge = String(repeating: "a", count: 10 << 20)
        XCTAssertTrue(try RulesRegex(pattern: "^[a-z]+$", flags: "").matches(huge))
        XCTAssertTrue(try RulesRegex(pattern: "^(a+)+$", flags: "").matches(huge))
        // The automaton's path (slow in a debug build, so 1 MiB of the 10).
        XCTAssertFalse(try RulesRegex(pattern: "^(a|b)*c$", flags: "").matches(String(huge.utf8.prefix(1 << 20))!))
        // Through a rule, a pathological pattern on 30,000 characters is simply false.
        let rule = try RulesRule(expression: "newData.val().matches(/^(a+)+$/)", kind: .validate, wildcards: [])
        let source = InMemoryRulesSource(.string(String(repeating: "a", count: 30_000) + "!"))
        let empty = RulesSnapshot(source: InMemoryRulesSource(.null))
        let context = RulesContext(now: 0, root: RulesSnapshot(source: source), data: empty, newData: RulesSnapshot(source: source))
        XCTAssertFalse(try rule.evaluate(in: context))
    }

    func testRulesPatternOverBudgetIsARuntimeError() throws {
        // Too large for the automaton (a million states), so only the backtracker's budget bounds it.
        let regex = try RulesRegex(pattern: "^(?:(?:a{1,100}){1,100}){1,100}$", flags: "")
        XCTAssertThrowsError(try regex.matches(String(repeating: "a", count: 200) + "!")) { error in
            let message = (error as? RulesEvaluationError)?.message ?? ""
            XCTAssertTrue(message.hasPrefix("the regular expression /^(?:(?:a{1,100}){1,100}){1,100}$/ needs more than"), message)
        }
    }
}
