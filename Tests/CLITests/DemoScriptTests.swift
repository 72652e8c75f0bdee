import Foundation
import TestSupport
import XCTest

/// `Scripts/demo.sh`, the README's first command, run with the built `dumpkit`: every comparison it
/// makes (rollbacks JSON-equal to the inputs, restored buckets equal to the originals, validation
/// findings exactly the values the migration kept) must hold, or it exits non-zero.
final class DemoScriptTests: XCTestCase {
    func testTheDemoRunsTheWholeTripAndItsComparisonsHold() throws {
        _ = try RequiredTool.path("jq", package: "jq")
        let dir = try TemporaryDirectory()
        let script = TestData.projectRoot.appendingPathComponent("Scripts/demo.sh").path
        let command = "DUMPKIT='\(CLI.binary.path)' DEMO_OUT='\(dir.path("out"))' '\(script)' 2>&1"
        let result = try Shell.execute(URL(fileURLWithPath: "/bin/bash"), ["-c", command])
        let output = String(decoding: result.stdout, as: UTF8.self)
        XCTAssertEqual(result.status, 0, output)
        for line in [
            "ok: the plan's pattern /v1/todolist/{id} is suggested",
            "schema: 4 findings, exactly the 4 values the migration kept",
            "bucket: no finding for the 3 references the migration wrote",
            "ok: diff -r: the restored objects are the bucket's",
            "is JSON-equal to samples/todolist/v1.json",
            "is JSON-equal to samples/wedding/v1.json",
            "ok: verified; diff -r: the restored bucket is samples/wedding/bucket",
        ] {
            XCTAssertTrue(output.contains(line), "missing '\(line)' in:\n\(output)")
        }
        XCTAssertTrue(FileManager.default.fileExists(atPath: dir.path("out/todolist.v1.stats.html")))
    }
}
