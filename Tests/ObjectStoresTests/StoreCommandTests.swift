import DumpKit
import Foundation
import ObjectStores
import TestSupport
import XCTest

/// The `dumpkit` commands with bucket URLs, against SeaweedFS (S3) and fake-gcs-server (GCS) at once.
final class StoreCommandTests: BothStoresTestCase {
    func dumpWithImages(_ count: Int, seed: Int) -> String {
        let records = (0..<count).map { i -> String in
            let bytes: [UInt8] =
                [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
                + (0..<1500).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ i &* 7 &+ seed &* 101) }
            return "\"-K\(i)\": {\"title\": \"t\(i)\", \"image\": \"data:image/png;base64,\(Data(bytes).base64EncodedString())\"}"
        }
        return "{\"v1\": {\"todolist\": {" + records.joined(separator: ", ") + "}}}"
    }

    func testExtractToS3ThenCheckAndInlineFromIt() throws {
        let (s3, _, environment) = try servers()
        let bucket = try s3.makeBucket()
        let directory = try temporaryDirectory(self)
        let dump = directory.appendingPathComponent("dump.json")
        try dumpWithImages(30, seed: 1).write(to: dump, atomically: true, encoding: .utf8)
        let store = "s3://\(bucket)/images"
        let clean = directory.appendingPathComponent("clean.json").path
        _ = try run(
            ["extract-blobs", dump.path, "-o", clean, "--blobs", store, "--ref-style", "salada", "--bucket", "my-app.appspot.com"],
            environment)
        let listing = try s3.aws(["s3", "ls", "--recursive", "s3://\(bucket)/images/"])
        XCTAssertEqual(listing.split(separator: "\n").count, 30, listing)

        let check = try run(["check-blobs", clean, "--blobs", store, "--ref-style", "salada"], environment)
        XCTAssertFalse(check.stdout.contains("blobs:"), check.stdout)
        let validate = try run(["validate", clean, "--blobs", store, "--ref-style", "salada"], environment)
        XCTAssertFalse(validate.stdout.contains("blobs:"), validate.stdout)

        let restored = directory.appendingPathComponent("restored.json").path
        _ = try run(["inline-blobs", clean, "-o", restored, "--blobs", store, "--ref-style", "salada"], environment)
        let original = try JSONSerialization.jsonObject(with: Data(contentsOf: dump))
        let back = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: restored)))
        XCTAssertEqual(original as? NSDictionary, back as? NSDictionary)

        // A re-run finds every object there: the same output, nothing written.
        let again = directory.appendingPathComponent("again.json").path
        _ = try run(
            ["extract-blobs", dump.path, "-o", again, "--blobs", store, "--ref-style", "salada", "--bucket", "my-app.appspot.com"],
            environment)
        XCTAssertEqual(try contents(again), try contents(clean))

        // Other content under the same names is refused, the bucket left as it was.
        let other = directory.appendingPathComponent("other.json")
        try dumpWithImages(3, seed: 2).write(to: other, atomically: true, encoding: .utf8)
        let refused = try run(
            ["extract-blobs", other.path, "-o", directory.appendingPathComponent("o.json").path, "--blobs", store], environment, expect: 1)
        XCTAssertTrue(refused.stderr.contains("v1/todolist/-K0/image.png"), refused.stderr)
        let checkAfter = try run(["check-blobs", clean, "--blobs", store, "--ref-style", "salada"], environment)
        XCTAssertFalse(checkAfter.stdout.contains("blobs:"), checkAfter.stdout)
    }

    func testMetadataSurvivesFolderToGCSToS3ToFolder() throws {
        let (s3, gcs, environment) = try servers()
        let directory = try temporaryDirectory(self)
        let folder = directory.appendingPathComponent("blobs").path
        let source = try DirectoryBlobStore(directory: folder, writable: true)
        var expected: [String: (bytes: [UInt8], metadata: BlobMetadata)] = [:]
        for i in 0..<12 {
            let bytes = SampleBytes.random(count: i == 0 ? (9 << 20) + 77 : 1000 + i * 100, seed: UInt64(100 + i))
            var m = metadata("v1/todolist/-K\(i)/image.png", bytes, token: "tok-\(i)-ABC")
            m.cacheControl = "public, max-age=\(i)"
            m.contentDisposition = "inline"
            m.contentLanguage = "en"
            m.customMetadata["origin"] = "test"
            _ = try bytes.withUnsafeBytes { try source.put($0, metadata: m, replacing: false) }
            expected[m.name] = (bytes, m)
        }
        source.close()
        let gsURL = "gs://\(try gcs.makeBucket())/copied"
        let s3URL = "s3://\(try s3.makeBucket())/copied"
        let back = directory.appendingPathComponent("back").path

        let first = try run(["copy", folder, gsURL, "--json"], environment)
        let summary = try JSONSerialization.jsonObject(with: Data(first.stdout.utf8)) as! [String: Any]
        XCTAssertEqual((summary["copied"] as? [String: Any])?["count"] as? Int, 12, first.stdout)
        _ = try run(["copy", gsURL, s3URL, "-q"], environment)
        _ = try run(["copy", s3URL, back, "-q"], environment)

        let result = try DirectoryBlobStore(directory: back, writable: false)
        var names: [String] = []
        try result.list { names.append($0) }
        XCTAssertEqual(names.sorted(), expected.keys.sorted())
        for (name, want) in expected {
            XCTAssertEqual(try result.get(name), want.bytes, name)
            let got = try XCTUnwrap(try result.metadata(name))
            XCTAssertEqual(
                got.customMetadata, want.metadata.customMetadata, "\(name): firebaseStorageDownloadTokens keeps its case through S3")
            XCTAssertEqual(got.contentType, "image/png")
            XCTAssertEqual(got.cacheControl, want.metadata.cacheControl)
            XCTAssertEqual(got.contentDisposition, "inline")
            XCTAssertEqual(got.contentLanguage, "en")
            XCTAssertEqual(got.sha256, want.metadata.sha256)
            XCTAssertEqual(got.md5, want.metadata.md5)
        }

        // Second runs find everything identical and write nothing.
        for (from, to) in [(folder, gsURL), (gsURL, s3URL), (s3URL, back)] {
            let again = try run(["copy", from, to, "--json"], environment)
            let s = try JSONSerialization.jsonObject(with: Data(again.stdout.utf8)) as! [String: Any]
            XCTAssertEqual((s["copied"] as? [String: Any])?["count"] as? Int, 0, again.stdout)
            XCTAssertEqual((s["skipped"] as? [String: Any])?["count"] as? Int, 12, again.stdout)
        }

        // A changed token is brought over as a metadata update, the bytes untouched.
        let gsClient = try ObjectStoreOptions(environment: environment).client(for: try XCTUnwrap(ObjectStoreURL(gsURL)))
        let store = BucketBlobStore(client: gsClient)
        var changed = expected["v1/todolist/-K3/image.png"]!.metadata
        changed.customMetadata["firebaseStorageDownloadTokens"] = "rotated"
        _ = try expected["v1/todolist/-K3/image.png"]!.bytes.withUnsafeBytes { try store.put($0, metadata: changed, replacing: false) }
        let update = try run(["copy", gsURL, s3URL, "--json"], environment)
        let u = try JSONSerialization.jsonObject(with: Data(update.stdout.utf8)) as! [String: Any]
        XCTAssertEqual(u["metadataUpdated"] as? Int, 1, update.stdout)
        let s3Store = try ObjectStoreOptions(environment: environment).openBlobStore(s3URL, writable: false)
        XCTAssertEqual(try s3Store.metadata("v1/todolist/-K3/image.png")?.customMetadata["firebaseStorageDownloadTokens"], "rotated")
    }

    /// A plain folder (no sidecars) with an object of several parts: its hashes are computed as it is
    /// read and it goes up a part at a time, to both stores, with the same bytes and hashes.
    func testLargeObjectsFromAPlainFolderGoUpInParts() throws {
        let (s3, gcs, environment) = try servers()
        let directory = try temporaryDirectory(self)
        let folder = directory.appendingPathComponent("plain")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("videos"), withIntermediateDirectories: true)
        let big = SampleBytes.random(count: (17 << 20) + 5, seed: 7)
        try Data(big).write(to: folder.appendingPathComponent("videos/big.bin"))
        try Data("small".utf8).write(to: folder.appendingPathComponent("a.txt"))
        let digest = big.withUnsafeBytes { ContentDigest($0) }
        for url in ["s3://\(try s3.makeBucket())/up", "gs://\(try gcs.makeBucket())/up"] {
            _ = try run(["copy", folder.path, url, "-q"], environment)
            let store = try ObjectStoreOptions(environment: environment).openBlobStore(url, writable: false)
            XCTAssertEqual(try store.get("videos/big.bin"), big, url)
            XCTAssertEqual(try store.metadata("videos/big.bin")?.sha256, digest.sha256, url)
            XCTAssertEqual(try store.get("a.txt"), Array("small".utf8), url)
        }
    }

    /// An object larger than the copy's memory budget comes down from a bucket into a folder a ranged
    /// read at a time (it was held whole before): the same bytes and hashes, in a fraction of its size.
    func testALargeObjectComesDownIntoAFolderAPartAtATime() throws {
        let (s3, _, environment) = try servers()
        let directory = try temporaryDirectory(self)
        let folder = directory.appendingPathComponent("plain")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let size = 240 << 20
        let big = SampleBytes.random(count: size + 3, seed: 9)
        try Data(big).write(to: folder.appendingPathComponent("big.bin"))
        let digest = big.withUnsafeBytes { ContentDigest($0) }
        let url = "s3://\(try s3.makeBucket())/up"
        _ = try run(["copy", folder.path, url, "-q"], environment)
        let down = directory.appendingPathComponent("down").path
        let (r, peak) = try CLI.runMeasuringMemory(["copy", url, down, "-q"], environment: environment)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertLessThan(peak, 120 << 20, "\(peak >> 20) MiB to copy an object of \(size >> 20) MiB")
        XCTAssertTrue(try Data(contentsOf: URL(fileURLWithPath: down + "/big.bin")) == Data(big), "the copied bytes differ")
        let store = try DirectoryBlobStore(directory: down, writable: false)
        XCTAssertEqual(try store.metadata("big.bin")?.sha256, digest.sha256)
        XCTAssertEqual(try store.metadata("big.bin")?.md5, digest.md5)
    }

    /// An object larger than 8 MiB is restored from an archive into a bucket part by part as it is
    /// read (it was held whole before), checked against the manifest before it appears: a damaged one
    /// is reported and nothing of it is left in the bucket.
    func testALargeObjectIsRestoredIntoABucketAPartAtATimeAndOnlyWhenItsHashesMatch() throws {
        let (s3, gcs, environment) = try servers()
        let directory = try temporaryDirectory(self)
        let folder = directory.appendingPathComponent("plain")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let size = 240 << 20
        let big = SampleBytes.random(count: size + 5, seed: 11)
        try Data(big).write(to: folder.appendingPathComponent("big.bin"))
        try Data("small".utf8).write(to: folder.appendingPathComponent("a.txt"))
        let digest = big.withUnsafeBytes { ContentDigest($0) }
        let archive = directory.appendingPathComponent("bucket.tar").path
        _ = try run(["archive", folder.path, "-o", archive, "-q"], environment)

        let url = "s3://\(try s3.makeBucket())/restored"
        let (r, peak) = try CLI.runMeasuringMemory(["restore", archive, url, "-q"], environment: environment)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertLessThan(peak, 150 << 20, "\(peak >> 20) MiB to restore an object of \(size >> 20) MiB")
        let store = try ObjectStoreOptions(environment: environment).openBlobStore(url, writable: false)
        XCTAssertTrue(try store.get("big.bin") == big, "the restored bytes differ")
        XCTAssertEqual(try store.metadata("big.bin")?.sha256, digest.sha256)
        XCTAssertEqual(try store.get("a.txt"), Array("small".utf8))
        // Again: the same content is there, nothing is sent.
        let again = try run(["restore", archive, url, "--json"], environment)
        let summary = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(again.stdout.utf8)) as? [String: Any], again.stdout)
        XCTAssertEqual(summary["unchanged"] as? Int, 2, again.stdout)

        // The manifest's SHA-256 of big.bin changed: not restored, into either store, and nothing left.
        var tar = try Data(contentsOf: URL(fileURLWithPath: archive))
        let hash = try XCTUnwrap(tar.range(of: Data(digest.sha256.utf8)))
        tar[hash.lowerBound] = tar[hash.lowerBound] == UInt8(ascii: "0") ? UInt8(ascii: "1") : UInt8(ascii: "0")
        let damaged = directory.appendingPathComponent("damaged.tar").path
        try tar.write(to: URL(fileURLWithPath: damaged))
        for target in ["s3://\(try s3.makeBucket())/bad", "gs://\(try gcs.makeBucket())/bad"] {
            let refused = try run(["restore", damaged, target], environment, expect: 1)
            XCTAssertTrue(refused.stderr.contains("big.bin: not restored: its SHA-256 is \(digest.sha256)"), refused.stderr)
            let bad = try ObjectStoreOptions(environment: environment).openBlobStore(target, writable: false)
            XCTAssertFalse(try bad.exists("big.bin"), target)
            XCTAssertTrue(try bad.exists("a.txt"), target)
        }
        // A manifest that gives the entry another size: refused before any of its bytes are read.
        tar = try Data(contentsOf: URL(fileURLWithPath: archive))
        let sizeField = try XCTUnwrap(tar.range(of: Data("\"size\": \(size + 5)".utf8)))
        tar[sizeField.upperBound - 1] -= 1
        try tar.write(to: URL(fileURLWithPath: damaged))
        let resized = try run(["restore", damaged, "s3://\(try s3.makeBucket())/resized"], environment, expect: 1)
        XCTAssertTrue(
            resized.stderr.contains("big.bin: not restored: size \(size + 5) bytes, the manifest says \(size + 4)"), resized.stderr)
        let aws = try RequiredTool.path("aws", package: "awscli")
        let uploads = try Shell.execute(
            URL(fileURLWithPath: aws),
            ["--endpoint-url", s3.endpoint, "s3api", "list-multipart-uploads", "--bucket", String(url.dropFirst(5).prefix { $0 != "/" })],
            environment: environment)
        XCTAssertFalse(String(decoding: uploads.stdout, as: UTF8.self).contains("UploadId"), "an upload was left behind")
    }

    func testCopyFiltersDryRunsAndNeverReplacesOrEscapes() throws {
        let (s3, _, environment) = try servers()
        let bucket = try s3.makeBucket()
        let url = try XCTUnwrap(ObjectStoreURL("s3://\(bucket)/src"))
        let client = try ObjectStoreOptions(environment: environment).client(for: url)
        let store = BucketBlobStore(client: client)
        for name in ["a/1.png", "a/2.png", "b/3.png", "b/4.jpg"] {
            let bytes = SampleBytes.random(count: 500, seed: UInt64(name.hashValue & 0xFFFF))
            _ = try bytes.withUnsafeBytes { try store.put($0, metadata: metadata(name, bytes), replacing: false) }
        }
        // Keys a directory store refuses (a drive letter, its own control folder), written with the aws CLI;
        // SeaweedFS itself refuses '..' segments and segments over 255 bytes.
        let directory = try temporaryDirectory(self)
        let evil = directory.appendingPathComponent("evil")
        try Data("x".utf8).write(to: evil)
        let refusedNames = [".dumpkit/x.png", "c:/x.png"]
        for name in refusedNames { try s3.aws(["s3api", "put-object", "--bucket", bucket, "--key", "src/" + name, "--body", evil.path]) }
        let destination = directory.appendingPathComponent("dest").path

        let dry = try run(
            ["copy", "s3://\(bucket)/src", destination, "--include", "b/*", "--exclude", "*.jpg", "--dry-run", "--json"], environment)
        let d = try JSONSerialization.jsonObject(with: Data(dry.stdout.utf8)) as! [String: Any]
        XCTAssertEqual(d["listed"] as? Int, 1, dry.stdout)
        XCTAssertEqual((d["copied"] as? [String: Any])?["count"] as? Int, 1)
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination + "/b/3.png"))

        try FileManager.default.createDirectory(atPath: destination + "/a", withIntermediateDirectories: true)
        let other = SampleBytes.random(count: 10, seed: 99)
        let destStore = try DirectoryBlobStore(directory: destination, writable: true)
        _ = try other.withUnsafeBytes { try destStore.put($0, metadata: metadata("a/1.png", other), replacing: false) }
        destStore.close()

        let r = try run(["copy", "s3://\(bucket)/src", destination, "--jobs", "3", "--json"], environment, expect: 1)
        let s = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any]
        XCTAssertEqual((s["copied"] as? [String: Any])?["count"] as? Int, 3, r.stdout)
        XCTAssertEqual((s["conflicts"] as? [String: Any])?["names"] as? [String], ["a/1.png"])
        XCTAssertEqual((s["refused"] as? [String: Any])?["names"] as? [String], refusedNames)
        XCTAssertTrue(r.stderr.contains("\"a/1.png\"") && r.stderr.contains("\"c:/x.png\""), r.stderr)
        XCTAssertEqual(try contents(destination + "/a/1.png"), other, "the destination's object is never replaced")
        XCTAssertEqual(filesBelow(destination).filter { !$0.hasPrefix(".dumpkit/") }, ["a/1.png", "a/2.png", "b/3.png", "b/4.jpg"])
    }

    /// Plain files without metadata have no content type; SeaweedFS guesses one from the name. A
    /// second copy must still find them identical (not update their metadata every time).
    func testObjectsWithoutAContentTypeAreSkippedOnTheSecondRun() throws {
        let (s3, _, environment) = try servers()
        let directory = try temporaryDirectory(self)
        let folder = directory.appendingPathComponent("plain")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("o"), withIntermediateDirectories: true)
        for i in 0..<5 { try Data(SampleBytes.random(count: 3000, seed: UInt64(i))).write(to: folder.appendingPathComponent("o/\(i).png")) }
        let url = "s3://\(try s3.makeBucket())/plain"
        for (run, copied) in [(1, 5), (2, 0)] {
            let r = try self.run(["copy", folder.path, url, "--json"], environment)
            let s = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any]
            XCTAssertEqual((s["copied"] as? [String: Any])?["count"] as? Int, copied, "run \(run): \(r.stdout)")
            XCTAssertEqual(s["metadataUpdated"] as? Int, 0, "run \(run): \(r.stdout)")
        }
    }

    /// An archive of a blob-store folder restored into a bucket: every object with the manifest's
    /// metadata, a second restore writes nothing, and `--overwrite never` keeps other content.
    func testRestoreIntoABucketKeepsTheManifestsMetadata() throws {
        let (_, gcs, environment) = try servers()
        let directory = try temporaryDirectory(self)
        let folder = directory.appendingPathComponent("store").path
        let source = try DirectoryBlobStore(directory: folder, writable: true)
        var expected: [String: ([UInt8], BlobMetadata)] = [:]
        for i in 0..<6 {
            let bytes = SampleBytes.random(count: 2000 + i, seed: UInt64(500 + i))
            var m = metadata("v1/x/-K\(i)/image.png", bytes, token: "restore-\(i)")
            m.cacheControl = "private"
            _ = try bytes.withUnsafeBytes { try source.put($0, metadata: m, replacing: false) }
            expected[m.name] = (bytes, m)
        }
        source.close()
        let archive = directory.appendingPathComponent("store.tar.zst").path
        _ = try run(["archive", folder, "-o", archive], environment)
        let url = "gs://\(try gcs.makeBucket())/restored"
        let first = try run(["restore", archive, url, "--verify"], environment)
        XCTAssertTrue(first.stderr.contains("6 written"), first.stderr)
        let store = try ObjectStoreOptions(environment: environment).openBlobStore(url, writable: false)
        for (name, (bytes, m)) in expected {
            XCTAssertEqual(try store.get(name), bytes, name)
            let got = try XCTUnwrap(try store.metadata(name))
            XCTAssertEqual(got.customMetadata, m.customMetadata)
            XCTAssertEqual(got.cacheControl, "private")
            XCTAssertEqual(got.sha256, m.sha256)
        }
        let second = try run(["restore", archive, url], environment)
        XCTAssertTrue(second.stderr.contains("0 written") && second.stderr.contains("6 unchanged"), second.stderr)

        let other = SampleBytes.random(count: 10, seed: 1)
        let writable = try ObjectStoreOptions(environment: environment).openBlobStore(url, writable: true)
        _ = try other.withUnsafeBytes { try writable.put($0, metadata: metadata("v1/x/-K0/image.png", other), replacing: true) }
        let kept = try run(["restore", archive, url, "--overwrite", "never"], environment)
        XCTAssertTrue(kept.stderr.contains("1 kept"), kept.stderr)
        XCTAssertEqual(try store.get("v1/x/-K0/image.png"), other)
        let replaced = try run(["restore", archive, url], environment)
        XCTAssertTrue(replaced.stderr.contains("1 written"), replaced.stderr)
        XCTAssertEqual(try store.get("v1/x/-K0/image.png"), expected["v1/x/-K0/image.png"]!.0)
    }

    /// A migration plan's `extract-blobs` step writing into a bucket (`migrate --blobs s3://...`), the
    /// sample ToDo app as Scripts/demo.sh migrates it: the same output and the same objects, metadata
    /// and tokens as a migration into a folder.
    func testMigrateExtractsIntoABucketAsIntoAFolder() throws {
        let (s3, _, environment) = try servers()
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let directory = try temporaryDirectory(self)
        func migrate(_ store: String, _ out: String) throws {
            let r = try run(
                [
                    "migrate", root.appendingPathComponent("samples/todolist/v1.json").path, "-o", out,
                    "--plan", root.appendingPathComponent("schemas/todolist/plan.yaml").path,
                    "--plan", root.appendingPathComponent("schemas/todolist/images.yaml").path,
                    "--on-error", "keep", "--blobs", store, "--bucket", "salada-todo.appspot.com",
                ], environment)
            XCTAssertTrue(r.stderr.contains("extract-blobs"), r.stderr)
        }
        let bucket = "s3://\(try s3.makeBucket())/"
        let folder = directory.appendingPathComponent("folder").path
        try migrate(bucket, directory.appendingPathComponent("bucket.json").path)
        try migrate(folder, directory.appendingPathComponent("folder.json").path)
        XCTAssertEqual(
            try contents(directory.appendingPathComponent("bucket.json").path),
            try contents(directory.appendingPathComponent("folder.json").path))

        let options = ObjectStoreOptions(environment: environment)
        let inBucket = try options.openBlobStore(bucket, writable: false), inFolder = try options.openBlobStore(folder, writable: false)
        var names: [String] = []
        try inFolder.list { names.append($0) }
        XCTAssertFalse(names.isEmpty)
        var bucketNames: [String] = []
        try inBucket.list { bucketNames.append($0) }
        XCTAssertEqual(bucketNames.sorted(), names.sorted())
        for name in names {
            XCTAssertEqual(try inBucket.metadata(name)?.withUpdated(nil), try inFolder.metadata(name)?.withUpdated(nil), name)
        }
    }

    /// rclone, an independent client, against both servers: it reads what DumpKit wrote (bytes and, on
    /// S3, the metadata) and writes what DumpKit reads. rclone 1.60's GCS backend keeps no custom
    /// metadata (the peers' complaint), so on GCS only bytes and types are compared.
    func testRcloneReadsWhatDumpKitWritesAndWritesWhatItReads() throws {
        let (s3, gcs, environment) = try servers()
        let rclone = try RequiredTool.path("rclone", package: "rclone")
        var rcloneEnvironment = environment
        rcloneEnvironment["AWS_CA_BUNDLE"] = nil
        rcloneEnvironment["RCLONE_CONFIG"] = "/dev/null"
        for (key, value) in [
            "W_TYPE": "s3", "W_PROVIDER": "Other", "W_ACCESS_KEY_ID": SeaweedServer.accessKey,
            "W_SECRET_ACCESS_KEY": SeaweedServer.secretKey,
            "W_ENDPOINT": s3.endpoint, "W_REGION": "us-east-1", "G_TYPE": "google cloud storage", "G_ANONYMOUS": "true",
            "G_ENDPOINT": gcs.endpoint + "/storage/v1/",
        ] {
            rcloneEnvironment["RCLONE_CONFIG_" + key] = value
        }
        func rcloneRun(_ arguments: [String]) throws -> Data {
            let r = try Shell.execute(URL(fileURLWithPath: rclone), arguments, environment: rcloneEnvironment)
            guard r.status == 0 else {
                throw Shell.Failure(description: "rclone \(arguments): \(String(decoding: r.stderr, as: UTF8.self))")
            }
            return r.stdout
        }
        let directory = try temporaryDirectory(self)
        let upload = directory.appendingPathComponent("theirs.jpg")
        let theirs = SampleBytes.random(count: 5000, seed: 77)
        try Data(theirs).write(to: upload)
        let options = ObjectStoreOptions(environment: environment)

        for (remote, bucket, keepsMetadata) in [("w", try s3.makeBucket(), true), ("g", try gcs.makeBucket(), false)] {
            let url = "\(remote == "w" ? "s3" : "gs")://\(bucket)/r"
            let store = try options.openBlobStore(url, writable: true)
            let ours = SampleBytes.random(count: 4000, seed: 78)
            let m = metadata("ours.png", ours, token: "dk-token")
            _ = try ours.withUnsafeBytes { try store.put($0, metadata: m, replacing: false) }
            XCTAssertEqual(Array(try rcloneRun(["cat", "\(remote):\(bucket)/r/ours.png"])), ours, remote)
            let listed = try JSONSerialization.jsonObject(with: rcloneRun(["lsjson", "-M", "\(remote):\(bucket)/r"])) as! [[String: Any]]
            XCTAssertEqual(listed.first?["MimeType"] as? String, "image/png", remote)
            if keepsMetadata {
                XCTAssertEqual((listed.first?["Metadata"] as? [String: String])?["firebasestoragedownloadtokens"], "dk-token")
            }

            _ = try rcloneRun([
                "copyto", "-M", "--metadata-set", "firebaseStorageDownloadTokens=rc-token", upload.path, "\(remote):\(bucket)/r/theirs.jpg",
            ])
            XCTAssertEqual(try store.get("theirs.jpg"), theirs, remote)
            let read = try XCTUnwrap(try store.metadata("theirs.jpg"))
            XCTAssertEqual(read.sha256, theirs.withUnsafeBytes { ContentDigest($0) }.sha256)
            if keepsMetadata {
                XCTAssertEqual(read.customMetadata["firebaseStorageDownloadTokens"], "rc-token", "the case restored")
            }
        }
    }
}
