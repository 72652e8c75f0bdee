import XCTest

@testable import ArchiveKit

final class ArchiveErrorTests: XCTestCase {
    func testDescriptionIsTheMessage() {
        let e = ArchiveError(call: "archive_read_open", status: -30, errno: 2, message: "No such file")
        XCTAssertEqual(e.description, "No such file")
    }

    func testDescriptionStartsWithTheName() {
        let e = ArchiveError(name: "input.json.gz", call: "archive_read_data", status: -30, errno: -1, message: "truncated gzip stream")
        XCTAssertEqual(e.description, "input.json.gz: truncated gzip stream")
        XCTAssertEqual(e.message, "truncated gzip stream")
    }
}
