import CloudHTTP
import DumpKit
import Foundation
import NIOCore
import TestSupport
import XCTest

@testable import ObjectStores

/// A fresh temporary directory, removed by the test's teardown.
func temporaryDirectory(_ test: XCTestCase) throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("objectstores-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    test.addTeardownBlock { try? FileManager.default.removeItem(at: url) }
    return url
}

/// Metadata for `bytes` under `name`, with a download token.
func metadata(_ name: String, _ bytes: [UInt8], contentType: String = "image/png", token: String = "0f6b2c1e-1111-4222-8333-444455556666")
    -> BlobMetadata
{
    bytes.withUnsafeBytes { ContentDigest($0) }.metadata(
        name: name, contentType: contentType, customMetadata: ["firebaseStorageDownloadTokens": token])
}

/// Test cases that run `dumpkit` against both object stores: SeaweedFS (S3) and fake-gcs-server (GCS),
/// started once per test class and stopped after it.
class BothStoresTestCase: XCTestCase {
    nonisolated(unsafe) static var s3: SeaweedServer?
    nonisolated(unsafe) static var gcs: FakeGCSServer?
    nonisolated(unsafe) static var startError: Error?

    override class func setUp() {
        do {
            s3 = try SeaweedServer()
            gcs = try FakeGCSServer()
        } catch {
            startError = error
        }
    }

    override class func tearDown() {
        s3?.stop()
        gcs?.stop()
        s3 = nil
        gcs = nil
        startError = nil
    }

    /// Both servers, and an environment that reaches both (S3 credentials and endpoint, the GCS emulator).
    func servers() throws -> (s3: SeaweedServer, gcs: FakeGCSServer, environment: [String: String]) {
        if let startError = Self.startError { throw startError }
        var environment = Self.s3!.clientEnvironment
        environment["STORAGE_EMULATOR_HOST"] = Self.gcs!.endpoint
        return (Self.s3!, Self.gcs!, environment)
    }

    /// Runs `dumpkit` and checks its exit code.
    @discardableResult
    func run(_ arguments: [String], _ environment: [String: String], expect status: Int32 = 0) throws -> CLI.Result {
        let r = try CLI.run(arguments, environment: environment)
        XCTAssertEqual(r.status, status, "dumpkit \(arguments.joined(separator: " ")): \(r.stderr)")
        return r
    }
}

extension BothStoresTestCase {
    /// A compact dump of about `bytes` bytes: records with text (escapes, `é` escaped and not),
    /// numbers and arrays; `variant` changes digits only, so the size stays the same.
    func dump(bytes: Int, variant: Int = 0) -> String {
        var records: [String] = []
        var size = 0
        var i = 0
        while size < bytes {
            let record = "\"-K\(i)\":{\"title\":\"item \(i) \\\"q\\\" \\u00e9 é\",\"n\":\(i * 7 + variant),\"tags\":[\"a\",\"b\",\(i % 3)]}"
            records.append(record)
            size += record.utf8.count + 1
            i += 1
        }
        return "{\"v1\":{\"todolist\":{" + records.joined(separator: ",") + "}}}"
    }
}

extension BothStoresTestCase {
    /// A fresh bucket of the scheme's server, as `scheme://bucket`.
    func bucket(_ scheme: String) throws -> String {
        let (s3, gcs, _) = try servers()
        return "\(scheme)://\(scheme == "s3" ? try s3.makeBucket() : try gcs.makeBucket())"
    }

    /// The object's bytes, downloaded by another client (`aws s3 cp`, `curl` of the JSON API's media),
    /// or nil when there is none.
    func download(_ url: String, to directory: URL) throws -> Data? {
        let (s3, gcs, _) = try servers()
        let file = directory.appendingPathComponent("download-\(UUID().uuidString)")
        if url.hasPrefix("s3://") {
            guard (try? s3.aws(["s3api", "head-object", "--bucket", bucketName(url), "--key", key(url)])) != nil else { return nil }
            try s3.aws(["s3", "cp", url, file.path, "--quiet"])
        } else {
            let media =
                "\(gcs.endpoint)/storage/v1/b/\(bucketName(url))/o/\(key(url).addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)?alt=media"
            let r = try Shell.execute(URL(fileURLWithPath: "/usr/bin/env"), ["curl", "-sf", "-o", file.path, media])
            guard r.status == 0 else { return nil }
        }
        return try Data(contentsOf: file)
    }

    func bucketName(_ url: String) -> String { String(url.split(separator: "/")[1]) }
    func key(_ url: String) -> String { url.split(separator: "/", maxSplits: 2).dropFirst(2).joined() }

    /// Deletes the object at `url` with another client than dumpkit's commands (the aws CLI, the
    /// Cloud Storage client).
    func deleteObject(at url: String) throws {
        let (s3, _, environment) = try servers()
        if url.hasPrefix("s3://") {
            try s3.aws(["s3", "rm", url, "--quiet"])
        } else {
            let client = try XCTUnwrap(
                ObjectStoreOptions(environment: environment).client(for: XCTUnwrap(ObjectStoreURL("gs://\(bucketName(url))/")))
                    as? GCSClient)
            let key = key(url)
            try runBlocking { try await client.delete(key: key, generation: nil) }
        }
    }

    /// The keys in the bucket of `url` that start with `prefix`.
    func keys(in url: String, startingWith prefix: String) throws -> [String] {
        let client = try ObjectStoreOptions(environment: try servers().environment).client(for: XCTUnwrap(ObjectStoreURL(url + "/")))
        return try runBlocking { try await client.listPage(prefix: prefix, token: nil) }.objects.map(\.key)
    }
}
