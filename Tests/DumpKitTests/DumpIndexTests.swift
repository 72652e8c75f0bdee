import Foundation
import JSONStream
import TestSupport
import XCTest

@testable import DumpKit

/// `DumpIndexJob`'s units and structure, and `ShardSpec` from flags and runners' variables.
final class DumpIndexTests: XCTestCase {
    private func index(
        _ json: String, records: [String] = [], depth: Int = 1, unitBytes: Int64 = 1 << 20, runBytes: Int64? = nil
    ) throws -> (
        entries: [DumpIndex.Entry], trailer: DumpIndex.Trailer, bytes: [UInt8]
    ) {
        let dir = try TemporaryDirectory()
        let input = dir.path("in.json")
        try Data(json.utf8).write(to: URL(fileURLWithPath: input))
        var job = DumpIndexJob(input: input, output: dir.path("in.dkindex"))
        job.records = try records.map { try PathPattern($0) }
        job.depth = depth
        job.unitBytes = unitBytes
        job.runBytes = runBytes ?? unitBytes
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
            let inObject = e.containers.last == "o"
            // A run is its container's members: read in the container's brackets, written without them.
            let unit = Array(r.bytes[Int(e.offset)..<Int(e.end)])
            let wrapped = e.members == 0 ? unit : Array((inObject ? "{" : "[").utf8) + unit + Array((inObject ? "}" : "]").utf8)
            let sink = MemoryByteSink()
            let w = JSONWriter(sink: sink)
            try JSONReader(source: MemoryByteSource(wrapped)).transfer(to: w)
            try w.flush()
            out += e.structure + (e.members == 0 ? sink.string : String(sink.string.dropFirst().dropLast()))
        }
        return out + r.trailer.end
    }

    /// The unit's bytes in the input.
    private func text(_ r: (entries: [DumpIndex.Entry], trailer: DumpIndex.Trailer, bytes: [UInt8]), _ i: Int) -> String {
        String(decoding: r.bytes[Int(r.entries[i].offset)..<Int(r.entries[i].end)], as: UTF8.self)
    }

    func testUnitsAreRunsOfSiblingsWithTheStructureBetweenThem() throws {
        let json = #"{ "v1": { "todolist": { "-a": {"t": 1}, "-b": [1, 2] }, "meta": "x" }, "n": 3 }"#
        let r = try index(json, records: ["/v1/todolist/{id}"])
        XCTAssertEqual(r.entries.map(\.pointer), ["/v1/todolist/-a", "/v1/meta", "/n"])
        XCTAssertEqual(r.entries.map(\.kind), [.record, .content, .content])
        XCTAssertEqual(r.entries.map(\.members), [2, 1, 1])
        XCTAssertEqual(r.entries.map(\.structure), [#"{"v1":{"todolist":{"#, #"},"#, #"},"#])
        XCTAssertEqual(r.trailer.end, "}")
        XCTAssertEqual(r.trailer.units, 3)
        // A run in an object starts at its first member's name and ends with its last value.
        XCTAssertEqual(text(r, 0), #""-a": {"t": 1}, "-b": [1, 2]"#)
        XCTAssertEqual(text(r, 2), #""n": 3"#)
        XCTAssertEqual(try rebuilt(r), #"{"v1":{"todolist":{"-a":{"t":1},"-b":[1,2]},"meta":"x"},"n":3}"#)
        XCTAssertFalse(r.trailer.hasPieces)

        // A run is at most runBytes (here unitBytes), unless one record alone is larger.
        let records = #"{"r":{"a":"0123456789","b":"0123456789","c":"01234567890123456789012345678901234567890123456789","d":1}}"#
        let small = try index(records, records: ["/r/{id}"], unitBytes: 40)
        XCTAssertEqual(small.entries.map(\.pointer), ["/r/a", "/r/c", "/r/d"])
        XCTAssertEqual(small.entries.map(\.members), [2, 1, 1])
        XCTAssertEqual(text(small, 0), #""a":"0123456789","b":"0123456789""#)
        XCTAssertEqual(try rebuilt(small), records)
    }

    func testRunsAreAtMostA4096thOfTheDumpByDefault() throws {
        let records = (0..<20_000).map { #""k\#($0)":{"v":\#($0 * 7)}"# }
        let json = #"{"r":{"# + records.joined(separator: ",") + "}}"
        var job = DumpIndexJob(input: "", output: "")
        job.records = [try PathPattern("/r/{id}")]
        let dir = try TemporaryDirectory()
        job.input = dir.path("in.json")
        job.output = dir.path("in.dkindex")
        try Data(json.utf8).write(to: URL(fileURLWithPath: job.input))
        let summary = try job.run()
        let reader = try DumpIndexReader(path: job.output)
        var entries: [DumpIndex.Entry] = []
        while let e = try reader.next() { entries.append(e) }
        let cap = Int64(json.utf8.count / 4096)
        XCTAssertEqual(summary.records, 20_000)
        XCTAssertEqual(entries.reduce(0) { $0 + $1.members }, 20_000)
        XCTAssertTrue(entries.allSatisfy { $0.length <= cap }, "runs over \(cap) bytes")
        // Full runs: each but the last would have been over the cap with its next sibling.
        XCTAssertLessThan(entries.count, 4096 * 2)
        XCTAssertGreaterThan(entries.count, 4096 / 2)
    }

    func testValuesLargerThanAUnitAreSplitIntoRunsOfTheirChildren() throws {
        let json = #"{"a":{"b":{"c":"xxxxxxxxxxxxxxxx","d":[1,2,3,4,5,6,7,8,9,10]},"e":"\u0041"},"f":[]}"#
        let r = try index(json, unitBytes: 12)
        XCTAssertTrue(r.trailer.hasPieces)
        XCTAssertEqual(r.entries.map(\.pointer), ["/a/b/c", "/a/b/d/0", "/a/b/d/6", "/a/e", "/f"])
        XCTAssertEqual(r.entries.map(\.members), [1, 6, 4, 1, 1])
        XCTAssertEqual(r.entries.map(\.structure), [#"{"a":{"b":{"#, #","d":["#, ",", "]},", "},"])
        XCTAssertEqual(text(r, 1), "1,2,3,4,5,6")
        XCTAssertEqual(text(r, 2), "7,8,9,10")
        XCTAssertEqual(try rebuilt(r), #"{"a":{"b":{"c":"xxxxxxxxxxxxxxxx","d":[1,2,3,4,5,6,7,8,9,10]},"e":"A"},"f":[]}"#)
        let whole = try index(json, depth: 0)
        XCTAssertEqual(whole.entries.map(\.pointer), [""])
        XCTAssertEqual(whole.entries.map(\.members), [0])
        XCTAssertEqual(whole.trailer.end, "")
        XCTAssertEqual(try rebuilt(whole), #"{"a":{"b":{"c":"xxxxxxxxxxxxxxxx","d":[1,2,3,4,5,6,7,8,9,10]},"e":"A"},"f":[]}"#)
    }

    func testRunsLargerThanAUnitAndEntriesThatDisagreeWithTheirContainersAreRefused() throws {
        XCTAssertThrowsError(try index(#"{"a":1}"#, unitBytes: 10, runBytes: 11)) {
            XCTAssertTrue("\($0)".contains("--run-bytes must be from 1 to --unit-bytes (10)"), "\($0)")
        }
        let dir = try TemporaryDirectory()
        let input = dir.path("in.json")
        try Data(#"{"l":[1,2,3],"o":{"k":1}}"#.utf8).write(to: URL(fileURLWithPath: input))
        var job = DumpIndexJob(input: input, output: dir.path("good.dkindex"))
        job.depth = 2
        _ = try job.run()
        let good = try String(contentsOfFile: dir.path("good.dkindex"), encoding: .utf8)
        XCTAssertTrue(good.contains(#""/l/0","c",1,0,"oa",1]"#), good)
        // A pointer with fewer segments than containers, and an array member without an index.
        for bad in [good.replacingOccurrences(of: #""/l/0""#, with: #""/l""#), good.replacingOccurrences(of: #""/l/0""#, with: #""/l/x""#)]
        {
            try bad.write(toFile: dir.path("bad.dkindex"), atomically: true, encoding: .utf8)
            let reader = try DumpIndexReader(path: dir.path("bad.dkindex"))
            XCTAssertThrowsError(try reader.next()) { XCTAssertTrue("\($0)".contains("make the index again"), "\($0)") }
        }
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
                containers: "o", members: 1)
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
