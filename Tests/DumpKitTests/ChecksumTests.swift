import CPlatform
import Crypto
import JSONStream
import XCTest

@testable import DumpKit

final class ChecksumTests: XCTestCase {
    /// Base64 written straight into a string after a prefix is Foundation's base64, for every
    /// length of the last group.
    func testBase64EncodedAfterAPrefixIsFoundationsBase64() {
        for n in 0..<70 {
            let bytes = (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 151 &+ 7) }
            let expected = Data(bytes).base64EncodedString()
            XCTAssertEqual(
                bytes.withUnsafeBytes { Base64.encode($0, after: "data:image/png;base64,") }, "data:image/png;base64," + expected)
            XCTAssertEqual(bytes.withUnsafeBytes { Base64.encode($0, after: "") }, expected)
        }
    }

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

    /// Deterministic bytes: `count` of them, from `seed`.
    private static func noise(_ count: Int, seed: UInt64) -> [UInt8] {
        var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        return (0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 56)
        }
    }

    func testBatchedMD5MatchesOneAtATimeAtEveryPaddingLength() {
        // 0 ... 300 bytes: one and two final blocks, lengths at 55, 56, 63, 64, 119, 120 and so on.
        let messages = (0...300).map { Self.noise($0, seed: UInt64($0)) }
        let digests = MD5Batch.digests(of: messages)
        XCTAssertEqual(digests.count, messages.count)
        for (message, digest) in zip(messages, digests) {
            XCTAssertEqual(digest, Array(Insecure.MD5.hash(data: message)), "length \(message.count)")
        }
        let known = MD5Batch.digests(of: [[], Array("abc".utf8), Array("message digest".utf8)])
        XCTAssertEqual(
            known.map { Hex.lowercase($0) },
            ["d41d8cd98f00b204e9800998ecf8427e", "900150983cd24fb0d6963f7d28e17f72", "f96b697d7cb7938d525a2f31aaf161d0"])
        XCTAssertEqual(
            MD5Batch.digests(of: [Array("abc".utf8)]), [Array(Insecure.MD5.hash(data: Array("abc".utf8)))], "below minimumForLanes")
        XCTAssertEqual(MD5Batch.digests(of: [[UInt8]]()), [])
    }

    func testBatchedMD5KeepsTheOrderWhenLanesFinishAtDifferentTimes() {
        // Lengths far apart, a 3 MiB message in the middle and empty ones: lanes take new messages
        // while others are still running, and the digests still come back in the callers' order.
        var messages = (0..<45).map { Self.noise(($0 * 7_919) % 200_000, seed: UInt64(1_000 + $0)) }
        messages.insert(Self.noise(3 << 20, seed: 7), at: 20)
        messages.insert([], at: 3)
        let digests = MD5Batch.digests(of: messages)
        for (index, (message, digest)) in zip(messages, digests).enumerated() {
            XCTAssertEqual(digest, Array(Insecure.MD5.hash(data: message)), "message \(index), \(message.count) bytes")
        }
    }

    func testTheVectorPathRunsWhereTheCPUHasIt() {
        let message = Array("The quick brown fox jumps over the lazy dog".utf8)
        var digest = [UInt8](repeating: 0, count: 16)
        let ran = message.withUnsafeBytes { bytes in
            digest.withUnsafeMutableBufferPointer { out in dk_md5_many([bytes.baseAddress], [bytes.count], 1, out.baseAddress) }
        }
        XCTAssertEqual(ran, dk_md5_many_available(), "dk_md5_many runs exactly where it says it can")
        if ran == 1 { XCTAssertEqual(Hex.lowercase(digest), "9e107d9d372bb6826bd81d3542a419d6") }
    }

    func testBlobMetadataRoundTrip() throws {
        let m = BlobMetadata(
            name: "v1/todolist/-Ka/image1.jpg", size: 3, contentType: "image/jpeg", sha256: "ab", md5: "cd==", crc32c: "ef==",
            customMetadata: ["firebaseStorageDownloadTokens": "t-1"], cacheControl: "no-cache", updated: 1_480_000_000_000)
        XCTAssertEqual(try BlobMetadata(json: m.jsonValue), m)
        XCTAssertThrowsError(try BlobMetadata(json: .object(["name": .string("x")])))
    }
}
