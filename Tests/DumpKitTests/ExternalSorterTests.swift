import JSONStream
import TestSupport
import XCTest

@testable import DumpKit

/// Sorting in bounded memory, and path keys that sort like paths.
final class ExternalSorterTests: XCTestCase {
    private func entries(_ count: Int, seed: UInt64) -> [([UInt8], [UInt8])] {
        var random = SplitMix64(seed: seed)
        return (0..<count).map { i in
            let key = (0..<Int.random(in: 0..<12, using: &random)).map { _ in UInt8.random(in: 0...3, using: &random) }
            return (key, Array("payload \(i)".utf8) + [UInt8](repeating: 7, count: Int.random(in: 0..<300, using: &random)))
        }
    }

    private func drain(_ sorter: ExternalSorter) throws -> [([UInt8], [UInt8])] {
        let reader = try sorter.sorted()
        var out: [([UInt8], [UInt8])] = []
        while try reader.next() { out.append((reader.key, reader.payload)) }
        return out
    }

    func testRunsSpilledToDiskMergeIntoKeyOrder() throws {
        // Budgets from "everything in memory" to "a run every few entries"; empty and equal keys.
        for budget in [1 << 30, 64 << 10, 2 << 10, 1] {
            let input = entries(3000, seed: UInt64(budget))
            let sorter = ExternalSorter(budget: budget)
            for (k, p) in input { try sorter.add(key: k, payload: p) }
            let out = try drain(sorter)
            XCTAssertEqual(out.count, input.count, "budget \(budget)")
            XCTAssertEqual(out.map(\.0), input.map(\.0).sorted { $0.lexicographicallyPrecedes($1) }, "budget \(budget)")
            // Every payload comes back with its key.
            let pairs = Set(input.map { $0.0 + [255] + $0.1 })
            XCTAssertEqual(Set(out.map { $0.0 + [255] + $0.1 }), pairs, "budget \(budget)")
        }
        XCTAssertEqual(try drain(ExternalSorter()).count, 0)
    }

    func testPathKeysSortLikePathsInTheDatabaseOrder() throws {
        let keys = [
            "", "0", "1", "2", "10", "-1", "-2147483648", "2147483647", "2147483648", "007", "-0", "a", "a\u{0}", "a\u{0}b", "ab", "b", "é",
            "\u{0}", "10a",
        ]
        var random = SplitMix64(seed: 42)
        var paths: [[String]] = [[]]
        for _ in 0..<400 { paths.append((0..<Int.random(in: 1...3, using: &random)).map { _ in keys.randomElement(using: &random)! }) }
        func less(_ a: [String], _ b: [String]) -> Bool {
            for (x, y) in zip(a, b) where x != y {
                var x = x, y = y
                return x.withUTF8 { xb in y.withUTF8 { yb in DatabaseKeyOrder.less(UnsafeRawBufferPointer(xb), UnsafeRawBufferPointer(yb)) }
                }
            }
            return a.count < b.count
        }
        let byKey = paths.sorted { PathKey.of($0).lexicographicallyPrecedes(PathKey.of($1)) }
        XCTAssertEqual(byKey, paths.sorted(by: less))
        for p in paths {
            XCTAssertEqual(PathKey.path(PathKey.of(p)), p)
            // A path's key starts every key below it, and no other.
            for q in paths {
                let prefix = q.count >= p.count && Array(q.prefix(p.count)) == p
                XCTAssertEqual(PathKey.isPrefix(PathKey.of(p)[...], of: PathKey.of(q)[...]), prefix, "\(p) \(q)")
            }
            // The separator sorts before every path below.
            let separated = PathKey.of(p) + PathKey.separator + [0xFF]
            XCTAssertTrue(separated.lexicographicallyPrecedes(PathKey.of(p + [""])))
        }
    }
}
