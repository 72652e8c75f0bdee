import DumpKit
import Foundation
import NIOCore
import TestSupport
import XCTest

@testable import ObjectStores

/// `ObjectRanges` as the index pass reads a bucket dump: the reader and the checksums of the ranges
/// it passed share one source, so the object is fetched once, not twice.
final class ObjectRangesTests: XCTestCase {
    /// An object in memory that counts the bytes its ranged reads return.
    final class CountingClient: ObjectStoreClient, @unchecked Sendable {
        let bytes: [UInt8]
        private let lock = NSLock()
        private var served: Int64 = 0
        var bytesServed: Int64 { lock.withLock { served } }
        let url = try! ObjectStoreURL("s3://bucket/dump.json")!
        let endpoint = "memory"

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        func head(key: String) async throws -> StoredObject? {
            var object = StoredObject(key: key, size: Int64(bytes.count))
            object.etag = "e1"
            return object
        }

        func read(key: String, range: Range<Int64>?, version: String?) async throws -> ObjectRead {
            let r = range ?? 0..<Int64(bytes.count)
            lock.withLock { served += Int64(r.count) }
            return ObjectRead(
                body: ByteBuffer(bytes: bytes[Int(r.lowerBound)..<Int(r.upperBound)]), version: "e1", size: Int64(bytes.count))
        }

        func listPage(prefix: String, token: String?) async throws -> ListPage { fatalError("not used") }
        var listsMetadata: Bool { false }
        func put(key: String, body: ByteBuffer, object: StoredObject, createOnly: Bool) async throws -> CreateOutcome {
            fatalError("not used")
        }
        func beginUpload(key: String, object: StoredObject, createOnly: Bool) async throws -> (any ObjectUpload)? { fatalError("not used") }
        var partsInFlight: Int { 1 }
        var lastPartCompletes: Bool { false }
        func partSize(_ number: Int, of size: Int64?) -> Int { 8 << 20 }
        func updateMetadata(key: String, object: StoredObject, existing: StoredObject) async throws { fatalError("not used") }
    }

    func testTheIndexPassFetchesABucketDumpOnce() throws {
        // About 40 MB of records: five blocks of 8 MiB.
        var text = "{\"v1\":{\"todolist\":{"
        var i = 0
        while text.utf8.count < 40_000_000 {
            if i > 0 { text += "," }
            text += "\"-K\(i)\":{\"title\":\"item \(i) é\",\"n\":\(i * 7),\"tags\":[\"a\",\"b\"]}"
            i += 1
        }
        text += "}}}"
        let client = CountingClient(Array(text.utf8))
        PositionalInput.register { location in
            guard location == "s3://bucket/dump.json" else { return nil }
            let ranges = ObjectRanges(
                client: client, key: "dump.json", version: "e1", size: Int64(client.bytes.count), versionName: "ETag e1")
            return .init(source: ranges, size: ranges.size, version: ranges.versionName)
        }
        let dir = try TemporaryDirectory()
        var job = DumpIndexJob(input: "s3://bucket/dump.json", output: dir.path("dump.dkindex"))
        job.records = [try PathPattern("/v1/todolist/{id}")]
        let summary = try job.run()
        XCTAssertEqual(summary.bytesIn, Int64(client.bytes.count))
        XCTAssertEqual(summary.records, i)
        XCTAssertEqual(client.bytesServed, Int64(client.bytes.count), "every byte fetched once")
        XCTAssertEqual(try DumpIndexReader(path: dir.path("dump.dkindex")).trailer.objectVersion, "ETag e1")
    }
}
