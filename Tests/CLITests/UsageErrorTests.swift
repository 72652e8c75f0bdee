import TestSupport
import XCTest

/// Usage errors exit 2 with `dumpkit: error: ...`, like every other error; help and version exit 0.
final class UsageErrorTests: XCTestCase {
    func testParserAndValidationErrorsExit2InTheToolsStyle() throws {
        for (args, expected) in [
            (["convert"], "dumpkit: error: Missing expected argument '<input>'"),
            (
                ["migrate", "in.json", "--plan", "p.yaml", "--on-error", "bogus"],
                "dumpkit: error: The value 'bogus' is invalid for '--on-error"
            ),
            (["validate", "in.json", "--strict"], "dumpkit: error: --strict needs --rules"),
        ] {
            let r = try CLI.run(args)
            XCTAssertEqual(r.status, 2, "\(args): \(r.stderr)")
            XCTAssertTrue(r.stderr.hasPrefix(expected), "\(args): \(r.stderr)")
            XCTAssertTrue(r.stderr.contains("Usage: dumpkit"), "\(args): \(r.stderr)")
            XCTAssertEqual(r.stdout, "", "\(args)")
        }
    }

    func testAnUnknownCommandIsNamedWithTheListOfCommands() throws {
        let r = try CLI.run(["frobnicate", "in.json"])
        XCTAssertEqual(r.status, 2, r.stderr)
        XCTAssertEqual(r.stdout, "")
        XCTAssertTrue(
            r.stderr.hasPrefix("dumpkit: error: unknown command 'frobnicate'; the commands are convert, stats, migrate, "), r.stderr)
        XCTAssertTrue(r.stderr.contains(", restore, ") && r.stderr.hasSuffix(" (dumpkit help COMMAND)\n"), r.stderr)
        // A command given where an option's value is expected is still the parser's.
        XCTAssertEqual(try CLI.run(["convert", "--frobnicate"]).status, 2)
    }

    func testHelpAndVersionExit0() throws {
        for args in [["--help"], ["convert", "--help"], ["help", "validate"], ["--version"]] {
            let r = try CLI.run(args)
            XCTAssertEqual(r.status, 0, "\(args): \(r.stderr)")
            XCTAssertFalse(r.stdout.isEmpty, "\(args)")
            XCTAssertEqual(r.stderr, "", "\(args)")
        }
    }
}
