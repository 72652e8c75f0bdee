import Foundation
import JSONStream
import TestSupport
import XCTest

@testable import DumpKit

/// `DumpIndexJob`'s units and structure, and `ShardSpec` from flags and runners' variables.
final class DumpIndexTests: XCTestCase {
    private func index(_ json: String, records: [String] = [], depth: Int = 1, unitBytes: Int64 = 1 << 20) throws -> (
        entries: [DumpIndex.Entry], trailer: DumpIndex.Trailer, bytes: [UInt8]
    ) {
        let dir = try TemporaryDirectory()
        let input = dir.path("in.json")
        try Data(json.utf8).write(to: URL(fileURLWithPath: input))
        var job = DumpIndexJob(input: input, output: dir.path("in.dkindex"))
        job.records = try records.map { try PathPattern($0) }
        job.depth = depth
        job.unitBytes = unitBytes
        _ = try job.run()
        let reader = try DumpIndexReader(path: dir.path("in.dkindex"))
        var entries: [DumpIndex.Entry] = []
        while let e = try reader.next() { entries.append(e) }
        return (entries, reader.trailer, Array(json.utf8))
    }

    /// The structure before each unit, the unit's compact bytes and the end rebuild the compact dump.
    private func rebuilt(_ r: (entries: [DumpIndex.Entry], trailer: DumpIndex.Trailer, bytes: [UInt8])) throws -> String {
        var out = ""
        for e in r.entries {
            let unit = Array(r.bytes[Int(e.offset)..<Int(e.end)])
            let sink = MemoryByteSink()
            let w = JSONWriter(sink: sink)
            try JSONReader(source: MemoryByteSource(unit)).transfer(to: w)
            try w.flush()
            out += e.structure + sink.string
        }
        return out + r.trailer.end
    }

    func testUnitsAtRecordPatternsWithTheStructureBetweenThem() throws {
        let json = #"{ "v1": { "todolist": { "-a": {"t": 1}, "-b": [1, 2] }, "meta": "x" }, "n": 3 }"#
        let r = try index(json, records: ["/v1/todolist/{id}"])
        XCTAssertEqual(r.entries.map(\.pointer), ["/v1/todolist/-a", "/v1/todolist/-b", "/v1/meta", "/n"])
        XCTAssertEqual(r.entries.map(\.kind), [.record, .record, .content, .content])
        XCTAssertEqual(r.entries.map(\.structure), [#"{"v1":{"todolist":{"-a":"#, #","-b":"#, #"},"meta":"#, #"},"n":"#])
        XCTAssertEqual(r.trailer.end, "}")
        XCTAssertEqual(String(decoding: r.bytes[Int(r.entries[0].offset)..<Int(r.entries[0].end)], as: UTF8.self), #"{"t": 1}"#)
        XCTAssertEqual(String(decoding: r.bytes[Int(r.entries[3].offset)..<Int(r.entries[3].end)], as: UTF8.self), "3")
        XCTAssertEqual(try rebuilt(r), #"{"v1":{"todolist":{"-a":{"t":1},"-b":[1,2]},"meta":"x"},"n":3}"#)
        XCTAssertFalse(r.trailer.hasPieces)
    }

    func testValuesLargerThanAUnitAreSplitIntoTheirChildren() throws {
        let json = #"{"a":{"b":{"c":"xxxxxxxxxxxxxxxx","d":[1,2,3,4,5,6,7,8,9,10]},"e":"\u0041"},"f":[]}"#
        let r = try index(json, unitBytes: 12)
        XCTAssertTrue(r.trailer.hasPieces)
        XCTAssertEqual(
            r.entries.map(\.pointer),
            [
                "/a/b/c", "/a/b/d/0", "/a/b/d/1", "/a/b/d/2", "/a/b/d/3", "/a/b/d/4", "/a/b/d/5", "/a/b/d/6", "/a/b/d/7", "/a/b/d/8",
                "/a/b/d/9", "/a/e", "/f",
            ])
        XCTAssertEqual(try rebuilt(r), #"{"a":{"b":{"c":"xxxxxxxxxxxxxxxx","d":[1,2,3,4,5,6,7,8,9,10]},"e":"A"},"f":[]}"#)
        let whole = try index(json, depth: 0)
        XCTAssertEqual(whole.entries.map(\.pointer), [""])
        XCTAssertEqual(whole.trailer.end, "")
    }

    func testTheIndexRefusesDuplicateNamesAndCompressedInput() throws {
        XCTAssertThrowsError(try index(#"{"a":{"x":1},"a":{"y":2}}"#, records: ["/{k}"])) {
            XCTAssertTrue($0 is DuplicateKeyError, "\($0)")
        }
        let dir = try TemporaryDirectory()
        let input = dir.path("in.json")
        try Data(#"{"a":1}"#.utf8).write(to: URL(fileURLWithPath: input))
        _ = try Shell.run("gzip", [input])
        XCTAssertThrowsError(try DumpIndexJob(input: input + ".gz", output: dir.path("x.dkindex")).run()) {
            XCTAssertTrue("\($0)".contains("cannot be read from the middle"), "\($0)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.path("x.dkindex")))
    }

    func testShardsAreConsecutiveRunsOfUnits() {
        let entries = (0..<100).map {
            DumpIndex.Entry(
                offset: Int64($0 * 10), length: 9, crc: 0, structure: "", pointer: "", kind: .content, line: 1, lineStart: 0,
                containers: "o")
        }
        for n in [1, 2, 3, 8] {
            let shards = entries.map { DumpIndex.shard(of: $0, count: n, size: 1000) }
            XCTAssertEqual(shards, shards.sorted())
            XCTAssertEqual(Set(shards), Set(0..<n))
        }
    }

    func testShardSpecFromFlagsAndRunners() throws {
        XCTAssertEqual(
            try ShardSpec.resolve(flag: "3/8", count: nil, environment: ["JOB_COMPLETION_INDEX": "1"]), try ShardSpec(index: 3, count: 8))
        XCTAssertEqual(
            try ShardSpec.resolve(flag: nil, count: 4, environment: ["JOB_COMPLETION_INDEX": "1"]), try ShardSpec(index: 1, count: 4))
        XCTAssertEqual(
            try ShardSpec.resolve(flag: nil, count: 5, environment: ["AWS_BATCH_JOB_ARRAY_INDEX": "4"]), try ShardSpec(index: 4, count: 5))
        XCTAssertEqual(
            try ShardSpec.resolve(flag: nil, count: nil, environment: ["CLOUD_RUN_TASK_INDEX": "2", "CLOUD_RUN_TASK_COUNT": "3"]),
            try ShardSpec(index: 2, count: 3))
        XCTAssertEqual(
            try ShardSpec.resolve(flag: nil, count: nil, environment: ["BATCH_TASK_INDEX": "0", "BATCH_TASK_COUNT": "2"]),
            try ShardSpec(index: 0, count: 2))
        XCTAssertNil(try ShardSpec.resolve(flag: nil, count: nil, environment: [:]))
        for (flag, count, env, message) in [
            (nil, nil, ["AWS_BATCH_JOB_ARRAY_INDEX": "1"], "pass --shard-count N"),
            (nil, nil, ["BATCH_TASK_INDEX": "1"], "BATCH_TASK_COUNT is not"),
            ("8/8", nil, [:], "not in 0..<8"),
            ("1-8", nil, [:], "--shard takes I/N"),
            (nil, 3, [:], "without a shard index"),
            ("1/4", 3, [:], "disagree"),
        ] as [(String?, Int?, [String: String], String)] {
            XCTAssertThrowsError(try ShardSpec.resolve(flag: flag, count: count, environment: env)) {
                XCTAssertTrue("\($0)".contains(message), "\($0)")
            }
        }
    }
}
