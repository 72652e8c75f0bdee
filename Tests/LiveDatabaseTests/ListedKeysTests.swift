import Foundation
import JSONStream
import TestSupport
import XCTest

@testable import LiveDatabase

/// An export's listing of a location's keys, sorted on disk and read back by index.
final class ListedKeysTests: XCTestCase {
    private func listing(_ keys: [String], in dir: TemporaryDirectory) throws -> String {
        let sink = MemoryByteSink()
        let w = JSONWriter(sink: sink)
        try w.beginObject()
        for k in keys {
            try w.name(k)
            try w.bool(true)
        }
        try w.endObject()
        try w.flush()
        let path = dir.path("listing.json")
        try Data(sink.bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    private func all(_ keys: ListedKeys) throws -> [String] { try (0..<keys.count).map { try keys.key($0) } }

    /// The database's order (integers numerically first, then bytes), whether the keys fit the sort
    /// budget or are spilled in many runs, and with keys that only look like integers.
    func testKeysComeBackInTheDatabasesOrderByIndex() throws {
        let dir = try TemporaryDirectory()
        var random = SplitMix64(seed: 23)
        var keys = [
            "0", "-1", "2147483647", "-2147483648", "2147483648", "007", "-0", "10", "9", "a", "B", "é", "日本", "-K0abc", "1.5", "",
        ]
        for _ in 0..<20_000 {
            let n = Int(random.next() % 12) + 1
            keys.append(String((0..<n).map { _ in "-_0123456789abcdefXYZ".randomElement(using: &random)! }))
        }
        keys = Array(Set(keys)).shuffled(using: &random)
        let expected = keys.sorted { a, b in
            Array(a.utf8).withUnsafeBytes { x in Array(b.utf8).withUnsafeBytes { y in DatabaseKeyOrder.less(x, y) } }
        }
        for budget in [16 << 20, 4096] {
            let listed = try ListedKeys(listing: try listing(keys, in: dir), temporaryDirectory: dir.url.path, sortBudget: budget)
            XCTAssertEqual(listed.count, keys.count)
            XCTAssertEqual(try all(listed), expected, "sort budget \(budget)")
            XCTAssertFalse(listed.readsAsArray)
        }
    }

    func testArrayLikeKeysAreNonNegativeIntegersBelowTwiceTheirCount() throws {
        let dir = try TemporaryDirectory()
        for (keys, array) in [
            (["2", "0", "1"], true), (["0", "3"], true), (["0", "4"], false), (["-1", "0"], false), (["0", "01"], false),
        ] {
            let listed = try ListedKeys(listing: try listing(keys, in: dir), temporaryDirectory: dir.url.path)
            XCTAssertEqual(listed.readsAsArray, array, "\(keys)")
        }
        let empty = try ListedKeys(listing: try listing([], in: dir), temporaryDirectory: dir.url.path)
        XCTAssertEqual(empty.count, 0)
        XCTAssertFalse(empty.readsAsArray)
    }
}
