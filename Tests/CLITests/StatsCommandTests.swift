import Foundation
import TestSupport
import XCTest

final class StatsCommandTests: XCTestCase {
    func testCollapsesPushIDsAndReportsProblems() throws {
        let dir = try TemporaryDirectory()
        let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk" + String(repeating: "A", count: 200)
        let text =
            #"{"v1":{"todolist":{"-KVSAs1hM7KCYS43IOLg":{"title":"a","image1":"data:image/jpeg;base64,/9j/4AAQ"},"-KVSAs1hM7KCYS43IOLh":{"title":"b","photo":"\#(png)"}}},"bad.key":{"x":[1,[2,[3]]]}}"#
        let path = dir.path("d.json")
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        let r = try CLI.run(["stats", path])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("/v1/todolist/{id}/title"), r.stdout)
        XCTAssertTrue(r.stdout.contains("keys the Realtime Database forbids: 1, e.g. /bad.key"), r.stdout)
        XCTAssertTrue(r.stdout.contains("strings that look like base64 files: 2"), r.stdout)
        XCTAssertTrue(r.stdout.contains("record patterns: /v1/todolist/{id}"), r.stdout)
        let j = try CLI.run(["stats", path, "--json"])
        let obj = try JSONSerialization.jsonObject(with: Data(j.stdout.utf8)) as! [String: Any]
        XCTAssertEqual(obj["maxDepth"] as? Int, 5)
        let patterns = (obj["patterns"] as! [[String: Any]]).map { $0["pattern"] as! String }
        XCTAssertTrue(patterns.contains("/v1/todolist/{id}/image1"))
        XCTAssertTrue(patterns.contains("/bad.key/x/{n}/{n2}/{n3}"), "\(patterns)")
        XCTAssertEqual(obj["recordPatterns"] as? [String], ["/v1/todolist/{id}"])
    }

    /// Keys with control characters (which the database forbids) do not reach the terminal raw.
    func testControlCharactersInKeysAreEscaped() throws {
        let dir = try TemporaryDirectory()
        try Data(#"{"a\u001b[31mred": {"x\u0007": 1}}"#.utf8).write(to: dir.url.appendingPathComponent("d.json"))
        let r = try CLI.run(["stats", dir.path("d.json")])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertFalse(r.stdout.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" }, r.stdout)
        XCTAssertTrue(r.stdout.contains(#"keys the Realtime Database forbids: 2, e.g. /a\u001B[31mred, /a\u001B[31mred/x\u0007"#), r.stdout)
    }

    /// The samples' users are keyed by Auth UIDs: the suggested record patterns are their plans'.
    func testSuggestsThePlansPatternsForTheSamples() throws {
        let root = TestData.projectRoot
        for (app, expected) in [
            ("chat", "/users/{uid}/messages/{id}"), ("todo-app", "/users/{uid}/items/{id}"),
            ("wedding", "/articles/{id}"), ("todolist", "/v1/todolist/{id}"),
        ] {
            let r = try CLI.run(["stats", root.appendingPathComponent("samples/\(app)/v1.json").path, "--json"])
            XCTAssertEqual(r.status, 0, r.stderr)
            let suggested =
                (try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any])["recordPatterns"] as? [String] ?? []
            XCTAssertTrue(suggested.contains(expected), "\(app): \(suggested)")
            let plan = try String(contentsOf: root.appendingPathComponent("schemas/\(app)/plan.yaml"), encoding: .utf8)
            XCTAssertTrue(plan.contains("match: \(expected)"), app)
        }
    }

    /// budgetparty: 62 users keyed by 28-character UIDs are one pattern, and the suggested record
    /// pattern converts them to 62 records.
    func testRealDumpWithAuthUIDs() throws {
        let dump = try TestData.directory("real-dumps").appendingPathComponent("budgetparty__firebase-export.sanitized.json").path
        let r = try CLI.run(["stats", dump])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertLessThan(r.stdout.split(separator: "\n").count, 150)
        XCTAssertTrue(r.stdout.hasSuffix("\nrecord patterns: /users/{uid}\n"), r.stdout)
        XCTAssertTrue(r.stdout.contains("/users/{uid}/games/{n}/choices/mode/guidewayChoices/{n2}/title"), r.stdout)
        XCTAssertTrue(r.stdout.contains("/users/{uid}/games/{n}/choices/mode/distanceBetweenStops "), r.stdout)
        XCTAssertFalse(r.stdout.contains("/mode/{id}"), r.stdout)
        let dir = try TemporaryDirectory()
        let convert = try CLI.run(["convert", dump, "-o", dir.path("users.ndjson"), "--records", "/users/{uid}"])
        XCTAssertEqual(convert.status, 0, convert.stderr)
        let lines = try String(contentsOfFile: dir.path("users.ndjson"), encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(lines.count, 62)
    }

    /// A 20-letter field name has a push ID's shape but not its time: it stays a name, while push IDs
    /// (from 2015 and from this year) collapse.
    func testTwentyLetterFieldNamesAreNotPushIDs() throws {
        let dir = try TemporaryDirectory()
        let dump = dir.path("prefs.json")
        try Data(
            #"{"prefs":{"-K2ib4H77rj0LYewF7dP":{"notificationsEnabled":true},"-OaaaaaaaaaaaaaaaaaA":{"notificationsEnabled":false}}}"#
                .utf8
        ).write(to: URL(fileURLWithPath: dump))
        let r = try CLI.run(["stats", dump])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("/prefs/{id}/notificationsEnabled "), r.stdout)
        XCTAssertFalse(r.stdout.contains("{id2}"), r.stdout)
    }

    func testTheHTMLPageGoesToAFileOrInsteadOfTheText() throws {
        let dir = try TemporaryDirectory()
        let sample = TestData.projectRoot.appendingPathComponent("samples/wedding/v1.json").path
        let page = try CLI.run(["stats", sample, "--html", "-"])
        XCTAssertEqual(page.status, 0, page.stderr)
        XCTAssertTrue(page.stdout.hasPrefix("<!DOCTYPE html>"), "the page instead of the text")
        let both = try CLI.run(["stats", sample, "--html", "-", "--json"])
        XCTAssertEqual(both.status, 2)
        XCTAssertTrue(both.stderr.contains("would both write to standard output"), both.stderr)
        let unwritable = try CLI.run(["stats", sample, "--html", dir.path("missing/report.html")])
        XCTAssertEqual(unwritable.status, 2)
        XCTAssertTrue(unwritable.stderr.contains("cannot create a file in"), unwritable.stderr)
    }
}
