import XCTest

@testable import DumpKit

final class PathPatternTests: XCTestCase {
    func testMatchesAndCaptures() throws {
        let p = try PathPattern("/v1/todolist/{id}")
        XCTAssertEqual(p.match(["v1", "todolist", "-Kabc"]), ["id": "-Kabc"])
        XCTAssertNil(p.match(["v1", "todolist"]))
        XCTAssertNil(p.match(["v2", "todolist", "x"]))
        XCTAssertTrue(p.isPrefix(["v1"]))
        XCTAssertFalse(p.isPrefix(["v2"]))
        let w = try PathPattern("/users/*/items/{id}")
        XCTAssertEqual(w.match(["users", "u1", "items", "i9"]), ["id": "i9"])
    }

    func testRejectsBadPatterns() {
        XCTAssertThrowsError(try PathPattern("v1/x"))
        XCTAssertThrowsError(try PathPattern("/a//b"))
        XCTAssertThrowsError(try PathPattern("/{a}/{a}"))
        XCTAssertThrowsError(try PathPattern("/x{a}"))
    }
}
