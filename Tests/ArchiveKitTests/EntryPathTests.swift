import ArchiveKit
import XCTest

final class EntryPathTests: XCTestCase {
    private func clean(_ stored: String) -> String? {
        try? EntryPath(sanitizing: stored).description
    }

    func testPlainPathsKeepTheirNames() {
        XCTAssertEqual(clean("v1/todolist/-Kabc/image1/1479566994988"), "v1/todolist/-Kabc/image1/1479566994988")
        XCTAssertEqual(clean("./v1//a/./b.json"), "v1/a/b.json")
        XCTAssertEqual(clean("買い物/リスト.txt"), "買い物/リスト.txt")
        XCTAssertEqual(clean("a\\b.txt"), "a\\b.txt", "a backslash inside a name is an ordinary character")
        XCTAssertEqual(clean("..foo/bar.."), "..foo/bar..", "only a whole '..' component climbs")
        XCTAssertEqual(clean("."), "")
    }

    func testAbsoluteDriveAndUNCPrefixesAreRemoved() throws {
        let cases = [
            "/file01": "file01", "/../file02": "file02", "c:/file04": "file04", "C:/../file07": "file07",
            "//./c:/file09": "file09", "//?/UNC/server/share/file15": "server/share/file15", "\\file21": "file21",
            "\\..\\file22": "file22", "\\\\?\\c:\\file31": "file31", "\\\\?\\UNC\\server\\share\\file35": "server\\share\\file35",
            "////C://///file14": "file14",
        ]
        for (stored, expected) in cases {
            let path = try EntryPath(sanitizing: stored)
            XCTAssertEqual(path.description, expected, stored)
            XCTAssertNotNil(path.removedPrefix, stored)
        }
        XCTAssertNil(try EntryPath(sanitizing: "a/b").removedPrefix)
    }

    func testDotDotAnywhereAfterThePrefixIsRefused() {
        for stored in [
            "../x", "a/../../x", "a/..", "D:../file05", "//?/UNC/../file17", "z:..\\file25", "c:../..\\file43", "a\\..\\..\\x",
            "\\/?\\UnC\\../file54", "..",
        ] {
            XCTAssertThrowsError(try EntryPath(sanitizing: stored), stored) { error in
                XCTAssertEqual((error as? UnsafePathError)?.path, stored)
            }
        }
    }

    func testComponentsMustBePlainNames() {
        XCTAssertNoThrow(try EntryPath(components: ["a", "b.json"]))
        for bad in [["a", ".."], ["a/b"], [""], ["."]] {
            XCTAssertThrowsError(try EntryPath(components: bad), "\(bad)")
        }
    }

    func testLinkTargetsThatStayInside() {
        for target in ["file.txt", "dir", "sub/file", "a\\b"] { XCTAssertTrue(SafeExtractor.staysInside(linkTarget: target), target) }
        for target in ["", "/etc/passwd", "..", "../outside", "sub/..", "a/../../b", "\\x", "c:x", "..\\x"] {
            XCTAssertFalse(SafeExtractor.staysInside(linkTarget: target), target)
        }
    }
}
