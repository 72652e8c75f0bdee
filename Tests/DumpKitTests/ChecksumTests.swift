import DumpKit
import JSONStream
import XCTest

final class ChecksumTests: XCTestCase {
    func testCRC32CKnownValues() {
        var c = CRC32C()
        Array("123456789".utf8).withUnsafeBytes { c.update($0) }
        XCTAssertEqual(c.value, 0xE306_9283)
        // Fed in uneven pieces, the same.
        var d = CRC32C()
        let bytes = Array("The quick brown fox jumps over the lazy dog".utf8)
        bytes.withUnsafeBytes { b in
            d.update(UnsafeRawBufferPointer(rebasing: b[0..<3]))
            d.update(UnsafeRawBufferPointer(rebasing: b[3..<20]))
            d.update(UnsafeRawBufferPointer(rebasing: b[20...]))
        }
        var e = CRC32C()
        bytes.withUnsafeBytes { e.update($0) }
        XCTAssertEqual(d.value, e.value)
        XCTAssertEqual(e.value, 0x2262_0404)
        XCTAssertEqual(CRC32C().base64, "AAAAAA==")
    }

    func testBlobMetadataRoundTrip() throws {
        let m = BlobMetadata(name: "v1/todolist/-Ka/image1.jpg", size: 3, contentType: "image/jpeg", sha256: "ab", md5: "cd==", crc32c: "ef==",
                             customMetadata: ["firebaseStorageDownloadTokens": "t-1"], cacheControl: "no-cache", updated: 1_480_000_000_000)
        XCTAssertEqual(try BlobMetadata(json: m.jsonValue), m)
        XCTAssertThrowsError(try BlobMetadata(json: .object(["name": .string("x")])))
    }
}
