import Foundation
import JSONStream
import TestSupport
import XCTest

/// JSONTestSuite's `test_parsing`: y_ accepted, n_ rejected, i_ recorded; the same result in every
/// chunking.
final class JSONTestSuiteTests: XCTestCase {
    private func cases(_ prefix: String) throws -> [(name: String, bytes: [UInt8])] {
        let dir = try TestData.directory("JSONTestSuite/test_parsing")
        return try TestData.files(in: dir, withExtension: "json")
            .filter { $0.lastPathComponent.hasPrefix(prefix) }
            .map { ($0.lastPathComponent, Array(try Data(contentsOf: $0))) }
    }

    func testAcceptsEveryYCase() throws {
        let ys = try cases("y_")
        XCTAssertEqual(ys.count, 95)
        for c in ys {
            let t = trace(MemoryByteSource(c.bytes))
            XCTAssertFalse(t.hasPrefix("ERROR"), "\(c.name): \(t)")
        }
    }

    func testRejectsEveryNCase() throws {
        let ns = try cases("n_")
        XCTAssertEqual(ns.count, 188)
        for c in ns {
            let t = trace(MemoryByteSource(c.bytes))
            XCTAssertTrue(t.hasPrefix("ERROR"), "\(c.name) was accepted: \(t)")
        }
    }

    /// i_ cases may go either way; they must end (no crash, no hang). The outcomes are recorded in
    /// docs/JSON-CONFORMANCE.md; this test pins them so a change is noticed.
    func testImplementationDefinedCasesEndAsRecorded() throws {
        let accepted: Set<String> = [
            "i_number_double_huge_neg_exp.json", "i_number_huge_exp.json", "i_number_neg_int_huge_exp.json",
            "i_number_pos_double_huge_exp.json", "i_number_real_neg_overflow.json", "i_number_real_pos_overflow.json",
            "i_number_real_underflow.json", "i_number_too_big_neg_int.json", "i_number_too_big_pos_int.json",
            "i_number_very_big_negative_int.json", "i_structure_500_nested_arrays.json",
            "i_structure_UTF-8_BOM_empty_object.json",
        ]
        let is_ = try cases("i_")
        XCTAssertEqual(is_.count, 35)
        for c in is_ {
            let t = trace(MemoryByteSource(c.bytes))
            XCTAssertEqual(!t.hasPrefix("ERROR"), accepted.contains(c.name), "\(c.name): \(t)")
        }
    }

    func testEveryChunkingGivesTheSameResult() throws {
        let all = try cases("y_") + cases("n_")
        for c in all {
            let whole = trace(MemoryByteSource(c.bytes))
            XCTAssertEqual(trace(MemoryByteSource(c.bytes, chunkSize: 1)), whole, "\(c.name) in 1-byte chunks")
            XCTAssertEqual(trace(MemoryByteSource(c.bytes), options: .init(bufferSize: 64)), whole, "\(c.name) with a 64-byte buffer")
            // Splits past where the reader stops cannot change the outcome; the two large n_ files stop
            // within their first 3 KB, so every offset up to 8 KB covers every file completely.
            for split in 0...min(c.bytes.count, 8192) {
                let t = trace(MemoryByteSource(c.bytes, splitAt: [split]))
                if t != whole {
                    XCTFail("\(c.name) split at \(split): \(t) != \(whole)")
                    break
                }
            }
        }
    }
}
