import CloudHTTP
import DumpKit
import Foundation
import NIOCore
import ObjectStores
import TestSupport
import XCTest

/// The S3 client and the bucket blob store against SeaweedFS, which checks every signature; the
/// `aws` CLI reads what DumpKit wrote and writes what DumpKit reads.
final class S3StoreTests: XCTestCase {
    nonisolated(unsafe) static var server: SeaweedServer?
    nonisolated(unsafe) static var startError: Error?

    override class func setUp() {
        do { server = try SeaweedServer() } catch { startError = error }
    }

    override class func tearDown() {
        server?.stop()
        server = nil
    }

    func seaweed() throws -> SeaweedServer {
        if let startError = Self.startError { throw startError }
        return Self.server!
    }

    func client(bucket: String, prefix: String = "", secret: String = SeaweedServer.secretKey, checksum: ChecksumMode = .crc32c) throws
        -> S3Client
    {
        let s3 = try seaweed()
        let url = try XCTUnwrap(ObjectStoreURL("s3://\(bucket)/\(prefix)"))
        let configuration = AWSConfiguration(
            credentials: AWSCredentials(accessKeyID: SeaweedServer.accessKey, secretAccessKey: secret),
            region: "us-east-1", endpoint: s3.endpoint)
        return S3Client(url: url, configuration: configuration, checksum: checksum)
    }

    func testAWrongSecretIsOneLineNamingStoreEndpointAndServiceError() throws {
        let s3 = try seaweed()
        let bucket = try s3.makeBucket()
        let directory = try temporaryDirectory(self)
        let dump = directory.appendingPathComponent("dump.json")
        try #"{"a": {"ref": {"path": "x.png", "contentType": "image/png", "size": 1, "sha256": "00", "md5": "AA=="}}}"#.write(
            to: dump, atomically: true, encoding: .utf8)
        var environment = s3.clientEnvironment
        environment["AWS_SECRET_ACCESS_KEY"] = "wrong"
        let r = try CLI.run(["check-blobs", dump.path, "--blobs", "s3://\(bucket)/images"], environment: environment)
        XCTAssertEqual(r.status, 2, r.stderr)
        let lines = r.stderr.split(separator: "\n")
        XCTAssertEqual(lines.count, 1, r.stderr)
        XCTAssertTrue(r.stderr.contains("s3://\(bucket)/images/"), r.stderr)
        XCTAssertTrue(r.stderr.contains("endpoint \(s3.endpoint)"), r.stderr)
        XCTAssertTrue(r.stderr.contains("SignatureDoesNotMatch"), r.stderr)
        XCTAssertTrue(r.stderr.contains("HTTP 403"), r.stderr)

        environment = s3.clientEnvironment
        let missing = try CLI.run(
            ["check-blobs", dump.path, "--blobs", "s3://no-such-bucket-here/images"], environment: environment)
        XCTAssertEqual(missing.status, 2, missing.stderr)
        XCTAssertTrue(missing.stderr.contains("NoSuchBucket"), missing.stderr)
    }

    func testListsAcrossPagesWithContinuationTokens() async throws {
        let bucket = try seaweed().makeBucket()
        let s3 = try client(bucket: bucket, prefix: "many")
        let names = (0..<2500).map { String(format: "obj/%05d-%@.bin", $0, $0 % 3 == 0 ? "é" : "a+b") }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (i, name) in names.enumerated() {
                if i >= 32 { try await group.next() }
                group.addTask {
                    let key = s3.url.key(name)
                    let o = StoredObject(key: key, size: 3)
                    _ = try await s3.put(key: key, body: ByteBuffer(bytes: [1, 2, UInt8(i & 0xFF)]), object: o, createOnly: true)
                }
            }
            try await group.waitForAll()
        }
        var pages: [Int] = []
        var keys: [String] = []
        var token: String?
        repeat {
            let page = try await s3.listPage(prefix: s3.url.prefix, token: token)
            pages.append(page.objects.count)
            keys += page.objects.map(\.key)
            token = page.next
        } while token != nil
        XCTAssertEqual(pages, [1000, 1000, 500])
        XCTAssertEqual(keys, names.map { s3.url.key($0) }.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })

        var small: [Int] = []
        token = nil
        repeat {
            let page = try await s3.listPage(prefix: s3.url.prefix + "obj/0000", token: token, maxKeys: 3)
            small.append(page.objects.count)
            token = page.next
        } while token != nil
        XCTAssertEqual(small, [3, 3, 3, 1])

        let store = BucketBlobStore(client: s3)
        var listed: [String] = []
        try store.list { listed.append($0) }
        XCTAssertEqual(Set(listed), Set(names))
        XCTAssertEqual(listed.count, 2500)
    }

    func testMultipartUploadAndAbortLeaveNoPartialObject() async throws {
        let bucket = try seaweed().makeBucket()
        for checksum in ChecksumMode.allCases {
            let s3 = try client(bucket: bucket, checksum: checksum)
            let bytes = SampleBytes.random(count: 20 << 20, seed: 7)
            let body = ByteBuffer(bytes: bytes)
            var o = StoredObject(key: "big-\(checksum).bin", size: Int64(bytes.count))
            o.contentType = "application/octet-stream"
            o.customMetadata = ["firebaseStorageDownloadTokens": "tok"]
            let outcome = try await s3.create(key: o.key, size: o.size, object: o, createOnly: true) {
                body.getSlice(at: Int($0), length: $1)!
            }
            XCTAssertEqual(outcome, .created)
            let back = try await s3.get(key: o.key, range: nil)
            XCTAssertEqual(Array(back.readableBytesView), bytes, "\(checksum)")
            let head = try await s3.head(key: o.key)
            XCTAssertEqual(head?.customMetadata["firebaseStorageDownloadTokens"], "tok")
            XCTAssertTrue(head?.etag?.hasSuffix("-3") ?? false, "three parts of 8 MiB: \(head?.etag ?? "")")
            let again = try await s3.create(key: o.key, size: o.size, object: o, createOnly: true) {
                body.getSlice(at: Int($0), length: $1)!
            }
            XCTAssertEqual(again, .exists, "If-None-Match: * on CompleteMultipartUpload")
            let ranged = try await s3.get(key: o.key, range: (9 << 20)..<((9 << 20) + 100))
            XCTAssertEqual(Array(ranged.readableBytesView), Array(bytes[(9 << 20)..<((9 << 20) + 100)]))
        }

        struct ReadFailed: Error {}
        let s3 = try client(bucket: bucket)
        let failing = StoredObject(key: "failing.bin", size: 30 << 20)
        do {
            _ = try await s3.create(key: failing.key, size: failing.size, object: failing, createOnly: true) { offset, length in
                if offset >= 16 << 20 { throw ReadFailed() }
                return ByteBuffer(bytes: [UInt8](repeating: 1, count: length))
            }
            XCTFail("a failing part must fail the upload")
        } catch is ReadFailed {}
        let head = try await s3.head(key: failing.key)
        XCTAssertNil(head, "no object under the final name")
        let open = try await s3.uploadsInProgress(prefix: "failing")
        XCTAssertTrue(open.isEmpty, "the upload was aborted: \(open)")
        let listed = try await s3.listPage(prefix: "", token: nil)
        XCTAssertFalse(listed.objects.contains { $0.key == failing.key })
    }

    func testCreateOnlyWritesAndTheBlobStoreRules() throws {
        let bucket = try seaweed().makeBucket()
        let s3 = try client(bucket: bucket, prefix: "blobs/")
        let store = BucketBlobStore(client: s3)
        let a = SampleBytes.random(count: 5000, seed: 1), b = SampleBytes.random(count: 5000, seed: 2)
        let ma = metadata("v1/x/-K1/image1.png", a)
        XCTAssertEqual(try a.withUnsafeBytes { try store.put($0, metadata: ma, replacing: false) }, .stored)
        XCTAssertEqual(try a.withUnsafeBytes { try store.put($0, metadata: ma, replacing: false) }, .unchanged)
        var retyped = ma
        retyped.contentType = "image/jpeg"
        XCTAssertEqual(
            try a.withUnsafeBytes { try store.put($0, metadata: retyped, replacing: false) }, .stored,
            "same bytes: only the metadata is written")
        XCTAssertEqual(try store.metadata(ma.name)?.contentType, "image/jpeg")
        let mb = metadata(ma.name, b)
        XCTAssertThrowsError(try b.withUnsafeBytes { try store.put($0, metadata: mb, replacing: false) }) { error in
            let e = error as? BlobExistsError
            XCTAssertEqual(e?.existingSHA256, ma.sha256)
            XCTAssertEqual(e?.newSHA256, mb.sha256)
        }
        XCTAssertEqual(try store.get(ma.name), a, "the other bytes did not replace the object")
        XCTAssertEqual(try b.withUnsafeBytes { try store.put($0, metadata: mb, replacing: true) }, .replaced)
        XCTAssertEqual(try store.get(ma.name), b)
        let back = try XCTUnwrap(try store.metadata(ma.name))
        XCTAssertEqual(back, mb.withUpdated(back.updated))
        XCTAssertTrue(try store.exists(ma.name))
        XCTAssertFalse(try store.exists("nothing.png"))
        XCTAssertNil(try store.metadata("nothing.png"))
        XCTAssertThrowsError(try store.get("nothing.png")) { XCTAssertTrue("\($0)".contains("no such object"), "\($0)") }
        XCTAssertThrowsError(try a.withUnsafeBytes { try store.put($0, metadata: metadata("../up.png", a), replacing: false) })

        // The raw protocol: a create-only PutObject of an existing key is a 412, nothing written.
        let raw = try runBlocking {
            try await s3.put(
                key: "blobs/v1/x/-K1/image1.png", body: ByteBuffer(bytes: a), object: StoredObject(key: "k", size: 5000), createOnly: true)
        }
        XCTAssertEqual(raw, .exists)
        XCTAssertEqual(try store.get(ma.name), b)

        // The hashes an object records go with its bytes (SHA-256 as the signed payload hash, the
        // checksum mode's header): bytes other than those it records are refused, nothing written.
        for mode in [ChecksumMode.crc32c, .md5] {
            let checked = try client(bucket: bucket, prefix: "blobs/", checksum: mode)
            var claiming = StoredObject(key: "blobs/claimed-\(mode).png", size: 5000)
            claiming.sha256 = ma.sha256
            claiming.md5 = ma.md5
            claiming.crc32c = ma.crc32c
            let claimed = claiming
            XCTAssertThrowsError(
                try runBlocking { try await checked.put(key: claimed.key, body: ByteBuffer(bytes: b), object: claimed, createOnly: true) }
            ) { XCTAssertTrue("\($0)".contains(claimed.key) && "\($0)".contains("HTTP 400"), "\(mode): \($0)") }
            XCTAssertFalse(try store.exists("claimed-\(mode).png"), "\(mode)")
            XCTAssertEqual(
                try runBlocking { try await checked.put(key: claimed.key, body: ByteBuffer(bytes: a), object: claimed, createOnly: true) },
                .created)
            XCTAssertEqual(try store.get("claimed-\(mode).png"), a)
        }
    }

    func testTheAWSCLIReadsWhatDumpKitWritesAndWritesWhatItReads() throws {
        let s3server = try seaweed()
        let bucket = try s3server.makeBucket()
        let s3 = try client(bucket: bucket, prefix: "p")
        let store = BucketBlobStore(client: s3)
        let bytes = SampleBytes.random(count: 3000, seed: 3)
        var m = metadata("dir/ours.png", bytes)
        m.cacheControl = "public, max-age=60"
        m.contentDisposition = "inline; filename=\"ours.png\""
        m.contentLanguage = "de"
        XCTAssertEqual(try bytes.withUnsafeBytes { try store.put($0, metadata: m, replacing: false) }, .stored)

        let directory = try temporaryDirectory(self)
        let downloaded = directory.appendingPathComponent("ours.png")
        try s3server.aws(["s3", "cp", "s3://\(bucket)/p/dir/ours.png", downloaded.path])
        XCTAssertEqual(try contents(downloaded.path), bytes)
        let head =
            try JSONSerialization.jsonObject(
                with: Data(s3server.aws(["s3api", "head-object", "--bucket", bucket, "--key", "p/dir/ours.png"]).utf8)) as! [String: Any]
        XCTAssertEqual(head["ContentType"] as? String, "image/png")
        XCTAssertEqual(head["CacheControl"] as? String, "public, max-age=60")
        XCTAssertEqual(head["ContentLanguage"] as? String, "de")
        XCTAssertEqual(
            (head["Metadata"] as? [String: String])?["firebasestoragedownloadtokens"], m.customMetadata["firebaseStorageDownloadTokens"])
        XCTAssertEqual(head["ContentLength"] as? Int, 3000)

        let theirs = SampleBytes.random(count: 70000, seed: 4)
        let upload = directory.appendingPathComponent("theirs.jpg")
        try Data(theirs).write(to: upload)
        try s3server.aws([
            "s3", "cp", upload.path, "s3://\(bucket)/p/theirs.jpg", "--content-type", "image/jpeg",
            "--metadata", "firebaseStorageDownloadTokens=abc-123,owner=me",
        ])
        XCTAssertEqual(try store.get("theirs.jpg"), theirs)
        let read = try XCTUnwrap(try store.metadata("theirs.jpg"))
        XCTAssertEqual(read.contentType, "image/jpeg")
        XCTAssertEqual(
            read.customMetadata, ["firebaseStorageDownloadTokens": "abc-123", "owner": "me"], "the known key gets its case back")
        let digest = theirs.withUnsafeBytes { ContentDigest($0) }
        XCTAssertEqual(read.sha256, digest.sha256, "hashed from the content: the aws CLI records no SHA-256")
        XCTAssertEqual(read.md5, digest.md5)
        var names: [String] = []
        try store.list { names.append($0) }
        XCTAssertEqual(names.sorted(), ["dir/ours.png", "theirs.jpg"])
    }
}

extension BlobMetadata {
    func withUpdated(_ updated: Int64?) -> BlobMetadata {
        var m = self
        m.updated = updated
        return m
    }
}
