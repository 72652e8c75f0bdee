import JSONStream
import XCTest

/// Names twice in one object, found while streaming, whatever the object's size.
final class DuplicateKeyDetectorTests: XCTestCase {
    private func duplicates(_ text: String) throws -> [String] {
        var found: [String] = []
        let detector = DuplicateKeyDetector { found.append("\($0.pointer)@\($0.firstOffset + 1)-\($0.column)") }
        let reader = JSONReader(bytes: Array(text.utf8))
        reader.tokenObserver = { detector.observe($0, $1) }
        try reader.skipValue()
        return found
    }

    func testNamesTwiceInOneObjectAndOnlyThere() throws {
        XCTAssertEqual(try duplicates(#"{"a":1,"b":{"a":2,"c":[{"a":1},{"a":2}]},"c":3}"#), [])
        XCTAssertEqual(try duplicates(#"{"a":1,"a":2}"#), ["/a@2-8"])
        XCTAssertEqual(try duplicates(#"{"":1,"":2}"#), ["/@2-7"])
        // The same name after an object closed, in arrays, and escaped spellings of one name.
        XCTAssertEqual(try duplicates(#"{"o":{"k":1},"o":{"k":2}}"#), ["/o@2-14"])
        XCTAssertEqual(try duplicates(#"[{"k":1,"k":2},{"k":3}]"#), ["/0/k@3-9"])
        XCTAssertEqual(try duplicates(#"{"é":1,"\u00e9":2}"#), ["/é@2-9"])
    }

    func testLargeObjectsUseTheTableAndFindEveryDuplicate() throws {
        var members = (0..<5000).map { "\"k\($0)\":\($0)" }
        members.append("\"k4321\":0")
        members.append("\"k17\":0")
        let found = try duplicates("{" + members.joined(separator: ",") + "}")
        XCTAssertEqual(found.map { String($0.prefix(while: { $0 != "@" })) }, ["/k4321", "/k17"])
    }

    func testObjectsInTheDatabasesOrderKeepOnlyTheirLastNamePastTheLimit() throws {
        // Integer keys in numeric order are in the database's order (not in byte order).
        let limit = DuplicateKeyDetector.ascendingLimit
        var members = (0..<(limit + 10)).map { "\"\($0)\":0" }
        XCTAssertEqual(try duplicates("{" + members.joined(separator: ",") + "}"), [])
        // The last name again is still found after the earlier ones were dropped.
        members.append("\"\(limit + 9)\":1")
        XCTAssertEqual(
            try duplicates("{" + members.joined(separator: ",") + "}").map { String($0.prefix(while: { $0 != "@" })) }, ["/\(limit + 9)"])
        // Below the limit, a name out of order is checked against all names before it.
        XCTAssertEqual(try duplicates(#"{"a":1,"b":2,"c":3,"a":4}"#), ["/a@2-20"])
    }
}
