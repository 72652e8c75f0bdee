import CloudHTTP
import DumpKit
import Foundation
import NIOCore
import TestSupport
import XCTest

@testable import ObjectStores

/// Sharded runs with `-o s3://...` and `-o gs://...` (SeaweedFS and fake-gcs-server): the parts,
/// side files and manifests land in the bucket, and `merge` joins them in the store (S3
/// `UploadPartCopy`, Cloud Storage `compose`) into the unsharded run's bytes, or refuses, naming
/// the part's URL, and leaves nothing under the output's name.
final class ShardedBucketMergeTests: BothStoresTestCase {
    /// A todolist dump whose first record holds 12 MB, so that shard 0 of 3 is empty, shard 1's part
    /// is that record (copied in the store) and shard 2's about 2 MB (under S3's 5 MiB smallest part).
    private func dumpWithABigRecord(in directory: URL) throws -> (dump: String, index: String) {
        let small = directory.appendingPathComponent("small.json").path
        let script = TestData.projectRoot.appendingPathComponent("Scripts/gen_dataset.py").path
        _ = try Shell.run("python3", [script, "todolist", "--size", "2MB", "--seed", "5", "-o", small])
        let head = #"{"v1":{"todolist":{"#
        let text = try String(contentsOfFile: small, encoding: .utf8)
        XCTAssertTrue(text.hasPrefix(head))
        let big =
            #""-Kaaaaaaaaaaaaaaaaaa":{"_createdAt":1,"_updatedAt":2,"detail":""# + String(repeating: "0123456789abcdef", count: 750_000)
            + #"","photo_count":"3","progress":"完了","title":"big"},"#
        let dump = directory.appendingPathComponent("dump.json").path
        try (head + big + text.dropFirst(head.count)).write(toFile: dump, atomically: true, encoding: .utf8)
        let index = directory.appendingPathComponent("dump.dkindex").path
        try run(["index", dump, "-o", index, "--records", "/v1/todolist/{id}", "-q"], environmentOfServers())
        return (dump, index)
    }

    /// The todolist sample plan without its move (which shards refuse): some values are rejected.
    private func planWithoutItsMove(in directory: URL) throws -> String {
        let plan = directory.appendingPathComponent("plan.yaml").path
        let text = try String(contentsOf: TestData.projectRoot.appendingPathComponent("schemas/todolist/plan.yaml"), encoding: .utf8)
        try text.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.contains("- move:") }.joined(separator: "\n")
            .write(toFile: plan, atomically: true, encoding: .utf8)
        return plan
    }

    private func environmentOfServers() throws -> [String: String] { try servers().environment }

    private func json(_ r: CLI.Result) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
    }

    func testConvertAndMigrateShardedIntoABucketMergeToTheUnshardedBytes() throws {
        let environment = try environmentOfServers()
        let directory = try temporaryDirectory(self)
        let (dump, index) = try dumpWithABigRecord(in: directory)
        let plan = try planWithoutItsMove(in: directory)
        let convert = directory.appendingPathComponent("convert.json").path
        try run(["convert", dump, "-o", convert, "-q"], environment)
        let migrate = directory.appendingPathComponent("migrate.json").path
        try run(["migrate", dump, "-o", migrate, "--plan", plan, "--on-error", "keep", "-q"], environment)
        let rejects = try Data(contentsOf: URL(fileURLWithPath: migrate + ".rejects.ndjson"))
        XCTAssertGreaterThan(rejects.count, 0, "the dump has values the plan rejects")
        let partSize = 12_000_137

        for scheme in ["s3", "gs"] {
            let bucket = try bucket(scheme)
            for (command, reference) in [("convert", convert), ("migrate", migrate)] {
                let out = "\(bucket)/\(command)/v2.json"
                let options = command == "migrate" ? ["--plan", plan, "--on-error", "keep"] : []
                for i in 0..<3 {
                    try run([command, dump, "-o", out, "--index", index, "--shard", "\(i)/3", "-q"] + options, environment)
                }
                XCTAssertEqual(
                    try keys(in: bucket, startingWith: "\(command)/").sorted(),
                    (0..<3).flatMap { i in
                        ["v2.json.part-\(i)-of-3", "v2.json.part-\(i)-of-3.manifest"]
                            + (command == "migrate" ? ["v2.json.rejects.ndjson.part-\(i)-of-3"] : [])
                    }.map { "\(command)/\($0)" }.sorted(), "\(scheme) \(command): the parts, side files and manifests are in the bucket")
                let merged = try json(try run(["merge", out, "--json", "-q"], environment))
                XCTAssertEqual(
                    try download(out, to: directory), try Data(contentsOf: URL(fileURLWithPath: reference)), "\(scheme) \(command)")
                if command == "migrate" {
                    XCTAssertEqual(try download(out + ".rejects.ndjson", to: directory), rejects, "\(scheme): the rejects")
                    XCTAssertEqual(merged["rejects"] as? String, out + ".rejects.ndjson")
                }
                let copied = try XCTUnwrap(merged["copiedInStore"] as? Int), streamed = try XCTUnwrap(merged["streamed"] as? Int)
                if scheme == "s3" {
                    // Shard 1's 12 MB part is copied by the store; shard 2's 2 MB (under 5 MiB) went
                    // through dumpkit as the last part.
                    XCTAssertGreaterThanOrEqual(copied, partSize - 100_000, "\(command): the large part is copied in the store")
                    XCTAssertLessThan(streamed, 2_100_000, "\(command): only the small part goes through dumpkit")
                } else {
                    XCTAssertEqual(streamed, 0, "\(command): compose copies everything in the store")
                }
                XCTAssertEqual(copied + streamed, merged["bytesOut"] as? Int)
            }
        }
    }

    func testAShardRunAgainWritesTheSameManifestAndPart() throws {
        let environment = try environmentOfServers()
        let directory = try temporaryDirectory(self)
        let (dump, index) = try dumpWithABigRecord(in: directory)
        for scheme in ["s3", "gs"] {
            let out = try bucket(scheme) + "/v2.json"
            try run(["convert", dump, "-o", out, "--index", index, "--shard", "1/3", "-q"], environment)
            let manifest = try download(out + ".part-1-of-3.manifest", to: directory)
            let part = try download(out + ".part-1-of-3", to: directory)
            try run(["convert", dump, "-o", out, "--index", index, "--shard", "1/3", "-q"], environment)
            XCTAssertEqual(try download(out + ".part-1-of-3.manifest", to: directory), manifest, scheme)
            XCTAssertEqual(try download(out + ".part-1-of-3", to: directory), part, scheme)
            let text = String(decoding: try XCTUnwrap(manifest), as: UTF8.self)
            XCTAssertEqual(text.contains("\"partETag\""), scheme == "s3", "S3 parts are checked by their ETag: \(text)")
        }
    }

    func testValidateShardedWithFindingsInABucketMergesToTheUnshardedReport() throws {
        let environment = try environmentOfServers()
        let directory = try temporaryDirectory(self)
        let (dump, index) = try dumpWithABigRecord(in: directory)
        let schema = [
            "--schema", "/v1/todolist/{id}=" + TestData.projectRoot.appendingPathComponent("schemas/todolist/v2.schema.json").path,
        ]
        let unsharded = try run(["validate", dump, "--format", "json"] + schema, environment, expect: 1)
        for scheme in ["s3", "gs"] {
            let findings = try bucket(scheme) + "/findings"
            for i in 0..<3 {
                try run(["validate", dump, "--index", index, "--shard", "\(i)/3", "-o", findings, "-q"] + schema, environment)
            }
            let merged = try run(["merge", findings, "--format", "json"], environment, expect: 1)
            XCTAssertEqual(merged.stdout, unsharded.stdout, scheme)
        }
    }

    func testExtractBlobsWithItsObjectsFilesInABucketMergesToTheUnshardedReport() throws {
        let environment = try environmentOfServers()
        let directory = try temporaryDirectory(self)
        let dump = directory.appendingPathComponent("images.json").path
        let script = TestData.projectRoot.appendingPathComponent("Scripts/gen_dataset.py").path
        _ = try Shell.run("python3", [script, "images", "--size", "1MB", "--seed", "1", "-o", dump])
        let index = directory.appendingPathComponent("images.dkindex").path
        try run(["index", dump, "-o", index, "--unit-bytes", "65536", "-q"], environment)
        let reference = directory.appendingPathComponent("reference.json").path
        let unsharded = try run(
            [
                "extract-blobs", dump, "-o", reference, "--blobs", directory.appendingPathComponent("store1").path, "--content-addressed",
                "--json", "-q",
            ],
            environment)
        for scheme in ["s3", "gs"] {
            let bucket = try bucket(scheme), out = bucket + "/clean.json"
            let store = directory.appendingPathComponent("store-\(scheme)").path
            for i in 0..<3 {
                try run(
                    [
                        "extract-blobs", dump, "-o", out, "--blobs", store, "--content-addressed", "--index", index, "--shard", "\(i)/3",
                        "-q",
                    ],
                    environment)
            }
            XCTAssertEqual(
                try keys(in: bucket, startingWith: "clean.json.part-").filter { $0.hasSuffix(".objects") }.count, 3,
                "\(scheme): the objects files are in the bucket")
            let merged = try run(["merge", out, "--json", "-q"], environment)
            XCTAssertEqual(merged.stdout, unsharded.stdout, scheme)
            XCTAssertEqual(try download(out, to: directory), try Data(contentsOf: URL(fileURLWithPath: reference)), scheme)
        }
    }

    func testMergeRefusesAMissingOrStalePartNamingItsURLAndLeavesNoOutput() throws {
        let (_, _, environment) = try servers()
        let directory = try temporaryDirectory(self)
        let (dump, index) = try dumpWithABigRecord(in: directory)
        for scheme in ["s3", "gs"] {
            let bucket = try bucket(scheme)
            let out = bucket + "/v2.json"
            func shard(_ i: Int) throws { try run(["convert", dump, "-o", out, "--index", index, "--shard", "\(i)/3", "-q"], environment) }
            func refused(_ message: String, _ what: String) throws {
                let r = try run(["merge", out], environment, expect: 1)
                XCTAssertTrue(r.stderr.contains(message), "\(scheme) \(what): \(r.stderr)")
                XCTAssertNil(try download(out, to: directory), "\(scheme) \(what): nothing at the output")
                XCTAssertEqual(try keys(in: bucket, startingWith: "v2.json.dumpkit"), [], "\(scheme) \(what): no temporaries")
                if scheme == "s3" {
                    let client = try XCTUnwrap(
                        ObjectStoreOptions(environment: environment).client(for: XCTUnwrap(ObjectStoreURL(bucket + "/"))) as? S3Client)
                    XCTAssertEqual(try runBlocking { try await client.uploadsInProgress(prefix: "") }.count, 0, "\(what): no upload left")
                }
            }
            for i in 0..<3 { try shard(i) }
            let stores = ObjectStoreOptions(environment: environment)
            let (client, _) = try XCTUnwrap(stores.object(at: out))

            try deleteObject(at: bucket + "/v2.json.part-2-of-3.manifest")
            try refused("shard 2 of 3 has not finished: \(out).part-2-of-3.manifest is missing", "missing manifest")
            try shard(2)

            try deleteObject(at: bucket + "/v2.json.part-1-of-3")
            try refused("shard 1 of 3: \(out).part-1-of-3 is missing", "deleted part")
            try shard(1)

            // The same size, other bytes: only the ETag (S3) or the CRC-32C (Cloud Storage) tells.
            let part = try XCTUnwrap(try download(out + ".part-1-of-3", to: directory))
            var changed = [UInt8](part)
            changed[changed.count / 2] ^= 1
            let object = StoredObject(key: "v2.json.part-1-of-3", size: Int64(changed.count))
            _ = try runBlocking { [changed] in
                try await client.put(key: "v2.json.part-1-of-3", body: ByteBuffer(bytes: changed), object: object, createOnly: false)
            }
            try refused("shard 1 of 3 is stale: \(out).part-1-of-3 is not the part its manifest describes", "part overwritten")
            try shard(1)
            try run(["merge", out, "-q"], environment)
            XCTAssertNotNil(try download(out, to: directory), scheme)
        }
    }

    func testAMissingBucketOrRefusedCredentialsExitTwoNamingTheURL() throws {
        var (_, _, environment) = try servers()
        for scheme in ["s3", "gs"] {
            let r = try run(["merge", "\(scheme)://no-such-bucket-dk/v2.json"], environment, expect: 2)
            XCTAssertTrue(r.stderr.hasPrefix("dumpkit: error: \(scheme)://no-such-bucket-dk/v2.json.part-*"), r.stderr)
            XCTAssertEqual(r.stderr.split(separator: "\n").count, 1, r.stderr)
        }
        let out = try bucket("s3") + "/v2.json"
        environment["AWS_SECRET_ACCESS_KEY"] = "wrong"
        for extra in [[], ["--shards", "3"]] {
            let r = try run(["merge", out] + extra, environment, expect: 2)
            XCTAssertTrue(r.stderr.contains(out) && r.stderr.contains("SignatureDoesNotMatch"), r.stderr)
        }
    }

    func testFortyPartsComposeInRoundsAndLeaveNoTemporaries() throws {
        let environment = try environmentOfServers()
        let directory = try temporaryDirectory(self)
        let dump = directory.appendingPathComponent("dump.json").path
        let script = TestData.projectRoot.appendingPathComponent("Scripts/gen_dataset.py").path
        _ = try Shell.run("python3", [script, "todolist", "--size", "300KB", "--seed", "2", "-o", dump])
        let index = directory.appendingPathComponent("dump.dkindex").path
        try run(["index", dump, "-o", index, "--unit-bytes", "4096", "-q"], environment)
        let reference = directory.appendingPathComponent("reference.json").path
        try run(["convert", dump, "-o", reference, "-q"], environment)
        for scheme in ["gs", "s3"] {
            let bucket = try bucket(scheme)
            let out = bucket + "/v2.json"
            for i in 0..<40 { try run(["convert", dump, "-o", out, "--index", index, "--shard", "\(i)/40", "-q"], environment) }
            let merged = try json(try run(["merge", out, "--json", "-q"], environment))
            XCTAssertEqual(try download(out, to: directory), try Data(contentsOf: URL(fileURLWithPath: reference)), scheme)
            XCTAssertEqual(merged["shards"] as? Int, 40)
            // Every object left is a part or a manifest, or the output.
            XCTAssertEqual(try keys(in: bucket, startingWith: "").filter { !$0.contains(".part-") && $0 != "v2.json" }, [], scheme)
            // S3 parts under 5 MiB go through dumpkit; Cloud Storage composes them all.
            XCTAssertEqual(merged[scheme == "s3" ? "streamed" : "copiedInStore"] as? Int, merged["bytesOut"] as? Int, scheme)
        }
    }

    /// `migrate --rejects URL` with a local output: the shards' rejects parts go to the bucket, and
    /// merge joins them there into the unsharded rejects.
    func testRejectsGivenAsAURLGoToTheBucket() throws {
        let environment = try environmentOfServers()
        let directory = try temporaryDirectory(self)
        let (dump, index) = try dumpWithABigRecord(in: directory)
        let plan = try planWithoutItsMove(in: directory)
        let reference = directory.appendingPathComponent("reference.json").path
        try run(["migrate", dump, "-o", reference, "--plan", plan, "--on-error", "keep", "-q"], environment)
        for scheme in ["s3", "gs"] {
            let rejects = try bucket(scheme) + "/rejects.ndjson"
            let out = directory.appendingPathComponent("\(scheme).json").path
            for i in 0..<3 {
                try run(
                    [
                        "migrate", dump, "-o", out, "--rejects", rejects, "--plan", plan, "--on-error", "keep", "--index", index, "--shard",
                        "\(i)/3", "-q",
                    ],
                    environment)
            }
            XCTAssertNotNil(try download(rejects + ".part-1-of-3", to: directory), scheme)
            try run(["merge", out, "-q"], environment)
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: out)), try Data(contentsOf: URL(fileURLWithPath: reference)), scheme)
            XCTAssertEqual(
                try download(rejects, to: directory), try Data(contentsOf: URL(fileURLWithPath: reference + ".rejects.ndjson")), scheme)
        }
    }

    /// `merge --parts`: parts in a bucket into a local output, local parts into a bucket, and parts in
    /// S3 into Cloud Storage, all through dumpkit, all the unsharded bytes.
    func testMixedPartsAndOutputGoThroughDumpkit() throws {
        let environment = try environmentOfServers()
        let directory = try temporaryDirectory(self)
        let (dump, index) = try dumpWithABigRecord(in: directory)
        let reference = directory.appendingPathComponent("reference.json").path
        try run(["convert", dump, "-o", reference, "-q"], environment)
        let expected = try Data(contentsOf: URL(fileURLWithPath: reference))
        let inS3 = try bucket("s3") + "/v2.json"
        let local = directory.appendingPathComponent("parts.json").path
        for i in 0..<3 {
            try run(["convert", dump, "-o", inS3, "--index", index, "--shard", "\(i)/3", "-q"], environment)
            try run(["convert", dump, "-o", local, "--index", index, "--shard", "\(i)/3", "-q"], environment)
        }
        let fromBucket = directory.appendingPathComponent("from-bucket.json").path
        try run(["merge", fromBucket, "--parts", inS3, "-q"], environment)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: fromBucket)), expected, "bucket parts, local output")
        for out in [try bucket("gs") + "/from-local.json", try bucket("s3") + "/from-local.json"] {
            try run(["merge", out, "--parts", local, "-q"], environment)
            XCTAssertEqual(try download(out, to: directory), expected, "local parts into \(out)")
        }
        let across = try bucket("gs") + "/from-s3.json"
        let merged = try json(try run(["merge", across, "--parts", inS3, "--json", "-q"], environment))
        XCTAssertEqual(try download(across, to: directory), expected, "S3 parts into Cloud Storage")
        XCTAssertEqual(merged["streamed"] as? Int, expected.count)
        XCTAssertEqual(merged["copiedInStore"] as? Int, 0)
    }

    /// A part replaced between the check and the join: the copy's condition (the ETag), or the read
    /// of its bytes pinned to the ETag when they are sent, fails it as a stale shard, the upload is
    /// aborted, and nothing appears under the output's name. Only on S3: fake-gcs-server does not
    /// check a compose source's `ifGenerationMatch` (it composes the new bytes), which Cloud
    /// Storage's API reference says it does.
    func testAPartReplacedDuringTheJoinStopsItLeavingNothing() throws {
        let environment = try environmentOfServers()
        let stores = ObjectStoreOptions(environment: environment)
        let parts = BucketShardParts(options: stores)
        let bytes = SampleBytes.random(count: 12 << 20, seed: 9)
        for scheme in ["s3"] {
            let bucket = try bucket(scheme)
            let count = 2
            let size = bytes.count / count
            var described: [StoredPart] = []
            func put(_ i: Int, _ body: [UInt8]) throws {
                let (client, key) = try XCTUnwrap(stores.object(at: "\(bucket)/p\(i)"))
                _ = try runBlocking {
                    try await client.put(
                        key: key, body: ByteBuffer(bytes: body), object: StoredObject(key: key, size: 0), createOnly: false)
                }
            }
            for i in 0..<count {
                try put(i, Array(bytes[(i * size)..<((i + 1) * size)]))
                described.append(try XCTUnwrap(parts.describe("\(bucket)/p\(i)")))
            }
            var changed = Array(bytes[((count - 1) * size)..<(count * size)])
            changed[0] ^= 1
            try put(count - 1, changed)
            // The parts alone: the changed one's copy fails; after a piece of bytes (a merged
            // archive's manifest frames): the changed part's bytes are sent with them, and its read fails.
            for head in [[], [JoinPiece.bytes([UInt8](repeating: 7, count: 1000))]] {
                let what = head.isEmpty ? "copied" : "sent"
                XCTAssertThrowsError(try parts.join(head + described.map(JoinPiece.stored), into: "\(bucket)/joined").publish(), what) {
                    error in
                    XCTAssertTrue(error is ShardError, "\(what): \(error)")
                    XCTAssertTrue("\(error)".contains("changed after merge checked it"), "\(what): \(error)")
                }
                XCTAssertEqual(try keys(in: bucket, startingWith: "joined"), [], "\(what): no output")
                let client = try XCTUnwrap(stores.client(for: XCTUnwrap(ObjectStoreURL(bucket + "/"))) as? S3Client)
                XCTAssertEqual(try runBlocking { try await client.uploadsInProgress(prefix: "") }.count, 0, "\(what): no upload left")
            }
        }
    }

    /// A Cloud Storage join of 40 parts between two pieces of bytes (a merged archive's manifest and
    /// end frames) uploads those as temporaries and composes a round into temporaries first; an abort
    /// (what any failure does) deletes them, and nothing appears under the output's name.
    func testAnAbortedComposeDeletesItsTemporaries() throws {
        let environment = try environmentOfServers()
        let stores = ObjectStoreOptions(environment: environment)
        let parts = BucketShardParts(options: stores)
        let bucket = try bucket("gs")
        var described: [StoredPart] = []
        for i in 0..<40 {
            let (client, key) = try XCTUnwrap(stores.object(at: "\(bucket)/p\(i)"))
            let body = SampleBytes.random(count: 1000, seed: UInt64(i))
            _ = try runBlocking {
                try await client.put(key: key, body: ByteBuffer(bytes: body), object: StoredObject(key: key, size: 0), createOnly: false)
            }
            described.append(try XCTUnwrap(parts.describe("\(bucket)/p\(i)")))
        }
        let join = try parts.join([.bytes([1, 2, 3])] + described.map(JoinPiece.stored) + [.bytes([4])], into: "\(bucket)/joined")
        XCTAssertEqual(try keys(in: bucket, startingWith: "joined").count, 4, "the two pieces, then the first round: 32 sources and 10")
        join.abort()
        XCTAssertEqual(try keys(in: bucket, startingWith: "joined"), [])
    }

    /// The S3 join's parts: every one but the last 5 MiB to 5 GiB, small parts gathered with the
    /// start of the next, parts over 5 GiB copied in equal ranges, every byte once and in order.
    func testThePartCopyPlanKeepsS3sPartSizes() {
        let mib: Int64 = 1 << 20, gib: Int64 = 1 << 30
        typealias Plan = S3PartCopyJoin
        XCTAssertEqual(
            Plan.plan(sizes: [12 * mib, 2 * mib]), [.copy(part: 0, range: 0..<12 * mib), .send([.init(part: 1, range: 0..<2 * mib)])])
        XCTAssertEqual(
            Plan.plan(sizes: [0, 3 * mib, 9 * mib, 1]),
            [
                .send([.init(part: 1, range: 0..<3 * mib), .init(part: 2, range: 0..<2 * mib)]),
                .copy(part: 2, range: 2 * mib..<9 * mib), .send([.init(part: 3, range: 0..<1)]),
            ])
        // A merged archive: the manifest's frames and the end frame are bytes of this process, sent
        // with the start of the next piece, or in parts of 5 to 10 MiB when larger.
        XCTAssertEqual(
            Plan.plan(sizes: [100, 12 * mib, 2 * mib, 30], sent: [0, 3]),
            [
                .send([.init(part: 0, range: 0..<100), .init(part: 1, range: 0..<5 * mib - 100)]),
                .copy(part: 1, range: 5 * mib - 100..<12 * mib),
                .send([.init(part: 2, range: 0..<2 * mib), .init(part: 3, range: 0..<30)]),
            ])
        let cases: [([Int64], Set<Int>)] = [
            ([11 * gib + 5, 1 * mib, 6 * mib, 4 * mib, 4 * mib, 5 * gib], []), ([1, 2, 3], []), ([5 * mib], []),
            ([4 * mib, 6 * mib + 3 * mib], []), ([23 * mib + 7, 1 * mib, 9 * mib, 1024], [0, 3]), ([3 * mib, 6 * mib, 1024], [0, 2]),
            ([12 * mib, 0, 1024], [0, 2]),
        ]
        for (sizes, sent) in cases {
            let steps = Plan.plan(sizes: sizes, sent: sent)
            var covered: [Plan.Segment] = []
            for (n, step) in steps.enumerated() {
                let segments: [Plan.Segment]
                switch step {
                case .copy(let part, let range):
                    XCTAssertFalse(sent.contains(part), "\(sizes): bytes of this process are sent, never copied")
                    segments = [.init(part: part, range: range)]
                case .send(let s): segments = s
                }
                let bytes = segments.reduce(0) { $0 + Int64($1.range.count) }
                XCTAssertLessThanOrEqual(bytes, 5 * gib, "\(sizes): part \(n)")
                if n < steps.count - 1 { XCTAssertGreaterThanOrEqual(bytes, 5 * mib, "\(sizes): part \(n)") }
                covered += segments
            }
            // The segments, in order, are every shard part's bytes from start to end.
            var expected: [Plan.Segment] = []
            for (i, size) in sizes.enumerated() where size > 0 { expected.append(.init(part: i, range: 0..<size)) }
            var joined: [Plan.Segment] = []
            for s in covered {
                if let last = joined.last, last.part == s.part, last.range.upperBound == s.range.lowerBound {
                    joined[joined.count - 1].range = last.range.lowerBound..<s.range.upperBound
                } else {
                    joined.append(s)
                }
            }
            XCTAssertEqual(joined, expected, "\(sizes)")
        }
    }

    /// Parts in another bucket than the output: no copy in the store, the bytes go through this
    /// process (`StreamedJoin`), pinned to the versions checked.
    func testPartsInAnotherBucketAreStreamedThrough() throws {
        let environment = try environmentOfServers()
        let stores = ObjectStoreOptions(environment: environment)
        let parts = BucketShardParts(options: stores)
        let bytes = SampleBytes.random(count: 9 << 20, seed: 7)
        for scheme in ["s3", "gs"] {
            let from = try bucket(scheme), to = try bucket(scheme)
            var described: [StoredPart] = []
            for (i, range) in [0..<(6 << 20), (6 << 20)..<(6 << 20), (6 << 20)..<bytes.count].enumerated() {
                let location = "\(from)/p\(i)"
                let (client, key) = try XCTUnwrap(stores.object(at: location))
                let body = Array(bytes[range])
                _ = try runBlocking {
                    try await client.put(
                        key: key, body: ByteBuffer(bytes: body), object: StoredObject(key: key, size: 0), createOnly: false)
                }
                described.append(try XCTUnwrap(parts.describe(location)))
            }
            let join = try parts.join(described.map(JoinPiece.stored), into: "\(to)/joined")
            XCTAssertNil(try download("\(to)/joined", to: try temporaryDirectory(self)), "\(scheme): nothing before publish")
            try join.publish()
            XCTAssertEqual(join.streamed, Int64(bytes.count), scheme)
            XCTAssertEqual(join.copiedInStore, 0, scheme)
            XCTAssertEqual(try download("\(to)/joined", to: try temporaryDirectory(self)), Data(bytes), scheme)
        }
    }
}
