import Foundation
import TestSupport
import XCTest

/// Seekable zstd dumps in buckets: written there by `convert --seekable -o s3://…`, indexed and
/// sharded where they lie (ranged GETs of the frames a shard needs), and an index that refuses an
/// object replaced since it was made.
final class SeekableBucketDumpTests: BothStoresTestCase {
    func testShardsReadASeekableDumpInABucket() throws {
        let (s3, gcs, environment) = try servers()
        let s3Bucket = try s3.makeBucket()
        let gcsBucket = try gcs.makeBucket()
        let directory = try temporaryDirectory(self)
        // About 10 MB: three frames, shard ranges that start inside them.
        let input = directory.appendingPathComponent("dump.json")
        try dump(bytes: 10_000_000).write(to: input, atomically: true, encoding: .utf8)
        let reference = directory.appendingPathComponent("reference.json").path
        try run(["convert", input.path, "-o", reference], environment)
        for source in ["s3://\(s3Bucket)/db/dump.json.zst", "gs://\(gcsBucket)/db/dump.json.zst"] {
            try run(["convert", input.path, "-o", source, "--seekable", "-q"], environment)
            let local = directory.appendingPathComponent("copy.json").path
            try run(["convert", source, "-o", local, "-q"], environment)
            XCTAssertEqual(try contents(local), try contents(reference), "\(source) reads back as the dump")
            let index = directory.appendingPathComponent("dump.dkindex").path
            try run(["index", source, "-o", index, "--records", "/v1/todolist/{id}", "-q"], environment)
            XCTAssertTrue(
                try String(contentsOfFile: index, encoding: .utf8).contains(
                    source.hasPrefix("s3:") ? "\"objectVersion\":\"ETag " : "\"objectVersion\":\"generation "),
                "the index records the object's version")
            let out = directory.appendingPathComponent("out.json").path
            for shard in 0..<3 {
                try run(["convert", source, "-o", out, "--index", index, "--shard", "\(shard)/3", "-q"], environment)
            }
            try run(["merge", out, "-q"], environment)
            XCTAssertEqual(try contents(out), try contents(reference), source)
            try FileManager.default.removeItem(atPath: out)
            // The index written beside the dump, and the shards reading it from there.
            let storedIndex = source + ".dkindex"
            try run(["index", source, "-o", storedIndex, "--records", "/v1/todolist/{id}", "-q"], environment)
            let two = directory.appendingPathComponent("two.json").path
            for shard in 0..<2 {
                try run(["convert", source, "-o", two, "--index", storedIndex, "--shard", "\(shard)/2", "-q"], environment)
            }
            try run(["merge", two, "-q"], environment)
            XCTAssertEqual(try contents(two), try contents(reference), "\(source) with the index in the bucket")
            try FileManager.default.removeItem(atPath: two)
            let missing = try run(["convert", source, "-o", two, "--index", source + ".nope", "--shard", "0/2"], environment, expect: 2)
            XCTAssertTrue(missing.stderr.contains(source + ".nope"), missing.stderr)
        }
    }

    func testAShardRefusesAnObjectReplacedSinceItWasIndexed() throws {
        let (s3, gcs, environment) = try servers()
        let s3Bucket = try s3.makeBucket()
        let gcsBucket = try gcs.makeBucket()
        let directory = try temporaryDirectory(self)
        let first = directory.appendingPathComponent("first.json")
        let second = directory.appendingPathComponent("second.json")
        try dump(bytes: 300_000).write(to: first, atomically: true, encoding: .utf8)
        // The same size, other digits.
        try dump(bytes: 300_000, variant: 1).write(to: second, atomically: true, encoding: .utf8)
        XCTAssertEqual(try contents(first.path).count, try contents(second.path).count)
        for source in ["s3://\(s3Bucket)/dump.json", "gs://\(gcsBucket)/dump.json"] {
            try run(["convert", first.path, "-o", source, "-q"], environment)
            let index = directory.appendingPathComponent("dump.dkindex").path
            // Units of at most 64 kB: both shards read some of the records.
            try run(["index", source, "-o", index, "--unit-bytes", "65536", "-q"], environment)
            let out = directory.appendingPathComponent("out.json").path
            try run(["convert", source, "-o", out, "--index", index, "--shard", "0/2", "-q"], environment)
            try run(["convert", second.path, "-o", source, "-q"], environment)
            let refused = try run(["convert", source, "-o", out, "--index", index, "--shard", "1/2"], environment, expect: 1)
            XCTAssertTrue(refused.stderr.contains("\(source) changed since it was indexed ("), refused.stderr)
            XCTAssertTrue(refused.stderr.contains("index says "), refused.stderr)
            XCTAssertTrue(refused.stderr.contains("run dumpkit index again"), refused.stderr)
            XCTAssertFalse(FileManager.default.fileExists(atPath: out + ".part-1-of-2"), "no part for the refused shard")
            // A local copy of the object is left to the size and the checksums, which refuse this one.
            let local = directory.appendingPathComponent("local.json").path
            try run(["convert", source, "-o", local, "-q"], environment)
            let copy = try run(["convert", local, "-o", out, "--index", index, "--shard", "1/2"], environment, expect: 2)
            XCTAssertTrue(copy.stderr.contains("not those the index was made from"), copy.stderr)
            try FileManager.default.removeItem(atPath: out + ".part-0-of-2")
            try FileManager.default.removeItem(atPath: out + ".part-0-of-2.manifest")
        }
    }
}
