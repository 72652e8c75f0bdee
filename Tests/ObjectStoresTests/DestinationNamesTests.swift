import NIOCore
import XCTest

@testable import ObjectStores

/// `StoreCopier.DestinationNames`: which names a bucket destination holds, read page by page in step
/// with the source's names, so that `copy` looks up only those one by one.
final class DestinationNamesTests: XCTestCase {
    /// A bucket that only lists: its keys in UTF-8 byte order, `pageSize` to a page.
    struct ListingOnly: ObjectStoreClient {
        let url: ObjectStoreURL
        let keys: [String]
        let pageSize: Int
        let pagesRead = Counter()
        var endpoint: String { "memory" }

        final class Counter: @unchecked Sendable {
            var value = 0
        }

        func listPage(prefix: String, token: String?) async throws -> ListPage {
            pagesRead.value += 1
            let start = token.map { Int($0)! } ?? 0
            let end = min(start + pageSize, keys.count)
            return ListPage(
                objects: keys[start..<end].map { StoredObject(key: $0, size: 1) }, next: end < keys.count ? String(end) : nil)
        }

        var listsMetadata: Bool { false }
        func head(key: String) async throws -> StoredObject? { XCTFail("no lookups"); return nil }
        func read(key: String, range: Range<Int64>?, version: String?) async throws -> ObjectRead {
            XCTFail("no reads")
            return ObjectRead(body: ByteBuffer(), version: nil, size: nil)
        }
        func put(key: String, body: ByteBuffer, object: StoredObject, createOnly: Bool) async throws -> CreateOutcome {
            XCTFail("no writes")
            return .created
        }
        func beginUpload(key: String, object: StoredObject, createOnly: Bool) async throws -> (any ObjectUpload)? {
            XCTFail("no writes")
            return nil
        }
        var partsInFlight: Int { 1 }
        var lastPartCompletes: Bool { false }
        func partSize(_ number: Int, of size: Int64?) -> Int { 1 << 20 }
        func updateMetadata(key: String, object: StoredObject, existing: StoredObject) async throws { XCTFail("no writes") }
    }

    func testFindsTheNamesTheDestinationHoldsAcrossPagesInByteOrder() async throws {
        // "z" < "é" in UTF-8 bytes (0x7A < 0xC3), though not as Swift orders strings by default.
        let held = ["a/1", "a/3", "b/2", "z", "é"]
        let client = ListingOnly(url: try XCTUnwrap(ObjectStoreURL("s3://bkt/p")), keys: held.map { "p/" + $0 }, pageSize: 2)
        let names = StoreCopier.DestinationNames(client)
        var found: [String] = []
        for name in ["a/0", "a/1", "a/2", "a/3", "b/1", "b/2", "c", "z", "é", "éa"] {
            if try await names.contains(name) { found.append(name) }
        }
        XCTAssertEqual(found, held)
        XCTAssertEqual(client.pagesRead.value, 3, "each page read once")
    }

    func testAnEmptyDestinationIsListedOnce() async throws {
        let client = ListingOnly(url: try XCTUnwrap(ObjectStoreURL("s3://bkt/fresh")), keys: [], pageSize: 1000)
        let names = StoreCopier.DestinationNames(client)
        for name in ["a", "b", "c"] {
            let held = try await names.contains(name)
            XCTAssertFalse(held, name)
        }
        XCTAssertEqual(client.pagesRead.value, 1)
    }
}
