import ArchiveKit
import Foundation
import TestSupport
import XCTest

final class CompressingWriterTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws {
        directory = try TemporaryDirectory()
    }

    override func tearDown() {
        directory = nil
    }

    private func size(_ path: String) throws -> Int {
        try FileManager.default.attributesOfItem(atPath: path)[.size] as! Int
    }

    // MARK: Round trips

    func testRoundTripsThroughEachFilter() throws {
        let inputs: [(String, [UInt8])] = [("empty", []), ("one byte", [0x2A]), ("5 MB", SampleBytes.mixed)]
        for filter in CompressionFilter.allCases {
            for (label, data) in inputs {
                let path = directory.path("out-\(filter)")
                // Odd chunk sizes, so the writer sees writes that do not line up with any block.
                try compress(data, to: path, filter: filter, chunkSize: 777_777)
                let (bytes, detected) = try decompress(path)
                XCTAssertEqual(bytes, data, "\(filter), \(label)")
                XCTAssertEqual(detected, filter, "\(filter), \(label)")
            }
        }
    }

    func testRoundTripsWithTinyReadsAndWrites() throws {
        let data = SampleBytes.random(count: 70_000, seed: 6) + SampleBytes.text(count: 70_000)
        for filter in CompressionFilter.allCases {
            let path = directory.path("out-\(filter)")
            try compress(data, to: path, filter: filter, chunkSize: 1)
            XCTAssertEqual(try decompress(path, bufferSize: 1).bytes, data, "\(filter)")
        }
    }

    func testUncompressedOutputIsTheBytesThemselves() throws {
        let path = directory.path("plain.json")
        try compress(SampleBytes.mixed, to: path, filter: .none)
        XCTAssertEqual(try contents(path), SampleBytes.mixed)
    }

    func testSameInputGivesTheSameOutput() throws {
        for filter in compressedFilters {
            let first = directory.path("first"), second = directory.path("second")
            try compress(SampleBytes.text(count: 100_000), to: first, filter: filter)
            try compress(SampleBytes.text(count: 100_000), to: second, filter: filter)
            XCTAssertEqual(try contents(first), try contents(second), "\(filter)")
        }
    }

    // MARK: Interoperability

    func testEachToolDecompressesOurOutput() throws {
        for filter in compressedFilters {
            let tool = try commandLineTool(for: filter)
            let compressed = directory.path("ours.\(filter.fileExtension!)")
            let restored = directory.path("restored-\(filter)")
            try compress(SampleBytes.mixed, to: compressed, filter: filter)
            try shell("\(tool) -dc < '\(compressed)' > '\(restored)'")
            XCTAssertEqual(try contents(restored), SampleBytes.mixed, "\(filter)")
        }
    }

    // MARK: Options

    func testThreadsAreAcceptedAndTheOutputStaysStandard() throws {
        for (filter, threads) in [(CompressionFilter.zstd, 2), (.xz, 2), (.gzip, 4)] {
            let tool = try commandLineTool(for: filter)
            let compressed = directory.path("threads.\(filter.fileExtension!)")
            let restored = directory.path("restored-\(filter)")
            try compress(SampleBytes.mixed, to: compressed, filter: filter, threads: threads)
            try shell("\(tool) -dc < '\(compressed)' > '\(restored)'")
            XCTAssertEqual(try contents(restored), SampleBytes.mixed, "\(filter)")
            XCTAssertEqual(try decompress(compressed).bytes, SampleBytes.mixed, "\(filter)")
        }
    }

    func testHigherLevelCompressesSmaller() throws {
        let text = SampleBytes.text(count: 2_000_000)
        // Only zstd and gzip: on this repetitive text xz -0 and bzip2 -1 happen to beat their highest levels.
        for (filter, low, high) in [(CompressionFilter.zstd, 1, 19), (.gzip, 1, 9)] {
            let fast = directory.path("fast"), small = directory.path("small")
            try compress(text, to: fast, filter: filter, level: low)
            try compress(text, to: small, filter: filter, level: high)
            XCTAssertLessThan(try size(small), try size(fast), "\(filter)")
            XCTAssertEqual(try decompress(small).bytes, text, "\(filter)")
        }
    }

    func testInvalidOptionsThrowClearErrors() throws {
        let path = directory.path("out")
        let cases: [(CompressionFilter, Int?, Int?, String)] = [
            (.zstd, 23, nil, "zstd does not support compression level 23"),
            (.gzip, 10, nil, "gzip does not support compression level 10"),
            (.xz, -1, nil, "xz does not support compression level -1"),
            (.bzip2, 10, nil, "bzip2 does not support compression level 10"),
            (.none, 5, nil, "a compression level needs a compression filter"),
            (.zstd, nil, 0, "the number of compression threads must be at least 1, not 0"),
        ]
        for (filter, level, threads, message) in cases {
            try withFileDescriptor(path, writing: true) { fd in
                let error = archiveError {
                    _ = try CompressingWriter(
                        sink: DescriptorSink(fileDescriptor: fd, name: "out"), filter: filter, level: level, threads: threads, name: "out")
                }
                XCTAssertEqual(error?.description, "out: \(message)", "\(filter) \(String(describing: level))")
            }
        }
    }

    // MARK: Failures

    func testWriteErrorsNameTheFileAndTheCause() throws {
        // /dev/full fails every write with ENOSPC: uncompressed bytes reach it on `write`, compressed
        // ones when the filter flushes, at the latest on `finish`.
        for filter in [CompressionFilter.none, .gzip, .zstd] {
            try withFileDescriptor("/dev/full", writing: true) { fd in
                let error = archiveError {
                    let writer = try CompressingWriter(
                        sink: DescriptorSink(fileDescriptor: fd, name: "full.json"), filter: filter, name: "full.json")
                    try [UInt8](repeating: 0x41, count: 1000).withUnsafeBytes { try writer.write($0) }
                    try writer.finish()
                }
                XCTAssertEqual(error?.description, "full.json: cannot write: No space left on device", "\(filter)")
                XCTAssertEqual(error?.errno, ENOSPC)
            }
        }
    }

    func testAWriterDroppedWithoutFinishLeavesAnUnterminatedStream() throws {
        for filter in compressedFilters {
            let path = directory.path("dropped.\(filter.fileExtension!)")
            try withFileDescriptor(path, writing: true) { fd in
                // xz at its default level holds back all output for inputs this small; level 0 flushes.
                let writer = try CompressingWriter(
                    sink: DescriptorSink(fileDescriptor: fd, name: path), filter: filter, level: filter == .xz ? 0 : nil, name: path)
                try SampleBytes.mixed.withUnsafeBytes { try writer.write($0) }
            }
            XCTAssertGreaterThan(try size(path), 0, "\(filter)")
            let error = archiveError { _ = try decompress(path) }
            XCTAssertEqual(error?.message.hasPrefix("truncated \(filter) stream"), true, "\(filter): \(String(describing: error))")
        }
    }
}
