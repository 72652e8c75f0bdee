import Foundation
import TestSupport
import XCTest

final class StatsCommandTests: XCTestCase {
    func testCollapsesPushIDsAndReportsProblems() throws {
        let dir = try TemporaryDirectory()
        let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk" + String(repeating: "A", count: 200)
        let text = #"{"v1":{"todolist":{"-KVSAs1hM7KCYS43IOLg":{"title":"a","image1":"data:image/jpeg;base64,/9j/4AAQ"},"-KVSAs1hM7KCYS43IOLh":{"title":"b","photo":"\#(png)"}}},"bad.key":{"x":[1,[2,[3]]]}}"#
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
        XCTAssertTrue(patterns.contains("/bad.key/x/{id}/{id}/{id}"), "\(patterns)")
    }
}
