import XCTest

@testable import JSONStream

final class JSONPointerTests: XCTestCase {
    func testEscapesAndParsesRoundTrip() {
        let segments = ["a/b", "m~n", "", "ключ"]
        let text = JSONPointer.string(segments)
        XCTAssertEqual(text, "/a~1b/m~0n//ключ")
        XCTAssertEqual(JSONPointer.segments(text), segments)
        XCTAssertEqual(JSONPointer.segments(""), [])
        XCTAssertNil(JSONPointer.segments("a"))
    }

    func testDatabaseKeyOrder() {
        let keys = ["b", "10", "-Kabc", "2", "a", "-3", "007", "2147483648", "-0"]
        let sorted = keys.sorted(by: DatabaseKeyOrder.less)
        XCTAssertEqual(sorted, ["-3", "2", "10", "-0", "-Kabc", "007", "2147483648", "a", "b"])
    }
}
