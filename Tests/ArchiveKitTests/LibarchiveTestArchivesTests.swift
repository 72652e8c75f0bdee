import ArchiveKit
import Foundation
import TestSupport
import XCTest

/// libarchive's own path-traversal, absolute-path, hard-link, symbolic-link and GNU long-name archives
/// (../shared/testdata/archives), with the outcomes its SOURCES.md expects of a safe extractor.
final class LibarchiveTestArchivesTests: XCTestCase {
    private var directory: TemporaryDirectory!
    private var destination: String!

    override func setUpWithError() throws {
        directory = try TemporaryDirectory()
        destination = directory.path("dest")
    }

    override func tearDown() {
        directory = nil
    }

    private func archive(_ name: String) throws -> String {
        try TestSupport.TestData.directory("archives").appendingPathComponent(name).path
    }

    private func refused(_ outcomes: [(String, SafeExtractor.Outcome)]) -> [String] {
        outcomes.compactMap { if case .refused = $0.1 { $0.0 } else { nil } }
    }

    /// Nothing was created beside the destination.
    private func assertNothingOutside(file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(tree(directory.url.path).filter { !$0.hasPrefix("dest") }, [], file: file, line: line)
    }

    func testPatterns4ExtractsFortyFourUnderTheDestinationAndRefusesTheTenWithDotDot() throws {
        let outcomes = try extractAll(try archive("libarchive-test_patterns_4.tar"), to: destination)
        XCTAssertEqual(outcomes.count, 54)
        let refusedNumbers = refused(outcomes).map { String($0.suffix(2)) }
        XCTAssertEqual(refusedNumbers, ["05", "06", "17", "20", "25", "26", "37", "40", "43", "54"])
        let files = tree(destination).filter { !["server", "server/share"].contains($0) }
        XCTAssertEqual(files.count, 44, "\(files)")
        for number in (1...54).map({ String(format: "%02d", $0) }) where !refusedNumbers.contains(number) {
            XCTAssertTrue(files.contains { $0.hasSuffix("file\(number)") }, "file\(number) extracted")
        }
        XCTAssertTrue(files.contains("file01") && files.contains("file02") && files.contains("server/share/file15"))
        XCTAssertTrue(files.contains("server\\share\\file35"), "backslashes after a removed prefix stay part of the name")
        assertNothingOutside()
    }

    func testLeadingSlashIsRemovedAndTheHardLinkIsReRootedInside() throws {
        let outcomes = try extractAll(try archive("libarchive-test_leading_slash.tar"), to: destination)
        XCTAssertEqual(outcomes.map(\.1), [.written, .written])
        XCTAssertEqual(tree(destination), ["foo", "foo/file", "foo/hardlink"])
        var file = stat()
        var link = stat()
        XCTAssertEqual(stat(destination + "/foo/file", &file), 0)
        XCTAssertEqual(stat(destination + "/foo/hardlink", &link), 0)
        XCTAssertEqual(file.st_ino, link.st_ino)
        XCTAssertEqual(file.st_nlink, 2)
        XCTAssertEqual(try String(contentsOfFile: destination + "/foo/file", encoding: .utf8), "foo\n")
        assertNothingOutside()
    }

    func testSymlinkDotDotZipSkipsBothLinksAndExtractsTheFile() throws {
        let outcomes = try extractAll(try archive("libarchive-test_symlink_dotdot.zip"), to: destination)
        XCTAssertEqual(refused(outcomes), ["dotdot", "traildot"])
        XCTAssertEqual(tree(destination), ["safe.txt"])
        assertNothingOutside()
    }

    func testSymlink1ZipCreatesTheInsideLinksAndRefusesTheInsecureOne() throws {
        let outcomes = try extractAll(try archive("libarchive-test_symlink_1.zip"), to: destination)
        XCTAssertEqual(refused(outcomes), ["insecure.link"])
        XCTAssertEqual(tree(destination), ["dir", "dlink", "file.txt", "flink"])
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: destination + "/dlink"), "dir")
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: destination + "/flink"), "file.txt")
        XCTAssertFalse(exists(destination + "/insecure.link"))
        assertNothingOutside()
    }

    func testGNULongNamesAreReadWhole() throws {
        let outcomes = try extractAll(try archive("libarchive-test_compat_gtar_1.tar"), to: destination)
        let digits = String(repeating: "1234567890", count: 20)
        let letters = String(repeating: "abcdefghij", count: 20)
        XCTAssertEqual(outcomes.map(\.0), [digits, letters])
        XCTAssertEqual(outcomes.map(\.1), [.written, .written])
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: destination + "/" + letters), digits)
        XCTAssertEqual(tree(destination), [digits, letters])
    }
}
