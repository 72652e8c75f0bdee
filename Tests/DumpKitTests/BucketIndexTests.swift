import TestSupport
import XCTest

@testable import DumpKit

/// `BucketIndex`: units of a listing, and the name ranges shards archive.
final class BucketIndexTests: XCTestCase {
    private func index(_ objects: [(String, Int64)], unitBytes: Int64 = 1 << 20) throws -> BucketIndex {
        var builder = BucketIndex.Builder(source: "bucket", unitBytes: unitBytes)
        for (name, size) in objects { try builder.add(name: name, size: size) }
        return builder.index()
    }

    /// Names of 20,000 objects of 0 to 100 KB (about 1 GB), in byte order.
    private func listing(count: Int = 20000, seed: UInt64 = 1) -> [(String, Int64)] {
        var random = SplitMix64(seed: seed)
        return (0..<count).map { i in (String(format: "v1/todolist/%06d/image", i), Int64(random.next() % 100_000)) }
    }

    /// Which shard of `n` each name falls in; exactly one.
    private func shard(of name: String, _ index: BucketIndex, _ n: Int) throws -> Int {
        let owners = try (0..<n).filter { BucketIndex.contains(index.range(of: try ShardSpec(index: $0, count: n)), name) }
        XCTAssertEqual(owners.count, 1, "\(name) is in shards \(owners) of \(n)")
        return owners.first ?? -1
    }

    func testShardsAreBalancedByBytesWithinATenthOfTheMean() throws {
        let objects = listing()
        let index = try index(objects)
        XCTAssertEqual(index.objects, objects.count)
        XCTAssertEqual(index.bytes, objects.reduce(0) { $0 + $1.1 })
        for n in [2, 3, 8, 16] {
            var weights = [Int64](repeating: 0, count: n)
            let ranges = try (0..<n).map { index.range(of: try ShardSpec(index: $0, count: n)) }
            var shard = 0
            for (name, size) in objects {
                while !BucketIndex.contains(ranges[shard], name) { shard += 1 }
                weights[shard] += size + BucketIndex.objectWeight
            }
            let mean = Double(weights.reduce(0, +)) / Double(n)
            XCTAssertLessThanOrEqual(Double(weights.max()!), 1.1 * mean, "\(n) shards: \(weights)")
        }
    }

    func testEveryNameIsInExactlyOneShardEvenIfNotListedWhenIndexed() throws {
        let index = try index(listing(count: 3000), unitBytes: 200_000)
        for n in [1, 2, 3, 8] {
            var last = 0
            // Names before, between and after the listed ones, in byte order: shards ascend.
            for name in [
                "", "a", "v1/todolist/000000/image", "v1/todolist/001500/image-new", "v1/todolist/002999/image", "v1/u", "\u{10FFFF}",
            ] {
                let s = try shard(of: name, index, n)
                XCTAssertGreaterThanOrEqual(s, last, "\(name), \(n) shards")
                last = s
            }
        }
    }

    func testAnEmptyListingPutsEverythingInTheFirstShardAndMoreShardsThanUnitsAreEmpty() throws {
        let empty = try index([])
        XCTAssertEqual(try shard(of: "x", empty, 4), 0)
        let one = try index([("a", 10), ("b", 10)])
        XCTAssertEqual(one.units.count, 1)
        // One unit for eight shards: its objects go to one shard, the others hold only names outside it.
        let owner = try shard(of: "a", one, 8)
        XCTAssertEqual(try shard(of: "b", one, 8), owner)
        XCTAssertEqual(try shard(of: "", one, 8), 0)
        XCTAssertEqual(try shard(of: "c", one, 8), owner)
    }

    func testAListingOutOfOrderOrWithADuplicateNameIsRefused() {
        XCTAssertThrowsError(try index([("b", 1), ("a", 1)])) { XCTAssertTrue("\($0)".contains("not in name order"), "\($0)") }
        XCTAssertThrowsError(try index([("a", 1), ("a", 1)])) { XCTAssertTrue("\($0)".contains("'a' after 'a'"), "\($0)") }
    }

    func testAnIndexReadsBackAndAnotherFileIsRefusedWithWhatToMake() throws {
        let dir = try TemporaryDirectory()
        let index = try index(listing(count: 2500), unitBytes: 100_000)
        let path = dir.path("b.dkindex")
        _ = try index.write(to: path)
        XCTAssertEqual(try BucketIndex.read(path: path), index)
        try Data("[0,1,2]\n".utf8).write(to: URL(fileURLWithPath: dir.path("dump.dkindex")))
        XCTAssertThrowsError(try BucketIndex.read(path: dir.path("dump.dkindex"))) {
            XCTAssertTrue("\($0)".contains("it is the index of a dump") && "\($0)".contains("dumpkit index --bucket"), "\($0)")
        }
        try Data("{\"dumpkitBucketIndex\":1,\"source\":\"b\",\"sha256\":\"\",\"unitBytes\":1,\"units\":[[\"b\",1,1],[\"a\",1,1]]}".utf8)
            .write(to: URL(fileURLWithPath: dir.path("bad.dkindex")))
        XCTAssertThrowsError(try BucketIndex.read(path: dir.path("bad.dkindex"))) {
            XCTAssertTrue("\($0)".contains("units out of order"), "\($0)")
        }
    }
}
