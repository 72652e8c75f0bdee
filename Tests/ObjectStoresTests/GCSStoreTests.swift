import CloudHTTP
import DumpKit
import Foundation
import NIOCore
import ObjectStores
import TestSupport
import XCTest

/// The Cloud Storage JSON API client and the bucket blob store against fake-gcs-server.
final class GCSStoreTests: XCTestCase {
    nonisolated(unsafe) static var server: FakeGCSServer?
    nonisolated(unsafe) static var startError: Error?

    override class func setUp() {
        do { server = try FakeGCSServer() } catch { startError = error }
    }

    override class func tearDown() {
        server?.stop()
        server = nil
    }

    func gcs(prefix: String = "") throws -> GCSClient {
        if let startError = Self.startError { throw startError }
        let server = Self.server!
        let url = try XCTUnwrap(ObjectStoreURL("gs://\(try server.makeBucket())/\(prefix)"))
        return try GCSClient.fromEnvironment(url: url, accessToken: nil, environment: ["STORAGE_EMULATOR_HOST": "127.0.0.1:\(server.port)"])
    }

    func testTheBlobStoreKeepsMetadataWithItsCase() throws {
        let client = try gcs(prefix: "images")
        let store = BucketBlobStore(client: client)
        let bytes = SampleBytes.random(count: 4000, seed: 11)
        var m = metadata("v1/todolist/-K1/image1.png", bytes)
        m.cacheControl = "no-cache"
        m.contentDisposition = "attachment"
        m.contentLanguage = "fr"
        m.customMetadata["Owner"] = "Ana"
        XCTAssertEqual(try bytes.withUnsafeBytes { try store.put($0, metadata: m, replacing: false) }, .stored)
        XCTAssertEqual(try bytes.withUnsafeBytes { try store.put($0, metadata: m, replacing: false) }, .unchanged)
        let back = try XCTUnwrap(try store.metadata(m.name))
        XCTAssertEqual(
            back.customMetadata, ["firebaseStorageDownloadTokens": m.customMetadata["firebaseStorageDownloadTokens"]!, "Owner": "Ana"])
        XCTAssertEqual(back.withUpdated(nil), m)
        XCTAssertEqual(try store.get(m.name), bytes)

        var changed = m
        changed.customMetadata = ["firebaseStorageDownloadTokens": "new-token"]
        changed.contentType = "image/x-png"
        XCTAssertEqual(try bytes.withUnsafeBytes { try store.put($0, metadata: changed, replacing: false) }, .stored)
        let patched = try XCTUnwrap(try store.metadata(m.name))
        XCTAssertEqual(patched.customMetadata["firebaseStorageDownloadTokens"], "new-token")
        // The PATCH sets keys the new metadata lacks to null: GCS removes them, fake-gcs-server keeps them empty.
        XCTAssertEqual(patched.customMetadata["Owner"] ?? "", "")
        XCTAssertEqual(patched.contentType, "image/x-png")

        let other = SampleBytes.random(count: 4000, seed: 12)
        XCTAssertThrowsError(try other.withUnsafeBytes { try store.put($0, metadata: metadata(m.name, other), replacing: false) }) {
            XCTAssertTrue($0 is BlobExistsError, "\($0)")
        }
        XCTAssertEqual(try store.get(m.name), bytes)
        XCTAssertEqual(try other.withUnsafeBytes { try store.put($0, metadata: metadata(m.name, other), replacing: true) }, .replaced)
        XCTAssertEqual(try store.get(m.name), other)
        XCTAssertNil(try store.metadata("missing.png"))
        XCTAssertThrowsError(try store.get("missing.png"))
    }

    func testListsPageByPageAndUploadsLargeObjectsResumably() async throws {
        let client = try gcs(prefix: "p/")
        for i in 0..<25 {
            let key = client.url.key(String(format: "o%02d", i))
            _ = try await client.put(
                key: key, body: ByteBuffer(bytes: [UInt8(i)]), object: StoredObject(key: key, size: 1), createOnly: true)
        }
        var pages: [Int] = []
        var keys: [String] = []
        var token: String?
        repeat {
            let page = try await client.listPage(prefix: client.url.prefix, token: token, maxResults: 10)
            pages.append(page.objects.count)
            keys += page.objects.map(\.key)
            token = page.next
        } while token != nil
        XCTAssertEqual(pages, [10, 10, 5])
        XCTAssertEqual(keys, (0..<25).map { String(format: "p/o%02d", $0) })

        let bytes = SampleBytes.random(count: 20 << 20 + 12345, seed: 5)
        let body = ByteBuffer(bytes: bytes)
        var o = StoredObject(key: "p/big.bin", size: Int64(bytes.count))
        o.customMetadata = ["firebaseStorageDownloadTokens": "t1"]
        let created = try await client.create(key: o.key, size: o.size, object: o, createOnly: true) {
            body.getSlice(at: Int($0), length: $1)!
        }
        XCTAssertEqual(created, .created)
        let again = try await client.create(key: o.key, size: o.size, object: o, createOnly: true) {
            body.getSlice(at: Int($0), length: $1)!
        }
        XCTAssertEqual(again, .exists)
        let head = try await client.head(key: o.key)
        XCTAssertEqual(head?.size, o.size)
        XCTAssertEqual(head?.customMetadata["firebaseStorageDownloadTokens"], "t1")
        let ranged = try await client.get(key: o.key, range: 10_000_000..<10_000_500)
        XCTAssertEqual(Array(ranged.readableBytesView), Array(bytes[10_000_000..<10_000_500]))
        let all = try await client.get(key: o.key, range: nil)
        XCTAssertEqual(Array(all.readableBytesView), bytes)
    }

    func testNoCredentialsIsAClearError() throws {
        let url = try XCTUnwrap(ObjectStoreURL("gs://my-app.appspot.com/x"))
        XCTAssertThrowsError(try GCSClient.fromEnvironment(url: url, accessToken: nil, environment: [:])) {
            XCTAssertTrue("\($0)".contains("gs://my-app.appspot.com/x/") && "\($0)".contains("GOOGLE_APPLICATION_CREDENTIALS"), "\($0)")
        }
    }

    /// The patch names the generation it read (`ifGenerationMatch`) and sets what the new metadata
    /// lacks to null; fake-gcs-server accepts both but enforces neither the condition nor a null
    /// `cacheControl`, so only the custom metadata is checked here.
    func testAMetadataPatchNamesTheGenerationAndClearsWhatTheNewMetadataLacks() async throws {
        let client = try gcs()
        var o = StoredObject(key: "g.bin", size: 3)
        o.customMetadata = ["a": "1"]
        o.cacheControl = "no-store"
        _ = try await client.put(key: o.key, body: ByteBuffer(bytes: [1, 2, 3]), object: o, createOnly: true)
        let read = try await client.head(key: o.key)
        let first = try XCTUnwrap(read)
        XCTAssertNotNil(first.generation)
        var update = StoredObject(key: o.key, size: 3)
        update.customMetadata = ["b": "2"]
        try await client.patch(key: o.key, object: update, existing: first)
        let patched = try await client.head(key: o.key)
        XCTAssertEqual(patched?.customMetadata["b"], "2")
        XCTAssertEqual(patched?.customMetadata["a"] ?? "", "", "set to null (fake-gcs-server keeps it empty)")
    }
}
