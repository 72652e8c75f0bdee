import Foundation
import TestSupport
import XCTest

/// Sharded runs of seekable zstd dumps (`convert --seekable`): `zstd -d` reads the file as the plain
/// output, `index` and the shards read its decompressed bytes, and the merge equals the unsharded
/// run byte for byte; what cannot be read is refused with the way out.
final class SeekableShardTests: XCTestCase {
    /// The frame size `--seekable` writes.
    let frame = 4 << 20

    func read(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }

    func generate(_ kind: String, _ size: String, seed: Int, to path: String) throws {
        let script = TestData.projectRoot.appendingPathComponent("Scripts/gen_dataset.py").path
        _ = try Shell.run("python3", [script, kind, "--size", size, "--seed", String(seed), "-o", path])
    }

    @discardableResult
    func dumpkit(_ arguments: [String], file: StaticString = #filePath, line: UInt = #line) throws -> CLI.Result {
        let r = try CLI.run(arguments)
        XCTAssertEqual(r.status, 0, "dumpkit \(arguments.joined(separator: " ")): \(r.stderr)", file: file, line: line)
        return r
    }

    /// Runs shards 0..<n of `arguments` through GNU parallel, two at a time.
    func runShards(_ arguments: [String], n: Int, file: StaticString = #filePath, line: UInt = #line) throws {
        let parallel = try RequiredTool.path("parallel", package: "parallel")
        let command =
            ["--will-cite", "--halt", "now,fail=1", "--jobs", "2", "-q", CLI.binary.path] + arguments + ["--shard", "{}/\(n)", "-q", ":::"]
            + (0..<n).map(String.init)
        let r = try Shell.execute(URL(fileURLWithPath: parallel), command)
        XCTAssertEqual(r.status, 0, "parallel: " + String(decoding: r.stderr, as: UTF8.self), file: file, line: line)
    }

    /// The 4-byte little-endian number at `at`.
    func word(_ bytes: [UInt8], at: Int) -> Int {
        var n = 0
        for i in 0..<4 { n |= Int(bytes[at + i]) << (8 * i) }
        return n
    }

    /// A compact dump of exactly `count` bytes: records `"kNNNNNN":"text"` under `/v1/todolist`, one
    /// of whose strings has `special` starting at byte `at`.
    func dump(count: Int, special: String = "", at: Int? = nil) -> [UInt8] {
        var out = Array("{\"v1\":{\"todolist\":{".utf8)
        let tail = Array("}}}".utf8)
        var i = 0
        // A record's bytes besides its text: `,"k000001":"` and the closing quote.
        let overhead = 13
        func append(_ text: String) {
            out += Array(String(format: "%@\"k%06d\":\"", i == 0 ? "" : ",", i).utf8) + Array(text.utf8) + [UInt8(ascii: "\"")]
            i += 1
        }
        if let at {
            while at - out.count > 2 * overhead + 200 { append(String(repeating: "a", count: 200)) }
            append(String(repeating: "p", count: at - out.count - (overhead - 1)) + special)
        }
        while count - out.count - tail.count > 2 * overhead + 150 { append(String(repeating: "b", count: 150)) }
        append(String(repeating: "z", count: count - out.count - tail.count - overhead))
        return out + tail
    }

    /// Makes the seekable copy of `input`, checks it with `zstd -d` against the plain `convert`
    /// output (beside it, `.plain.json`), and returns its seek table frame (entries from byte 8 on).
    @discardableResult
    func seekableCopy(of input: String, to output: String, arguments: [String] = []) throws -> [UInt8] {
        _ = try dumpkit(["convert", input, "-o", output, "--seekable", "-q"] + arguments)
        let plain = output + ".plain.json"
        _ = try dumpkit(["convert", input, "-o", plain, "-q"] + arguments)
        XCTAssertEqual(try Shell.runData("zstd", ["-d", "-c", output]), try read(plain), "zstd -d reads the plain output")
        let file = try contents(output)
        let n = word(file, at: file.count - 9)
        return [UInt8](file.suffix(8 + 12 * n + 9))
    }

    /// index + N shards + merge of `seekable` equals the unsharded convert of it, N = 1, 2, 3, 8.
    func checkShards(_ seekable: String, reference: String, in dir: TemporaryDirectory, indexArguments: [String] = []) throws {
        let index = dir.path("seekable.dkindex")
        _ = try dumpkit(["index", seekable, "-o", index, "-q"] + indexArguments)
        for n in [1, 2, 3, 8] {
            let out = dir.path("\(n)-out.json")
            try runShards(["convert", seekable, "-o", out, "--index", index], n: n)
            _ = try dumpkit(["merge", out, "-q"])
            XCTAssertTrue(try read(out) == read(reference), "\(seekable) with \(n) shards: the merge differs from the unsharded run")
        }
    }

    func testShardsOfASeekableGeneratedDumpMergeToTheUnshardedBytes() throws {
        let dir = try TemporaryDirectory()
        let input = dir.path("todo.json")
        try generate("todolist", "10MB", seed: 7, to: input)
        let seekable = dir.path("todo.json.zst")
        try seekableCopy(of: input, to: seekable, arguments: ["--level", "5"])
        let reference = dir.path("reference.json")
        _ = try dumpkit(["convert", input, "-o", reference, "-q"])
        try checkShards(seekable, reference: reference, in: dir, indexArguments: ["--unit-bytes", "8192", "--run-bytes", "8192"])
        // The same index serves the plain dump: it holds the decompressed bytes' size and SHA-256.
        let index = dir.path("seekable.dkindex")
        let out = dir.path("plain-shards.json")
        try runShards(["convert", reference, "-o", out, "--index", index], n: 2)
        _ = try dumpkit(["merge", out, "-q"])
        XCTAssertEqual(try read(out), try read(reference))
        try dumpkit(["index", reference, "-o", dir.path("plain.dkindex"), "-q", "--unit-bytes", "8192", "--run-bytes", "8192"])
        XCTAssertEqual(try read(dir.path("plain.dkindex")), try read(index), "the same index from the plain and the seekable dump")
    }

    func testMigrateWithRejectsOfASeekableDumpMergesToTheUnshardedBytes() throws {
        let dir = try TemporaryDirectory()
        let input = dir.path("todo.json")
        try generate("todolist", "9MB", seed: 5, to: input)
        let seekable = dir.path("todo.json.zst")
        try seekableCopy(of: input, to: seekable)
        let plan = dir.path("plan.yaml")
        let text = try String(contentsOf: TestData.projectRoot.appendingPathComponent("schemas/todolist/plan.yaml"), encoding: .utf8)
        try text.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.contains("- move:") }.joined(separator: "\n")
            .write(toFile: plan, atomically: true, encoding: .utf8)
        let reference = dir.path("reference.json")
        _ = try dumpkit(["migrate", input, "-o", reference, "--plan", plan, "--on-error", "keep", "-q"])
        let index = dir.path("m.dkindex")
        _ = try dumpkit(["index", seekable, "-o", index, "--records", "/v1/todolist/{id}", "-q"])
        for n in [1, 3] {
            let out = dir.path("\(n)-migrated.json")
            try runShards(["migrate", seekable, "-o", out, "--plan", plan, "--on-error", "keep", "--index", index], n: n)
            _ = try dumpkit(["merge", out, "-q"])
            XCTAssertTrue(try read(out) == read(reference), "\(n) shards: the merged migration differs")
            XCTAssertEqual(try read(out + ".rejects.ndjson"), try read(reference + ".rejects.ndjson"), "\(n) shards: the rejects differ")
        }
    }

    func testValidateOfASeekableDumpMergesToTheUnshardedReport() throws {
        let dir = try TemporaryDirectory()
        let input = dir.path("errors.json")
        try generate("errors", "9MB", seed: 3, to: input)
        let seekable = dir.path("errors.json.zst")
        try seekableCopy(of: input, to: seekable)
        let index = dir.path("errors.dkindex")
        try dumpkit(["index", seekable, "-o", index, "--depth", "2", "--unit-bytes", "4096", "-q"])
        let reference = try CLI.run(["validate", seekable, "--format", "json"])
        XCTAssertEqual(reference.status, 1, "the generated dump has findings: \(reference.stderr)")
        for n in [1, 3] {
            let out = dir.path("\(n)-findings")
            try runShards(["validate", seekable, "-o", out, "--index", index], n: n)
            let merged = try CLI.run(["merge", out, "--format", "json"])
            XCTAssertEqual(merged.status, reference.status, "\(n) shards: exit status")
            XCTAssertEqual(merged.stdout, reference.stdout, "\(n) shards: the report")
        }
    }

    /// Frame boundaries inside a string and inside a UTF-8 character; an output of exactly three
    /// frames; one smaller than a frame.
    func testFrameBoundariesInsideStringsAndCharacters() throws {
        let cases: [(name: String, bytes: [UInt8], frames: [Int])] = [
            ("utf8", dump(count: 2 * frame + 5000, special: "é🙂 \\\"x", at: frame - 1), [frame, frame, 5001]),
            ("exact", dump(count: 3 * frame - 1, special: "🙂🙂", at: 2 * frame - 3), [frame, frame, frame]),
            ("small", dump(count: 3000), [3001]),
        ]
        for c in cases {
            let dir = try TemporaryDirectory()
            // The output is the dump and a line break.
            XCTAssertEqual(c.bytes.count + 1, c.frames.reduce(0, +), c.name)
            let input = dir.path("\(c.name).json")
            try writeFile(input, c.bytes)
            XCTAssertNoThrow(try JSONSerialization.jsonObject(with: Data(c.bytes)), c.name)
            if c.name == "utf8" { XCTAssertEqual(c.bytes[frame - 1], 0xC3, "é starts in the first frame, ends in the second") }
            if c.name == "exact" { XCTAssertEqual(c.bytes[2 * frame - 1], 0x99, "🙂 starts in the second frame, ends in the third") }
            let seekable = dir.path("\(c.name).json.zst")
            let table = try seekableCopy(of: input, to: seekable)
            let sizes = (0..<c.frames.count).map { word(table, at: 8 + 12 * $0 + 4) }
            XCTAssertEqual(sizes, c.frames, "\(c.name): the seek table's frames")
            let reference = dir.path("reference.json")
            _ = try dumpkit(["convert", input, "-o", reference, "-q"])
            XCTAssertEqual(try contents(reference), c.bytes + Array("\n".utf8), "\(c.name): convert keeps a compact dump's bytes")
            try checkShards(seekable, reference: reference, in: dir, indexArguments: ["--unit-bytes", "4096"])
        }
    }

    func testAnEmptyDocumentAndSeekableWithoutZstdOutput() throws {
        let dir = try TemporaryDirectory()
        let input = dir.path("empty.json")
        try writeFile(input, Array("{}".utf8))
        let seekable = dir.path("empty.json.zst")
        try seekableCopy(of: input, to: seekable)
        try checkShards(seekable, reference: seekable + ".plain.json", in: dir)
        for output in [dir.path("out.json"), dir.path("out.json.gz"), "-"] {
            let r = try CLI.run(["convert", input, "-o", output, "--seekable"])
            XCTAssertEqual(r.status, 2, output)
            XCTAssertTrue(r.stderr.contains("--seekable writes zstd in its seekable format"), r.stderr)
            XCTAssertEqual(r.stdout, "", "nothing written to standard output")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.path("out.json")))
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.path("out.json.gz")))
    }

    func testCorruptSeekableDumpsAndOtherCompressionsAreRefused() throws {
        let dir = try TemporaryDirectory()
        let input = dir.path("todo.json")
        try generate("todolist", "10MB", seed: 3, to: input)
        let seekable = dir.path("seekable.json.zst")
        let table = try seekableCopy(of: input, to: seekable)
        let index = dir.path("todo.dkindex")
        _ = try dumpkit(["index", seekable, "-o", index, "-q"])
        let good = try contents(seekable)
        // A byte in the middle of the second frame: the shard that reads it stops, naming the frame.
        let first = word(table, at: 8)
        let second = word(table, at: 8 + 12)
        var bad = good
        bad[first + second / 2] ^= 0x5A
        let corrupt = dir.path("corrupt.json.zst")
        try writeFile(corrupt, bad)
        var failed = 0
        // Shard 0 (the first 3.3 MB) reads frame 0 only; the others read frame 1 too.
        for i in 0..<3 {
            let r = try CLI.run(["convert", corrupt, "-o", dir.path("out.json"), "--index", index, "--shard", "\(i)/3"])
            if r.status != 0 {
                XCTAssertEqual(r.status, 1, r.stderr)
                XCTAssertTrue(
                    r.stderr.contains("\(corrupt): frame 1 (bytes \(first)..<\(first + second)) cannot be decompressed"), r.stderr)
                XCTAssertFalse(FileManager.default.fileExists(atPath: dir.path("out.json.part-\(i)-of-3")), "no part for a failed shard")
                XCTAssertFalse(FileManager.default.fileExists(atPath: dir.path("out.json.part-\(i)-of-3.manifest")))
                failed += 1
            }
        }
        XCTAssertEqual(failed, 2, "the shards that read frame 1 fail")
        let indexed = try CLI.run(["index", corrupt, "-o", dir.path("corrupt.dkindex")])
        XCTAssertEqual(indexed.status, 1, indexed.stderr)
        XCTAssertTrue(indexed.stderr.contains("frame 1"), indexed.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.path("corrupt.dkindex")))
        // The table's sizes do not add up to the file: refused before any read.
        bad = good
        bad[good.count - table.count + 8] &+= 1
        try writeFile(corrupt, bad)
        let sums = try CLI.run(["index", corrupt, "-o", dir.path("corrupt.dkindex")])
        XCTAssertEqual(sums.status, 1, sums.stderr)
        XCTAssertTrue(sums.stderr.contains("\(corrupt): the seek table's"), sums.stderr)
        XCTAssertTrue(sums.stderr.contains("add up to"), sums.stderr)
        // Truncated: no seek table any more, so plain zstd, refused with the way out.
        try writeFile(corrupt, Array(good.prefix(good.count - 100)))
        // Plain zstd and gzip: the way to a shardable copy.
        _ = try Shell.run("zstd", ["-q", "-k", input])
        _ = try Shell.run("gzip", ["-k", input])
        for path in [corrupt, input + ".zst", input + ".gz"] {
            let r = try CLI.run(["index", path, "-o", dir.path("x.dkindex")])
            XCTAssertEqual(r.status, 2, path)
            XCTAssertTrue(r.stderr.contains("cannot be read from the middle"), r.stderr)
            XCTAssertTrue(r.stderr.contains("dumpkit convert \(path) -o DUMP.json.zst --seekable"), r.stderr)
            let shard = try CLI.run(["convert", path, "-o", dir.path("y.json"), "--index", index, "--shard", "0/2"])
            XCTAssertEqual(shard.status, 2, path)
            XCTAssertTrue(shard.stderr.contains("--seekable"), shard.stderr)
        }
    }
}
