import Foundation
import TestSupport
import XCTest

#if canImport(Glibc)
    import Glibc
#endif

/// Sharded `extract-blobs`, `inline-blobs` and `check-blobs`: `dumpkit index`, N shards through GNU
/// parallel and `dumpkit merge` give the unsharded output byte for byte, the same store (objects,
/// metadata, download tokens) and the same report or findings.
extension ShardedRunTests {
    /// The objects and metadata of a blob store by relative path, without what only a run in
    /// progress holds (the lock file, the runs' temporary folders).
    func storeContents(_ root: String) throws -> [String: Data] {
        var out: [String: Data] = [:]
        let e = FileManager.default.enumerator(atPath: root)
        while let p = e?.nextObject() as? String {
            if p == ".dumpkit/lock" || p.hasPrefix(".dumpkit/tmp") { continue }
            var isDir: ObjCBool = false
            if FileManager.default.fileExists(atPath: root + "/" + p, isDirectory: &isDir), !isDir.boolValue {
                out[p] = try read(root + "/" + p)
            }
        }
        return out
    }

    /// Unsharded extract-blobs, then index + N shards + merge for each of `counts`: the same output
    /// bytes, store and report (`--json` and `--report`). Returns the unsharded output and store.
    @discardableResult
    func checkExtract(
        _ input: String, options: [String] = [], indexArguments: [String], in dir: TemporaryDirectory, counts: [Int] = [1, 2, 3, 8],
        environment: Bool = false, file: StaticString = #filePath, line: UInt = #line
    ) throws -> (output: String, store: String) {
        let reference = dir.path("reference.json"), referenceStore = dir.path("reference-store")
        let referenceReport = dir.path("reference-report.json")
        let r = try dumpkit(
            ["extract-blobs", input, "-o", reference, "--blobs", referenceStore, "--report", referenceReport, "--json", "-q"] + options,
            file: file, line: line)
        let objects = try storeContents(referenceStore)
        XCTAssertFalse(objects.isEmpty, "\(input): nothing extracted", file: file, line: line)
        let index = dir.path("extract.dkindex")
        _ = try dumpkit(["index", input, "-o", index, "-q"] + indexArguments, file: file, line: line)
        for n in counts {
            let out = dir.path("\(n)-out.json"), store = dir.path("\(n)-store"), report = dir.path("\(n)-report.json")
            try runShards(
                ["extract-blobs", input, "-o", out, "--blobs", store, "--index", index] + options, n: n, environment: environment,
                file: file,
                line: line)
            let m = try dumpkit(["merge", out, "--json", "--report", report, "-q"], file: file, line: line)
            XCTAssertTrue(try read(out) == read(reference), "\(input), \(n) shards: the merged output differs", file: file, line: line)
            let sharded = try storeContents(store)
            XCTAssertEqual(sharded.keys.sorted(), objects.keys.sorted(), "\(input), \(n) shards", file: file, line: line)
            XCTAssertTrue(sharded == objects, "\(input), \(n) shards: objects or metadata differ", file: file, line: line)
            XCTAssertEqual(m.stdout, r.stdout, "\(input), \(n) shards: merge --json", file: file, line: line)
            XCTAssertEqual(try read(report), try read(referenceReport), "\(input), \(n) shards: merge --report", file: file, line: line)
        }
        return (reference, referenceStore)
    }

    private func sample(_ app: String) -> String { TestData.projectRoot.appendingPathComponent("samples/\(app)/v1.json").path }

    func testExtractBlobsOfTheSamplesMergesToTheUnshardedOutputAndStore() throws {
        for app in ["todolist", "wedding"] {
            let dir = try TemporaryDirectory()
            try checkExtract(sample(app), indexArguments: ["--unit-bytes", "512"], in: dir)
            let salada = try TemporaryDirectory()
            try checkExtract(
                sample(app), options: ["--ref-style", "salada", "--bucket", "my-app.appspot.com", "--content-addressed"],
                indexArguments: ["--unit-bytes", "512", "--run-bytes", "512"], in: salada, counts: [3])
        }
    }

    func testExtractBlobsOfAGeneratedDumpMergesToTheUnshardedOutputAndStore() throws {
        // About 10% of the images repeat, so shards write the same objects and merge counts them once.
        let dir = try TemporaryDirectory()
        let input = dir.path("images.json")
        try generate("images", "2MB", to: input)
        let (reference, store) = try checkExtract(input, indexArguments: ["--unit-bytes", "16384"], in: dir)
        let addressed = try TemporaryDirectory()
        try checkExtract(
            input, options: ["--content-addressed"], indexArguments: ["--unit-bytes", "65536", "--run-bytes", "65536"], in: addressed)

        // inline-blobs of the extracted dump, sharded, gives the unsharded rollback.
        let restored = dir.path("restored.json")
        _ = try dumpkit(["inline-blobs", reference, "-o", restored, "--blobs", store, "-q"])
        let index = dir.path("extracted.dkindex")
        _ = try dumpkit(["index", reference, "-o", index, "-q", "--unit-bytes", "4096"])
        for n in [1, 2, 3, 8] {
            let out = dir.path("\(n)-restored.json")
            try runShards(["inline-blobs", reference, "-o", out, "--blobs", store, "--index", index], n: n, environment: n == 3)
            let m = try dumpkit(["merge", out, "--json", "-q"])
            XCTAssertTrue(try read(out) == read(restored), "\(n) shards: the merged rollback differs")
            let counts = try JSONSerialization.jsonObject(with: Data(m.stdout.utf8)) as? [String: Any]
            XCTAssertEqual((counts?["counts"] as? [String: Int])?["inlined"], (try storeContents(store)).keys.count { !$0.hasPrefix(".") })
        }
    }

    func testExtractBlobsShardsTakeTheirIndexFromTheRunnersEnvironment() throws {
        let dir = try TemporaryDirectory()
        let input = dir.path("images.json")
        try generate("images", "1MB", seed: 4, to: input)
        try checkExtract(input, indexArguments: ["--unit-bytes", "8192"], in: dir, counts: [2, 3], environment: true)
    }

    func testAnExtractBlobsShardKilledAndRunAgainMergesToTheSameOutputAndStore() throws {
        let dir = try TemporaryDirectory()
        let input = dir.path("images.json")
        try generate("images", "4MB", seed: 2, to: input)
        let (reference, referenceStore) = try checkExtract(input, indexArguments: [], in: dir, counts: [])
        let index = dir.path("extract.dkindex")
        let out = dir.path("out.json"), store = dir.path("store")
        let arguments = ["extract-blobs", input, "-o", out, "--blobs", store, "--index", index]
        try runShards(arguments, n: 3)
        try killShardOneOfThree(arguments, output: out, files: ["", ".objects", ".manifest"], in: dir)
        _ = try dumpkit(arguments + ["--shard", "1/3", "-q"])

        // The objects file is checked too: missing or changed, merge names it and writes nothing.
        let objects = out + ".part-2-of-3.objects"
        let saved = try read(objects)
        try FileManager.default.removeItem(atPath: objects)
        var r = try CLI.run(["merge", out])
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertTrue(r.stderr.contains(objects + ": missing; run that shard again"), r.stderr)
        try saved.dropLast(2).write(to: URL(fileURLWithPath: objects))
        r = try CLI.run(["merge", out])
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertTrue(r.stderr.contains(objects + ": not the file its manifest describes"), r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))
        try saved.write(to: URL(fileURLWithPath: objects))

        _ = try dumpkit(["merge", out, "-q"])
        XCTAssertTrue(try read(out) == read(reference))
        XCTAssertTrue(try storeContents(store) == storeContents(referenceStore), "the store differs from the unsharded one")
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.url.path)
        XCTAssertFalse(names.contains(where: { $0.contains(".dumpkit-") }), "temporary files left: \(names)")
    }

    /// Two images under one name in two shards: the unsharded run stops (exit 1, naming both
    /// places); sharded, the shard that comes second finds the other bytes in the store and stops,
    /// and with --replace (where both shards succeed) merge stops with the unsharded message.
    func testOneNameWithTwoContentsInTwoShardsFailsAsUnsharded() throws {
        let dir = try TemporaryDirectory()
        func png(_ fill: UInt8) -> String {
            let bytes = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + [UInt8](repeating: fill, count: 2000)
            return "data:image/png;base64," + Data(bytes).base64EncodedString()
        }
        let input = dir.path("dump.json")
        try Data(#"{"a":{"image":"\#(png(1))"},"b":{"image":"\#(png(2))"}}"#.utf8).write(to: URL(fileURLWithPath: input))
        let options = ["--name", "same.{ext}", "--blobs", dir.path("store")]
        let unsharded = try CLI.run(["extract-blobs", input, "-o", dir.path("reference.json")] + options)
        XCTAssertEqual(unsharded.status, 1, unsharded.stderr)
        let message = #"object name "same.png" would hold different contents from /a/image and /b/image"#
        XCTAssertTrue(unsharded.stderr.contains(message), unsharded.stderr)

        let index = dir.path("dump.dkindex")
        _ = try dumpkit(["index", input, "-o", index, "-q"])
        let out = dir.path("out.json")
        let shard = ["extract-blobs", input, "-o", out, "--index", index, "-q"] + options
        _ = try dumpkit(shard + ["--shard", "0/2"])
        let second = try CLI.run(shard + ["--shard", "1/2"])
        XCTAssertEqual(second.status, 1, second.stderr)
        XCTAssertTrue(second.stderr.contains(#"1 object already exists in the "#) && second.stderr.contains(#""same.png""#), second.stderr)
        XCTAssertTrue(second.stderr.contains("if another shard of this run wrote them"), second.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out + ".part-1-of-2.manifest"))

        _ = try dumpkit(shard + ["--shard", "1/2", "--replace"])
        _ = try dumpkit(shard + ["--shard", "0/2", "--replace"])
        let merged = try CLI.run(["merge", out])
        XCTAssertEqual(merged.status, 1, merged.stderr)
        XCTAssertTrue(merged.stderr.contains(message), merged.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))
    }

    /// check-blobs over a store with a missing object, a changed object, an object whose metadata
    /// lies (referenced twice, from two shards: reported once, at its first reference) and an
    /// orphan: the merged report (text and JSON, with lines and columns, on the compact and a
    /// pretty-printed dump) and exit status are the unsharded ones.
    func testCheckBlobsMergesToTheUnshardedFindings() throws {
        let dir = try TemporaryDirectory()
        // Forty records with their own PNG, but the last has the first one's: its two uses are in
        // two shards of eight.
        func png(_ seed: Int) -> String {
            let bytes =
                [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + (0..<3000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ seed &* 31) }
            return "data:image/png;base64," + Data(bytes).base64EncodedString()
        }
        // Record 5 has a key the database refuses: validate reports it before the blob findings.
        let records = (0..<40).map {
            #""r\#($0)":{"title":"t\#($0)",\#($0 == 5 ? #""a.b":1,"# : "")"image":"\#(png($0 == 39 ? 0 : $0))"}"#
        }
        let input = dir.path("images.json")
        try Data(("{" + records.joined(separator: ",") + "}").utf8).write(to: URL(fileURLWithPath: input))
        let clean = dir.path("clean.json"), store = dir.path("store")
        _ = try dumpkit(["extract-blobs", input, "-o", clean, "--blobs", store, "--content-addressed", "-q"])
        let text = String(decoding: try read(clean), as: UTF8.self)
        let names = text.matches(of: /sha256\/[0-9a-f]{64}\.[a-z]+/).map { String($0.output) }
        let twice = Set(names.filter { n in names.count { $0 == n } > 1 }).sorted()
        let once = Set(names).subtracting(twice).sorted()
        XCTAssertEqual(twice.count, 1, "the dump has one image used twice")
        try FileManager.default.removeItem(atPath: store + "/" + once[0])
        let changed = FileHandle(forWritingAtPath: store + "/" + once[1])!
        changed.seekToEndOfFile()
        changed.write(Data("changed".utf8))
        changed.closeFile()
        let meta = store + "/.dumpkit/meta"
        let lying = try FileManager.default.subpathsOfDirectory(atPath: meta).first {
            String(decoding: (try? read(meta + "/" + $0)) ?? Data(), as: UTF8.self).contains(#""name":"\#(twice[0])""#)
        }!
        let metadata = String(decoding: try read(meta + "/" + lying), as: UTF8.self)
        try Data(metadata.replacingOccurrences(of: #""sha256":""#, with: #""sha256":"00"#).utf8).write(
            to: URL(fileURLWithPath: meta + "/" + lying))
        try FileManager.default.createDirectory(atPath: store + "/extra", withIntermediateDirectories: true)
        try Data("x".utf8).write(to: URL(fileURLWithPath: store + "/extra/orphan.txt"))
        let pretty = dir.path("pretty.json")
        _ = try dumpkit(["convert", clean, "-o", pretty, "--pretty", "-q"])

        for dump in [clean, pretty] {
            let unsharded = try CLI.run(["check-blobs", dump, "--blobs", store])
            let unshardedJSON = try CLI.run(["check-blobs", dump, "--blobs", store, "--json"])
            XCTAssertEqual(unsharded.status, 1, unsharded.stderr)
            for rule in ["blobs:missing", "blobs:size", "blobs:metadata", "blobs:orphan"] {
                XCTAssertTrue(unsharded.stdout.contains("[\(rule)]"), "\(rule): \(unsharded.stdout)")
            }
            XCTAssertEqual(unsharded.stdout.components(separatedBy: "[blobs:metadata]").count, 2, unsharded.stdout)
            let index = dump + ".dkindex"
            _ = try dumpkit(["index", dump, "-o", index, "--unit-bytes", "2048", "-q"])
            for n in [1, 2, 3, 8] {
                let out = dir.path("\(n)-findings")
                try runShards(["check-blobs", dump, "--blobs", store, "-o", out, "--index", index], n: n, environment: n == 2)
                let merged = try CLI.run(["merge", out])
                XCTAssertEqual(merged.status, 1, merged.stderr)
                XCTAssertEqual(merged.stdout, unsharded.stdout, "\(dump), \(n) shards")
                XCTAssertEqual(merged.stderr, unsharded.stderr, "\(dump), \(n) shards")
                let mergedJSON = try CLI.run(["merge", out, "--json"])
                XCTAssertEqual(mergedJSON.stdout, unshardedJSON.stdout, "\(dump), \(n) shards: --json")
                if n == 8 {
                    // The lying metadata was found by two shards; merge kept the first one's finding.
                    let parts = try (0..<n).map { String(decoding: try read(out + ".part-\($0)-of-\(n)"), as: UTF8.self) }
                    XCTAssertEqual(parts.filter { $0.contains("blobs:metadata") }.count, 2)
                }
            }

            // validate --blobs: the limits' findings, then the blob check's, as the unsharded run reports them.
            let validated = try CLI.run(["validate", dump, "--blobs", store])
            XCTAssertEqual(validated.status, 1, validated.stderr)
            XCTAssertTrue(
                validated.stdout.contains("limits:key-characters") && validated.stdout.contains("blobs:missing"), validated.stdout)
            for format in ["text", "json", "junit"] {
                let unshardedReport = try CLI.run(["validate", dump, "--blobs", store, "--format", format])
                for n in [1, 3, 8] {
                    let out = dir.path("\(n)-validate-\(format)")
                    try runShards(["validate", dump, "--blobs", store, "-o", out, "--index", index], n: n)
                    let merged = try CLI.run(["merge", out, "--format", format])
                    XCTAssertEqual(merged.status, 1, merged.stderr)
                    XCTAssertEqual(merged.stdout, unshardedReport.stdout, "validate --blobs, \(dump), \(n) shards, \(format)")
                }
            }
        }
    }

    func testBlobCommandsRefuseWhatCannotBeShardedNamingTheWayOut() throws {
        let dir = try TemporaryDirectory()
        let input = sample("todolist")
        let index = dir.path("todo.dkindex")
        _ = try dumpkit(["index", input, "-o", index, "-q"])
        let shard = ["--index", index, "--shard", "0/2"]
        let extract = ["extract-blobs", input, "-o", dir.path("out.json"), "--blobs", dir.path("store")] + shard
        let cases: [([String], [String])] = [
            (extract + ["--report", dir.path("r.json")], ["--report", "pass --report FILE to dumpkit merge"]),
            (extract + ["--dry-run"], ["--dry-run cannot be sharded", "dumpkit extract-blobs without --index"]),
            (extract + ["--name", "{record}/{field}.{ext}"], ["uses {record}", "dumpkit extract-blobs without --index"]),
            (extract + ["--pretty"], ["--pretty cannot be sharded", "without --index"]),
            (
                ["inline-blobs", input, "-o", dir.path("in.json"), "--blobs", dir.path("store"), "--dry-run"] + shard,
                ["--dry-run cannot be sharded", "dumpkit inline-blobs without --index"]
            ),
            (["check-blobs", input, "--blobs", dir.path("store")] + shard, ["a check-blobs shard writes its findings", "pass -o OUT"]),
        ]
        for (arguments, expected) in cases {
            let r = try CLI.run(arguments)
            XCTAssertEqual(r.status, 2, "\(arguments): \(r.stderr)")
            for text in expected { XCTAssertTrue(r.stderr.contains(text), "\(arguments): \(r.stderr)") }
            XCTAssertFalse(FileManager.default.fileExists(atPath: dir.path("out.json.part-0-of-2")))
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.path("store")), "a refused run created the store")
    }
}
