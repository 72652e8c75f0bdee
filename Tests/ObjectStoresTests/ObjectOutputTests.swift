import CloudHTTP
import DumpKit
import Foundation
import NIOCore
import TestSupport
import XCTest

@testable import ObjectStores

/// Outputs sent to buckets while they are written (`ObjectOutput`: S3 multipart parts in flight, a
/// Cloud Storage resumable session chunk by chunk): the same bytes at every size around the part
/// boundaries, nothing under the name before `publish()`, nothing at all after an abort, and no
/// local disk needed (`dumpkit convert ... -o s3://...` with `TMPDIR` pointing nowhere).
final class ObjectOutputTests: BothStoresTestCase {
    static let part = 8 << 20

    /// An S3 client and a Cloud Storage client, each on a bucket of its own.
    func clients() throws -> [any ObjectStoreClient] {
        let (s3, gcs, environment) = try servers()
        let s3URL = try XCTUnwrap(ObjectStoreURL("s3://\(try s3.makeBucket())/"))
        let gcsURL = try XCTUnwrap(ObjectStoreURL("gs://\(try gcs.makeBucket())/"))
        let configuration = AWSConfiguration(
            credentials: AWSCredentials(accessKeyID: SeaweedServer.accessKey, secretAccessKey: SeaweedServer.secretKey),
            region: "us-east-1", endpoint: s3.endpoint)
        return [
            S3Client(url: s3URL, configuration: configuration),
            try GCSClient.fromEnvironment(url: gcsURL, accessToken: nil, environment: environment),
        ]
    }

    /// Writes `bytes` to a new output in pieces of `piece` bytes.
    func output(_ client: any ObjectStoreClient, key: String, _ bytes: [UInt8], piece: Int = (1 << 20) + 7) throws -> ObjectOutput {
        let out = ObjectOutput(client: client, key: key, object: StoredObject(key: key, size: 0))
        try bytes.withUnsafeBytes { all in
            for start in stride(from: 0, to: all.count, by: piece) {
                try out.write(UnsafeRawBufferPointer(rebasing: all[start..<min(start + piece, all.count)]))
            }
        }
        return out
    }

    func object(_ client: any ObjectStoreClient, _ key: String) throws -> [UInt8]? {
        guard try runBlocking({ try await client.head(key: key) }) != nil else { return nil }
        return Array(try runBlocking { try await client.get(key: key, range: nil) }.readableBytesView)
    }

    func testEverySizeAroundThePartBoundariesArrivesWhole() throws {
        let part = Self.part
        let sizes = [0, 1, part - 1, part, part + 1, 2 * part, 2 * part + 123_457]
        let source = SampleBytes.random(count: sizes.max()!, seed: 41)
        for client in try clients() {
            for size in sizes {
                let key = "out/\(size).bin"
                let bytes = Array(source.prefix(size))
                let out = try output(client, key: key, bytes)
                try out.finish()
                XCTAssertNil(try object(client, key), "\(client.url) \(size): nothing before publish")
                try out.publish()
                XCTAssertEqual(try object(client, key), bytes, "\(client.url) \(size)")
            }
        }
    }

    func testAnObjectIsReplacedOnlyWhenTheNewOneIsWhole() throws {
        for client in try clients() {
            let key = "dump.json"
            let old = try output(client, key: key, Array("old".utf8))
            try old.publish()
            let new = SampleBytes.random(count: 2 * Self.part + 5, seed: 42)
            let out = try output(client, key: key, new)
            try out.finish()  // every part but what completes it is in
            XCTAssertEqual(try object(client, key), Array("old".utf8), "\(client.url)")
            try out.publish()
            XCTAssertEqual(try object(client, key), new, "\(client.url)")
        }
    }

    func testAnAbortedOutputLeavesNoObjectAndNoParts() throws {
        for client in try clients() {
            let key = "aborted.json"
            let out = try output(client, key: key, SampleBytes.random(count: 2 * Self.part + 5, seed: 43))
            out.abort()
            XCTAssertNil(try object(client, key), "\(client.url)")
            if let s3 = client as? S3Client {
                XCTAssertEqual(try runBlocking { try await s3.uploadsInProgress(prefix: "") }.count, 0)
            }
            // Dropped without publish (a command that failed): the same.
            do { _ = try output(client, key: "dropped.json", SampleBytes.random(count: Self.part + 1, seed: 44)) }
            XCTAssertNil(try object(client, "dropped.json"), "\(client.url)")
            if let s3 = client as? S3Client {
                XCTAssertEqual(try runBlocking { try await s3.uploadsInProgress(prefix: "") }.count, 0)
            }
        }
    }

    /// The CLI sends its output as it writes it: no temporary file (TMPDIR names no folder), the same
    /// bytes as a local output; a run that fails after parts went up leaves no object and no upload.
    func testCommandsStreamTheirOutputsWithoutLocalDisk() throws {
        let (s3, gcs, environment) = try servers()
        let bucket = try s3.makeBucket()
        let gcsBucket = try gcs.makeBucket()
        let directory = try temporaryDirectory(self)
        var records: [String] = []
        for i in 0..<170_000 { records.append("\"-K\(i)\":{\"title\":\"item \(i)\",\"n\":\(i * 7),\"done\":\(i % 2 == 0)}") }
        let dump = "{\"v1\":{\"todolist\":{" + records.joined(separator: ",") + "}}}"
        let input = directory.appendingPathComponent("in.json")
        try dump.write(to: input, atomically: true, encoding: .utf8)
        let reference = directory.appendingPathComponent("reference.json").path
        _ = try run(["convert", input.path, "-o", reference, "--pretty"], environment)
        XCTAssertGreaterThan(try contents(reference).count, 2 * Self.part, "three parts or more")

        var noDisk = environment
        noDisk["TMPDIR"] = directory.appendingPathComponent("no-such-folder").path
        for target in ["s3://\(bucket)/v2/out.json", "gs://\(gcsBucket)/v2/out.json"] {
            _ = try run(["convert", input.path, "-o", target, "--pretty"], noDisk)
            let back = directory.appendingPathComponent("back.json").path
            _ = try run(["convert", target, "-o", back, "--pretty"], environment)
            XCTAssertEqual(try contents(back), try contents(reference), target)
        }
        let zstd = "s3://\(bucket)/v2/out.json.zst"
        _ = try run(["convert", input.path, "-o", zstd, "--pretty"], noDisk)
        let unpacked = directory.appendingPathComponent("unpacked.json").path
        _ = try run(["convert", zstd, "-o", unpacked, "--pretty"], environment)
        XCTAssertEqual(try contents(unpacked), try contents(reference))

        // The input breaks near its end, after more than two parts were sent.
        let broken = directory.appendingPathComponent("broken.json")
        try (String(dump.dropLast(3)) + ",]}}").write(to: broken, atomically: true, encoding: .utf8)
        for target in ["s3://\(bucket)/v2/broken.json", "gs://\(gcsBucket)/v2/broken.json"] {
            let failed = try run(["convert", broken.path, "-o", target, "--pretty"], noDisk, expect: 2)
            XCTAssertTrue(failed.stderr.contains("broken.json"), failed.stderr)
        }
        let listing = try s3.aws(["s3", "ls", "--recursive", "s3://\(bucket)/"])
        XCTAssertFalse(listing.contains("broken.json"), listing)
        let uploads = try s3.aws(["s3api", "list-multipart-uploads", "--bucket", bucket])
        XCTAssertFalse(uploads.contains("UploadId"), uploads)
        _ = try run(["convert", "gs://\(gcsBucket)/v2/broken.json", "-o", "-"], environment, expect: 2)
    }

    /// Interrupted while parts are up (SIGINT, as Ctrl-C sends): the upload is aborted before the
    /// process exits with 130, so no parts stay behind (S3 would keep and bill them) and no object
    /// appears.
    func testAnInterruptedRunAbortsItsUpload() throws {
        let (s3, _, environment) = try servers()
        let bucket = try s3.makeBucket()
        let directory = try temporaryDirectory(self)
        let fifo = directory.appendingPathComponent("dump.fifo").path
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        let process = Process()
        process.executableURL = CLI.binary
        process.arguments = ["convert", fifo, "-o", "s3://\(bucket)/out.json", "-q"]
        process.environment = environment
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        // Two parts' worth of records, then the writer stalls with the FIFO open.
        let writer = try XCTUnwrap(FileHandle(forWritingAtPath: fifo))
        writer.write(Data("{\"items\":{".utf8))
        let record = "\"k%06d\":{\"t\":\"" + String(repeating: "x", count: 200) + "\"},"
        var chunk = ""
        for i in 0..<90_000 {
            chunk += String(format: record, i)
            if chunk.utf8.count > 1 << 20 {
                writer.write(Data(chunk.utf8))
                chunk = ""
            }
        }
        writer.write(Data(chunk.utf8))
        let configuration = AWSConfiguration(
            credentials: AWSCredentials(accessKeyID: SeaweedServer.accessKey, secretAccessKey: SeaweedServer.secretKey),
            region: "us-east-1", endpoint: s3.endpoint)
        let client = S3Client(url: try XCTUnwrap(ObjectStoreURL("s3://\(bucket)/")), configuration: configuration)
        let deadline = Date().addingTimeInterval(120)
        while try runBlocking({ try await client.uploadsInProgress(prefix: "") }).isEmpty {
            XCTAssertLessThan(Date(), deadline, "an upload begins once a part is full")
            if Date() > deadline { break }
            Thread.sleep(forTimeInterval: 0.2)
        }
        process.interrupt()
        process.waitUntilExit()
        try writer.close()
        XCTAssertEqual(process.terminationStatus, 130)
        XCTAssertEqual(try runBlocking { try await client.uploadsInProgress(prefix: "") }.count, 0, "the upload was aborted")
        XCTAssertNil(try object(client, "out.json"))
    }
}
