import Foundation
import TestSupport
import XCTest

#if canImport(Glibc)
    import Glibc
#endif

/// Sharded `archive`: `dumpkit index --bucket`, N shards through GNU parallel and `dumpkit merge`
/// give a `.tar.zst` that reads as the unsharded one: the same manifest, the same entries byte for
/// byte after it (the decompressed tar), and `verify`, `list`, `restore` and bsdtar agree.
extension ShardedRunTests {
    /// Unsharded archive of `bucket`, then index + N shards + merge for each of `counts`: the same
    /// manifest and entries, verified, listed and extracted by bsdtar alike. Returns the reference.
    @discardableResult
    func checkArchive(
        _ bucket: String, options: [String] = [], in dir: TemporaryDirectory, counts: [Int] = [1, 2, 3, 8], environment: Bool = false,
        file: StaticString = #filePath, line: UInt = #line
    ) throws -> String {
        let bsdtar = try RequiredTool.path("bsdtar", package: "libarchive-tools")
        let reference = dir.path("reference.tar.zst")
        _ = try dumpkit(["archive", bucket, "-o", reference, "-q"] + options, file: file, line: line)
        let (manifest, entries) = try manifestAndEntries(of: reference)
        // The unsharded manifest is padded to the width reserved before hashing; the merged one is not.
        let listing = try Shell.run(bsdtar, ["-tvf", reference]).split(separator: "\n").dropFirst()
        let index = dir.path("bucket.dkindex")
        _ = try dumpkit(["index", "--bucket", bucket, "-o", index, "--unit-bytes", "65536", "-q"], file: file, line: line)
        for n in counts {
            let out = dir.path("\(n).tar.zst")
            try runShards(
                ["archive", bucket, "-o", out, "--index", index] + options, n: n, environment: environment, file: file, line: line)
            let m = try dumpkit(["merge", out, "--json", "-q"], file: file, line: line)
            let summary = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(m.stdout.utf8)) as? [String: Any])
            XCTAssertEqual(summary["objects"] as? Int, (manifest["objects"] as? [Any])?.count, "\(n) shards", file: file, line: line)
            let merged = try manifestAndEntries(of: out)
            XCTAssertEqual(merged.manifest, manifest, "\(n) shards: the manifests differ", file: file, line: line)
            XCTAssertTrue(merged.entries == entries, "\(n) shards: the entries after the manifest differ", file: file, line: line)
            XCTAssertEqual(
                try Shell.run(bsdtar, ["-tvf", out]).split(separator: "\n").dropFirst(), listing, "\(n) shards: bsdtar -tv", file: file,
                line: line)
            let verified = try dumpkit(["verify", out], file: file, line: line)
            XCTAssertTrue(verified.stdout.contains("match the manifest"), verified.stdout, file: file, line: line)
            let parts = try FileManager.default.contentsOfDirectory(atPath: dir.url.path).filter { $0.hasPrefix("\(n).tar.zst.part-") }
            XCTAssertEqual(parts.count, 3 * n, "\(n) shards: a part, its objects and its manifest each", file: file, line: line)
        }
        return reference
    }

    private func bucketFolder(in dir: TemporaryDirectory, count: Int = 300, size: String = "3MB", seed: Int = 1) throws -> String {
        let bucket = dir.path("bucket")
        let script = TestData.projectRoot.appendingPathComponent("Scripts/gen_dataset.py").path
        _ = try Shell.run("python3", [script, "bucket", "--count", String(count), "--size", size, "--seed", String(seed), "-o", bucket])
        return bucket
    }

    func testArchiveOfABucketFolderMergesToAnArchiveThatReadsAsTheUnshardedOne() throws {
        let dir = try TemporaryDirectory()
        let bucket = try bucketFolder(in: dir)
        let reference = try checkArchive(bucket, in: dir)

        // Restored, the merged archive gives the unsharded one's folder.
        _ = try dumpkit(["restore", reference, dir.path("from-reference"), "-q"])
        _ = try dumpkit(["restore", dir.path("3.tar.zst"), dir.path("from-shards"), "-q"])
        let restored = try storeContents(dir.path("from-shards"))
        XCTAssertEqual(restored.count, 300)
        XCTAssertTrue(restored == (try storeContents(dir.path("from-reference"))), "the restored folders differ")
    }

    func testArchiveShardsOfABlobStoreTakeTheirIndexFromTheRunnersEnvironment() throws {
        // A blob store: its sidecars' metadata (download tokens) go into the manifest, from every shard.
        let dir = try TemporaryDirectory()
        let input = dir.path("images.json")
        try generate("images", "1MB", seed: 3, to: input)
        let store = dir.path("store")
        _ = try dumpkit([
            "extract-blobs", input, "-o", dir.path("out.json"), "--blobs", store, "--ref-style", "salada", "--bucket", "my-app.appspot.com",
            "-q",
        ])
        try checkArchive(store, options: ["--exclude", "*.pdf"], in: dir, counts: [2, 3], environment: true)
    }

    /// A shard killed with SIGKILL and run again: the merge is byte for byte the first one (parts are
    /// deterministic); before it runs again, merge names it and writes nothing.
    func testAnArchiveShardKilledAndRunAgainMergesToTheSameBytes() throws {
        let dir = try TemporaryDirectory()
        let bucket = try bucketFolder(in: dir, count: 400, size: "8MB", seed: 2)
        let index = dir.path("bucket.dkindex")
        _ = try dumpkit(["index", "--bucket", bucket, "-o", index, "-q"])
        let out = dir.path("out.tar.zst")
        let arguments = ["archive", bucket, "-o", out, "--index", index]
        try runShards(arguments, n: 3)
        _ = try dumpkit(["merge", out, "-q"])
        let first = try read(out)
        try FileManager.default.removeItem(atPath: out)
        try killShardOneOfThree(arguments, output: out, files: ["", ".objects", ".manifest"], in: dir)
        _ = try dumpkit(arguments + ["--shard", "1/3", "-q"])
        _ = try dumpkit(["merge", out, "-q"])
        XCTAssertTrue(try read(out) == first, "the merge after the re-run differs from the first")
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.url.path)
        XCTAssertFalse(names.contains(where: { $0.contains(".dumpkit-") }), "temporary files left: \(names)")
    }

    func testMergeOfAShardedArchiveNamesAMissingOrChangedPartAndWritesNothing() throws {
        let dir = try TemporaryDirectory()
        let bucket = try bucketFolder(in: dir, count: 120, size: "1MB")
        let index = dir.path("bucket.dkindex")
        _ = try dumpkit(["index", "--bucket", bucket, "-o", index, "--unit-bytes", "20000", "-q"])
        let out = dir.path("out.tar.zst")
        try runShards(["archive", bucket, "-o", out, "--index", index], n: 3)

        func refused(_ expected: String, file: StaticString = #filePath, line: UInt = #line) throws {
            let r = try CLI.run(["merge", out])
            XCTAssertEqual(r.status, 1, r.stderr, file: file, line: line)
            XCTAssertTrue(r.stderr.contains(expected), r.stderr, file: file, line: line)
            XCTAssertFalse(FileManager.default.fileExists(atPath: out), "merge wrote an output", file: file, line: line)
        }
        for suffix in [".objects", ""] {
            let path = out + ".part-2-of-3" + suffix
            let saved = try read(path)
            try FileManager.default.removeItem(atPath: path)
            try refused(suffix.isEmpty ? "\(path) is missing" : "\(path): missing")
            var changed = saved
            changed[changed.count / 2] ^= 1
            try changed.write(to: URL(fileURLWithPath: path))
            try refused(suffix.isEmpty ? "shard 2 of 3 is stale" : "\(path): not the file its manifest describes")
            try saved.write(to: URL(fileURLWithPath: path))
        }
        _ = try dumpkit(["merge", out, "-q"])
    }

    /// `--include` is checked over all shards: a pattern only one shard matches is fine; one no shard
    /// matches fails the merge (exit 1), as the unsharded archive fails.
    func testArchiveShardsCheckIncludesOverAllShards() throws {
        let dir = try TemporaryDirectory()
        let bucket = try bucketFolder(in: dir, count: 60, size: "400KB")
        let index = dir.path("bucket.dkindex")
        _ = try dumpkit(["index", "--bucket", bucket, "-o", index, "--unit-bytes", "10000", "-q"])
        let names = try FileManager.default.subpathsOfDirectory(atPath: bucket).filter { $0.hasSuffix(".json") }.sorted {
            $0.utf8.lexicographicallyPrecedes($1.utf8)
        }
        let last = try XCTUnwrap(names.last)
        let out = dir.path("out.tar.zst")
        try runShards(["archive", bucket, "-o", out, "--index", index, "--include", last], n: 3)
        let m = try dumpkit(["merge", out, "--json", "-q"])
        let summary = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(m.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(summary["objects"] as? Int, 1, m.stdout)
        XCTAssertEqual(
            try Shell.run(try RequiredTool.path("bsdtar", package: "libarchive-tools"), ["-tf", out]), ".dumpkit-manifest.json\n\(last)\n")

        let none = dir.path("none.tar.zst")
        try runShards(["archive", bucket, "-o", none, "--index", index, "--include", last, "--include", "nothing/*"], n: 3)
        let r = try CLI.run(["merge", none])
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertTrue(r.stderr.contains("--include 'nothing/*' matches no object"), r.stderr)
    }

    func testArchiveShardsRefuseAnIndexOfAnotherBucketOrADumpAndOtherFormats() throws {
        let dir = try TemporaryDirectory()
        let bucket = try bucketFolder(in: dir, count: 20, size: "100KB")
        let other = dir.path("other")
        try FileManager.default.createDirectory(atPath: other, withIntermediateDirectories: true)
        try Data("x".utf8).write(to: URL(fileURLWithPath: other + "/a.txt"))
        let index = dir.path("other.dkindex")
        _ = try dumpkit(["index", other, "-o", index, "-q"])
        let dump = dir.path("dump.json")
        try Data(#"{"a":1}"#.utf8).write(to: URL(fileURLWithPath: dump))
        let dumpIndex = dir.path("dump.dkindex")
        _ = try dumpkit(["index", dump, "-o", dumpIndex, "-q"])
        let own = dir.path("bucket.dkindex")
        _ = try dumpkit(["index", "--bucket", bucket, "-o", own, "-q"])

        for (arguments, expected) in [
            (["archive", bucket, "-o", dir.path("a.tar.zst"), "--index", index, "--shard", "0/2"], "the index was made for \(other)"),
            (["archive", bucket, "-o", dir.path("a.tar.zst"), "--index", dumpIndex, "--shard", "0/2"], "it is the index of a dump"),
            (["archive", bucket, "-o", dir.path("a.zip"), "--index", own, "--shard", "0/2"], "a sharded archive is a .tar.zst"),
            (["archive", bucket, "-o", dir.path("a.tar.gz"), "--index", own, "--shard", "0/2"], "a sharded archive is a .tar.zst"),
            (["archive", bucket, "-o", dir.path("a.tar.zst"), "--shard", "0/2"], "--shard and --shard-count need --index"),
            (["convert", dump, "-o", dir.path("b.json"), "--index", own, "--shard", "0/2"], own),
        ] {
            let r = try CLI.run(arguments)
            XCTAssertEqual(r.status, 2, "\(arguments): \(r.stderr)")
            XCTAssertTrue(r.stderr.contains(expected), "\(arguments): \(r.stderr)")
        }
        let left = try FileManager.default.contentsOfDirectory(atPath: dir.url.path).filter { $0.contains(".part-") }
        XCTAssertEqual(left, [], "a refused shard wrote files")
    }
}
