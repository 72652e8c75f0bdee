import JSONStream
import TestSupport
import XCTest

@testable import DumpKit

/// `MemberSkippingSource`: byte ranges left out whatever the reads' boundaries, and the members a
/// later one of the same name replaces.
final class MemberSkippingSourceTests: XCTestCase {
    private func drain(_ source: JSONByteSource, bufferSize: Int) throws -> String {
        var out: [UInt8] = []
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bufferSize, alignment: 1)
        defer { buffer.deallocate() }
        while case let n = try source.read(into: buffer), n > 0 { out += buffer[..<n] }
        return String(decoding: out, as: UTF8.self)
    }

    func testRangesAreLeftOutAcrossEveryReadBoundary() throws {
        for chunk in 1...11 {
            for bufferSize in [1, 2, 3, 64] {
                let source = MemberSkippingSource(MemoryByteSource("0123456789", chunkSize: chunk), skipping: [0..<1, 2..<4, 5..<9])
                XCTAssertEqual(try drain(source, bufferSize: bufferSize), "149", "chunk \(chunk), buffer \(bufferSize)")
            }
        }
        XCTAssertEqual(try drain(MemberSkippingSource(MemoryByteSource("abc"), skipping: [0..<3]), bufferSize: 8), "")
    }

    func testEarlierDuplicatesAreTheMembersALaterOneReplaces() throws {
        let dir = try TemporaryDirectory()
        let text = #"{"a" : 1 ,"b":[{"a":1},{"a":2,"a":{"x":1,"x":2}}] , "a":{"a":5,"a":6},"c":1,"c":2}"#
        try Data(text.utf8).write(to: dir.url.appendingPathComponent("d.json"))
        let (ranges, members) = try MemberSkippingSource.earlierDuplicates(in: dir.path("d.json"))
        XCTAssertEqual(members, 5)
        let kept = try drain(MemberSkippingSource(MemoryByteSource(text), skipping: ranges), bufferSize: 7)
        XCTAssertEqual(kept, #"{"b":[{"a":1},{"a":{"x":2}}] , "a":{"a":6},"c":2}"#)
        XCTAssertEqual(try MemberSkippingSource.earlierDuplicates(in: dir.path("d.json")).ranges, ranges)
        try Data(#"{"a":1,"b":2}"#.utf8).write(to: dir.url.appendingPathComponent("clean.json"))
        XCTAssertEqual(try MemberSkippingSource.earlierDuplicates(in: dir.path("clean.json")).members, 0)
    }
}
