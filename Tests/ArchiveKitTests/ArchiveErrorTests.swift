import XCTest
@testable import ArchiveKit

final class ArchiveErrorTests: XCTestCase {
    func testDescriptionIsTheMessage() {
        let e = ArchiveError(call: "archive_read_open", status: -30, errno: 2, message: "No such file")
        XCTAssertEqual(e.description, "No such file")
    }
}
