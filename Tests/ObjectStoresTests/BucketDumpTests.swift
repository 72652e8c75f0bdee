import DumpKit
import Foundation
import ObjectStores
import TestSupport
import XCTest

/// Dumps read from and written to buckets (`dumpkit convert s3://b/k -o gs://b/k2`): the same bytes
/// as with local files, whatever the compression, the size (ranged parts, multipart uploads) and the
/// store; clear errors for what is not there; no object for a failed run.
final class BucketDumpTests: BothStoresTestCase {
    func testConvertReadsObjectsFromS3AndCloudStorageLikeLocalFiles() throws {
        let (s3, gcs, environment) = try servers()
        let s3Bucket = try s3.makeBucket()
        let gcsBucket = try gcs.makeBucket()
        let directory = try temporaryDirectory(self)
        // About 17 MB: three ranged parts of 8 MiB, several in flight, boundaries inside strings.
        let big = directory.appendingPathComponent("big.json")
        try dump(bytes: 17_500_000).write(to: big, atomically: true, encoding: .utf8)
        let small = directory.appendingPathComponent("small.json")
        try dump(bytes: 5_000).write(to: small, atomically: true, encoding: .utf8)
        let gzipped = directory.appendingPathComponent("big.json.gz")
        try Shell.runData("gzip", ["-c", big.path]).write(to: gzipped)
        _ = try s3.aws(["s3", "cp", big.path, "s3://\(s3Bucket)/backups/big.json"])
        _ = try s3.aws(["s3", "cp", gzipped.path, "s3://\(s3Bucket)/backups/big.json.gz"])
        _ = try s3.aws(["s3", "cp", small.path, "s3://\(s3Bucket)/small.json"])
        let upload = directory.appendingPathComponent("upload")
        try FileManager.default.createDirectory(at: upload, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: gzipped, to: upload.appendingPathComponent("big.json.gz"))
        _ = try run(["copy", upload.path, "gs://\(gcsBucket)/in"], environment)

        let reference = directory.appendingPathComponent("reference.json").path
        _ = try run(["convert", big.path, "-o", reference, "--canonical"], environment)
        for input in [
            "s3://\(s3Bucket)/backups/big.json", "s3://\(s3Bucket)/backups/big.json.gz", "gs://\(gcsBucket)/in/big.json.gz",
        ] {
            let out = directory.appendingPathComponent("out.json").path
            _ = try run(["convert", input, "-o", out, "--canonical"], environment)
            XCTAssertEqual(try contents(out), try contents(reference), input)
        }
        // A small object, and a command that reads its input twice (validate with rules spools it).
        let rules = directory.appendingPathComponent("rules.json")
        try #"{"rules":{".read":true,"v1":{"todolist":{"$id":{".validate":"newData.hasChildren(['title'])"}}}}}"#.write(
            to: rules, atomically: true, encoding: .utf8)
        let local = try run(["validate", small.path, "--rules", rules.path, "--json"], environment)
        let remote = try run(["validate", "s3://\(s3Bucket)/small.json", "--rules", rules.path, "--json"], environment)
        XCTAssertEqual(
            remote.stdout.replacingOccurrences(of: "s3://\(s3Bucket)/small.json", with: small.path), local.stdout)
    }

    func testOutputsGoToBucketsWholeOrNotAtAll() throws {
        let (s3, gcs, environment) = try servers()
        let bucket = try s3.makeBucket()
        let gcsBucket = try gcs.makeBucket()
        let directory = try temporaryDirectory(self)
        let input = directory.appendingPathComponent("in.json")
        // About 10 MB: a multipart upload (over 8 MiB).
        try dump(bytes: 10_000_000).write(to: input, atomically: true, encoding: .utf8)
        let reference = directory.appendingPathComponent("reference.json").path
        _ = try run(["convert", input.path, "-o", reference, "--canonical"], environment)

        _ = try run(["convert", input.path, "-o", "s3://\(bucket)/v2/out.json", "--canonical"], environment)
        let down = directory.appendingPathComponent("down.json").path
        _ = try s3.aws(["s3", "cp", "s3://\(bucket)/v2/out.json", down])
        XCTAssertEqual(try contents(down), try contents(reference))
        let head = try s3.aws(["s3api", "head-object", "--bucket", bucket, "--key", "v2/out.json"])
        XCTAssertTrue(head.contains("application/json"), head)
        XCTAssertTrue(head.contains("-"), "a multipart ETag: \(head)")

        // Compressed by the name, to Cloud Storage, and read back from there.
        _ = try run(["convert", input.path, "-o", "gs://\(gcsBucket)/v2/out.json.zst", "--canonical"], environment)
        let back = directory.appendingPathComponent("back.json").path
        _ = try run(["convert", "gs://\(gcsBucket)/v2/out.json.zst", "-o", back, "--canonical"], environment)
        XCTAssertEqual(try contents(back), try contents(reference))

        // A run that fails leaves no object, and the one there stays as it was.
        let broken = directory.appendingPathComponent("broken.json")
        try #"{"a":1,"b":[1,2"#.write(to: broken, atomically: true, encoding: .utf8)
        let failed = try run(["convert", broken.path, "-o", "s3://\(bucket)/v2/out.json"], environment, expect: 2)
        XCTAssertTrue(failed.stderr.contains("broken.json"), failed.stderr)
        _ = try s3.aws(["s3", "cp", "s3://\(bucket)/v2/out.json", down])
        XCTAssertEqual(try contents(down), try contents(reference))
        _ = try run(["convert", broken.path, "-o", "s3://\(bucket)/v2/new.json"], environment, expect: 2)
        let listing = try s3.aws(["s3", "ls", "--recursive", "s3://\(bucket)/"])
        XCTAssertFalse(listing.contains("new.json"), listing)
        let uploads = try s3.aws(["s3api", "list-multipart-uploads", "--bucket", bucket])
        XCTAssertFalse(uploads.contains("UploadId"), uploads)

        // An archive written straight to the bucket (its manifest is written last, at the start).
        let folder = directory.appendingPathComponent("bucket")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("v1"), withIntermediateDirectories: true)
        try Data(SampleBytes.random(count: 300_000, seed: 3)).write(to: folder.appendingPathComponent("v1/a.png"))
        try Data("{}".utf8).write(to: folder.appendingPathComponent("b.json"))
        _ = try run(["archive", folder.path, "-o", "s3://\(bucket)/backups/b.tar.zst"], environment)
        let archive = directory.appendingPathComponent("b.tar.zst").path
        _ = try s3.aws(["s3", "cp", "s3://\(bucket)/backups/b.tar.zst", archive])
        let entries = try Shell.run("bsdtar", ["-tf", archive])
        XCTAssertTrue(entries.contains("v1/a.png") && entries.contains("b.json"), entries)
        _ = try run(["verify", archive], environment)
        // Read back from the bucket: list, verify and restore take the object as they take a file.
        let listed = try run(["list", "s3://\(bucket)/backups/b.tar.zst"], environment)
        XCTAssertTrue(listed.stdout.contains("v1/a.png"), listed.stdout)
        _ = try run(["verify", "s3://\(bucket)/backups/b.tar.zst"], environment)
        let restored = directory.appendingPathComponent("restored").path
        _ = try run(["restore", "s3://\(bucket)/backups/b.tar.zst", restored], environment)
        XCTAssertEqual(try contents(restored + "/v1/a.png"), SampleBytes.random(count: 300_000, seed: 3))
        let none = try run(["verify", "s3://\(bucket)/backups/none.tar.zst"], environment, expect: 2)
        XCTAssertTrue(none.stderr.contains("no such object"), none.stderr)

        let whole = try run(["convert", input.path, "-o", "s3://\(bucket)"], environment, expect: 2)
        XCTAssertTrue(whole.stderr.contains("names a bucket, not an object"), whole.stderr)
    }

    /// A dump in a bucket is indexed and sharded where it lies: the index pass and each shard read
    /// their ranges with ranged GETs, and the merge gives the unsharded bytes. A compressed object is
    /// refused, as a compressed file is.
    func testShardsReadTheirRangesOfADumpInABucket() throws {
        let (s3, gcs, environment) = try servers()
        let bucket = try s3.makeBucket()
        let gcsBucket = try gcs.makeBucket()
        let directory = try temporaryDirectory(self)
        // About 12 MB: two blocks of 8 MiB, shard ranges that start inside them.
        let input = directory.appendingPathComponent("dump.json")
        try dump(bytes: 12_000_000).write(to: input, atomically: true, encoding: .utf8)
        let reference = directory.appendingPathComponent("reference.json").path
        _ = try run(["convert", input.path, "-o", reference], environment)
        _ = try s3.aws(["s3", "cp", input.path, "s3://\(bucket)/db/dump.json"])
        let upload = directory.appendingPathComponent("upload")
        try FileManager.default.createDirectory(at: upload, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: input, to: upload.appendingPathComponent("dump.json"))
        _ = try run(["copy", upload.path, "gs://\(gcsBucket)/db"], environment)

        for source in ["s3://\(bucket)/db/dump.json", "gs://\(gcsBucket)/db/dump.json"] {
            let index = directory.appendingPathComponent("dump.dkindex").path
            _ = try run(["index", source, "-o", index, "--records", "/v1/todolist/{id}", "-q"], environment)
            let out = directory.appendingPathComponent("out.json").path
            for shard in 0..<3 {
                _ = try run(["convert", source, "-o", out, "--index", index, "--shard", "\(shard)/3", "-q"], environment)
            }
            _ = try run(["merge", out, "-q"], environment)
            XCTAssertEqual(try contents(out), try contents(reference), source)
            try FileManager.default.removeItem(atPath: out)
        }

        let gzipped = directory.appendingPathComponent("dump.json.gz")
        try Shell.runData("gzip", ["-c", input.path]).write(to: gzipped)
        _ = try s3.aws(["s3", "cp", gzipped.path, "s3://\(bucket)/db/dump.json.gz"])
        let refused = try run(
            ["index", "s3://\(bucket)/db/dump.json.gz", "-o", directory.appendingPathComponent("gz.dkindex").path], environment, expect: 2)
        XCTAssertTrue(refused.stderr.contains("gzip-compressed"), refused.stderr)
    }

    func testMissingObjectsAndBucketOnlyURLsAreClearErrors() throws {
        let (s3, gcs, environment) = try servers()
        let bucket = try s3.makeBucket()
        let gcsBucket = try gcs.makeBucket()
        let out = try temporaryDirectory(self).appendingPathComponent("out.json").path
        let missing = try run(["convert", "s3://\(bucket)/nothing.json", "-o", out], environment, expect: 2)
        XCTAssertTrue(missing.stderr.contains("s3://\(bucket)/nothing.json (endpoint"), "named as written: \(missing.stderr)")
        XCTAssertTrue(missing.stderr.contains("no such object"), missing.stderr)
        XCTAssertTrue(missing.stderr.contains(s3.endpoint), missing.stderr)
        let gone = try run(["convert", "gs://\(gcsBucket)/nothing.json", "-o", out], environment, expect: 2)
        XCTAssertTrue(gone.stderr.contains("no such object"), gone.stderr)
        XCTAssertTrue(gone.stderr.contains("gs://\(gcsBucket)/nothing.json (endpoint"), gone.stderr)
        let whole = try run(["convert", "s3://\(bucket)", "-o", out], environment, expect: 2)
        XCTAssertTrue(whole.stderr.contains("names a bucket, not an object"), whole.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))
        // Wrong credentials: the service's refusal, named.
        var wrong = environment
        wrong["AWS_SECRET_ACCESS_KEY"] = "not-the-secret"
        let refused = try run(["convert", "s3://\(bucket)/x.json", "-o", out], wrong, expect: 2)
        XCTAssertTrue(refused.stderr.contains("SignatureDoesNotMatch"), refused.stderr)
    }
}
