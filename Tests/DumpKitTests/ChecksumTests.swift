import CPlatform
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

    func testTheInstructionAndTheTablesAgreeAtEveryLengthAndAlignment() {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        let bytes: [UInt8] = (0..<4_200).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 56)
        }
        bytes.withUnsafeBytes { all in
            for start in 0..<9 {
                for count in [0, 1, 7, 8, 9, 15, 16, 63, 64, 65, 1_000, 4_191 - start] {
                    let piece = UnsafeRawBufferPointer(rebasing: all[start..<start + count])
                    XCTAssertEqual(
                        dk_crc32c_update(0xFFFF_FFFF, piece.baseAddress, count),
                        dk_crc32c_update_portable(0xFFFF_FFFF, piece.baseAddress, count), "start \(start), count \(count)")
                }
            }
        }
        XCTAssertEqual(dk_crc32c_update_portable(0xFFFF_FFFF, "123456789", 9) ^ 0xFFFF_FFFF, 0xE306_9283)
    }

    func testBlobMetadataRoundTrip() throws {
        let m = BlobMetadata(name: "v1/todolist/-Ka/image1.jpg", size: 3, contentType: "image/jpeg", sha256: "ab", md5: "cd==", crc32c: "ef==",
                             customMetadata: ["firebaseStorageDownloadTokens": "t-1"], cacheControl: "no-cache", updated: 1_480_000_000_000)
        XCTAssertEqual(try BlobMetadata(json: m.jsonValue), m)
        XCTAssertThrowsError(try BlobMetadata(json: .object(["name": .string("x")])))
    }
}
