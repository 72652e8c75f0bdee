import TestSupport
import XCTest

final class VersionTests: XCTestCase {
    func testVersionFlagPrintsVersion() throws {
        let r = try CLI.run(["--version"])
        XCTAssertEqual(r.status, 0)
        XCTAssertTrue(r.stdout.hasPrefix("0."), r.stdout)
    }
}
