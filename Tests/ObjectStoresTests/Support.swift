import DumpKit
import Foundation
import NIOCore
import ObjectStores
import TestSupport
import XCTest

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
