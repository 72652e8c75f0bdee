import FirebaseRules
import Foundation
import TestSupport
import XCTest

@testable import DumpKit

/// `ValidateJob` with rules: a dump over the memory limit is indexed while it streams and the rules
/// read it back from disk, with the same report as in memory.
final class ValidateJobRulesTests: XCTestCase {
    func testRulesAboveTheMemoryLimitGiveTheSameReport() throws {
        for app in ["todo-app", "wedding"] {
            var job = ValidateJob(input: TestData.projectRoot.appendingPathComponent("samples/\(app)/v1.json").path)
            job.rules = try RulesFile(
                contentsOfFile: TestData.projectRoot.appendingPathComponent("samples/\(app)/database.rules.json").path)
            job.maxFindings = .max
            let inMemory = try job.run()
            job.rulesMemoryLimit = 0
            job.rulesExpandBytes = 0
            let onDisk = try job.run()
            XCTAssertEqual(onDisk.findings, inMemory.findings, app)
            XCTAssertGreaterThan(inMemory.errorCount, 0, app)
        }
    }
}
