import ArchiveKit
import Foundation
import TestSupport
import XCTest

final class DecompressingReaderTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws {
        directory = try TemporaryDirectory()
    }

    override func tearDown() {
        directory = nil
    }

    /// Writes `bytes` to a file and compresses it with `filter`'s command-line tool; returns the compressed path.
    private func compressWithTool(_ bytes: [UInt8], _ filter: CompressionFilter, name: String = "data") throws -> String {
        let tool = try commandLineTool(for: filter)
        let plain = directory.path(name)
        let compressed = "\(plain).\(filter.fileExtension!)"
        try writeFile(plain, bytes)
        try shell("\(tool) -c < '\(plain)' > '\(compressed)'")
        return compressed
    }

    // MARK: Reading what the command-line tools wrote

    func testReadsWhatEachToolCompressed() throws {
        for filter in compressedFilters {
            let path = try compressWithTool(SampleBytes.mixed, filter)
            try withFileDescriptor(path) { fd in
                let reader = try DecompressingReader(fileDescriptor: fd, name: path)
                XCTAssertEqual(reader.filter, filter)
                let size = Int64(try FileManager.default.attributesOfItem(atPath: path)[.size] as! Int)
                // Detection already decompressed a first block.
                XCTAssertLessThan(reader.compressedBytesRead, size, "\(filter)")
                XCTAssertEqual(try readAll(reader, bufferSize: 1 << 20), SampleBytes.mixed, "\(filter)")
                XCTAssertEqual(reader.compressedBytesRead, size, "\(filter)")
                XCTAssertEqual(try readAll(reader, bufferSize: 1), [], "the end stays the end: \(filter)")
            }
        }
    }

    func testOneByteBuffersCrossEveryBlockBoundary() throws {
        let data = SampleBytes.random(count: 150_000, seed: 2) + SampleBytes.text(count: 150_000)
        for filter in compressedFilters {
            let path = try compressWithTool(data, filter)
            XCTAssertEqual(try decompress(path, bufferSize: 1).bytes, data, "\(filter)")
            XCTAssertEqual(try decompress(path, bufferSize: 4093).bytes, data, "\(filter)")
        }
    }

    func testMultiMemberGzipReadsAsTheConcatenation() throws {
        let first = SampleBytes.text(count: 300_000)
        let second = SampleBytes.random(count: 200_000, seed: 3)
        let path = directory.path("both.gz")
        try shell("cat '\(try compressWithTool(first, .gzip, name: "a"))' '\(try compressWithTool(second, .gzip, name: "b"))' > '\(path)'")
        XCTAssertEqual(try decompress(path).bytes, first + second)
    }

    func testPlainInputReadsAsIs() throws {
        let path = directory.path("plain.json")
        try writeFile(path, SampleBytes.mixed)
        let (bytes, filter) = try decompress(path)
        XCTAssertEqual(filter, .none)
        XCTAssertEqual(bytes, SampleBytes.mixed)
    }

    func testEmptyInputsGiveNoBytes() throws {
        let path = directory.path("empty")
        try writeFile(path, [])
        XCTAssertEqual(try decompress(path).bytes, [])
        XCTAssertEqual(try decompress(path).filter, CompressionFilter.none)
        for filter in compressedFilters {
            let (bytes, detected) = try decompress(try compressWithTool([], filter))
            XCTAssertEqual(bytes, [], "\(filter)")
            XCTAssertEqual(detected, filter)
        }
    }

    // MARK: Prefix

    func testPrefixReadByTheCallerIsServedFirst() throws {
        let tiny = directory.path("tiny")
        try writeFile(tiny, [0x7B])
        let plain = directory.path("plain.json")
        try writeFile(plain, SampleBytes.mixed)
        let cases: [(String, [UInt8], CompressionFilter)] = [
            (plain, SampleBytes.mixed, .none),
            (tiny, [0x7B], .none),
            (try compressWithTool(SampleBytes.mixed, .gzip), SampleBytes.mixed, .gzip),
            (try compressWithTool(SampleBytes.mixed, .zstd), SampleBytes.mixed, .zstd),
            (try compressWithTool(SampleBytes.mixed, .xz), SampleBytes.mixed, .xz),
        ]
        for (path, expected, filter) in cases {
            try withFileDescriptor(path) { fd in
                var prefix = [UInt8](repeating: 0, count: CompressionFilter.magicLength)
                let count = prefix.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                prefix.removeLast(prefix.count - count)
                XCTAssertEqual(prefix.withUnsafeBytes { CompressionFilter.detect(magic: $0) }, filter, path)
                let reader = try DecompressingReader(fileDescriptor: fd, prefix: prefix, name: path)
                XCTAssertEqual(reader.filter, filter, path)
                XCTAssertEqual(try readAll(reader, bufferSize: 65_536), expected, path)
            }
        }
    }

    // MARK: Bad input

    func testTruncatedStreamsThrow() throws {
        for filter in compressedFilters {
            let full = try contents(try compressWithTool(SampleBytes.mixed, filter))
            let path = directory.path("cut.\(filter.fileExtension!)")
            try writeFile(path, Array(full.prefix(full.count / 2)))
            let error = archiveError { _ = try decompress(path) }
            XCTAssertEqual(error?.message.hasPrefix("truncated \(filter) stream"), true, "\(filter): \(String(describing: error))")
            XCTAssertEqual(error?.name, path)
        }
    }

    func testGzipCutInItsTrailerThrows() throws {
        // No, little and much content: the trailer is read with the first block or after many.
        for data in [[], SampleBytes.text(count: 1000), SampleBytes.mixed] {
            let full = try contents(try compressWithTool(data, .gzip))
            let path = directory.path("cut-trailer.gz")
            try writeFile(path, Array(full.dropLast(3)))
            let error = archiveError { _ = try decompress(path) }
            XCTAssertEqual(error?.description, "\(path): truncated gzip stream: the data ends before the compressed stream does")
        }
    }

    func testCorruptZstdFrameThrows() throws {
        var bytes = try contents(try compressWithTool(SampleBytes.mixed, .zstd))
        for i in bytes.count / 2..<bytes.count / 2 + 16 { bytes[i] ^= 0x5A }
        let path = directory.path("corrupt.zst")
        try writeFile(path, bytes)
        let error = archiveError { _ = try decompress(path) }
        XCTAssertEqual(error?.message.hasPrefix("corrupt zstd stream ("), true, String(describing: error))
    }

    func testGarbageBehindGzipMagicThrows() throws {
        let garbage = SampleBytes.random(count: 10_000, seed: 4)
        let path = directory.path("garbage.gz")
        // Magic bytes and then noise: libarchive's gzip bidder declines, so the raw format would pass it on.
        try writeFile(path, [0x1F, 0x8B] + garbage)
        let error = archiveError { _ = try decompress(path) }
        XCTAssertEqual(error?.description, "\(path): not a valid gzip stream, although it starts with gzip magic bytes")
        // A well-formed header and then noise: inflating fails on the first block.
        try writeFile(path, [0x1F, 0x8B, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03] + garbage)
        let second = archiveError { _ = try decompress(path) }
        XCTAssertEqual(second?.message.hasPrefix("corrupt gzip stream ("), true, String(describing: second))
    }

    func testGarbageBehindOtherMagicThrows() throws {
        let garbage = SampleBytes.random(count: 10_000, seed: 5)
        let magics: [(CompressionFilter, [UInt8])] = [
            (.zstd, [0x28, 0xB5, 0x2F, 0xFD]),
            (.xz, [0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00]),
            (.bzip2, Array("BZh9".utf8)),
        ]
        for (filter, magic) in magics {
            let path = directory.path("garbage.\(filter.fileExtension!)")
            try writeFile(path, magic + garbage)
            let error = archiveError { _ = try decompress(path) }
            XCTAssertNotNil(error, "\(filter)")
        }
    }

    func testAFailedReadKeepsFailing() throws {
        let full = try contents(try compressWithTool(SampleBytes.mixed, .zstd))
        let path = directory.path("cut.zst")
        try writeFile(path, Array(full.prefix(full.count / 2)))
        try withFileDescriptor(path) { fd in
            let reader = try DecompressingReader(fileDescriptor: fd, name: "cut.zst")
            let first = archiveError { _ = try readAll(reader, bufferSize: 1 << 20) }
            let second = archiveError { _ = try readAll(reader, bufferSize: 1 << 20) }
            XCTAssertEqual(first?.description, second?.description)
        }
    }

    func testReadErrorsNameTheFileAndTheCause() throws {
        // Reading a directory's descriptor fails with EISDIR.
        try withFileDescriptor(directory.url.path) { fd in
            let error = archiveError { _ = try DecompressingReader(fileDescriptor: fd, name: "somedir") }
            XCTAssertEqual(error?.description, "somedir: cannot read: Is a directory")
            XCTAssertEqual(error?.errno, EISDIR)
            XCTAssertEqual(error?.call, "read")
        }
    }

    func testTheDataBeforeACorruptFrameIsDeliveredBeforeTheError() throws {
        // A good frame of 300,000 bytes, then one whose compressed bytes are damaged.
        let good = SampleBytes.text(count: 300_000)
        let first = try compressWithTool(good, .zstd, name: "good")
        let second = try compressWithTool(SampleBytes.text(count: 100_000) + SampleBytes.random(count: 1000, seed: 5), .zstd, name: "bad")
        var damaged = Array(try Data(contentsOf: URL(fileURLWithPath: second)))
        for index in damaged.count / 2..<damaged.count / 2 + 16 { damaged[index] ^= 0x5A }
        let path = directory.path("two-frames.zst")
        try writeFile(path, Array(try Data(contentsOf: URL(fileURLWithPath: first))) + damaged)
        try withFileDescriptor(path) { fd in
            let reader = try DecompressingReader(fileDescriptor: fd, name: path)
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4 << 20, alignment: 1)
            defer { buffer.deallocate() }
            var delivered: [UInt8] = []
            XCTAssertThrowsError(try { while case let n = try reader.read(into: buffer), n > 0 { delivered += buffer.prefix(n) } }()) {
                XCTAssertTrue("\($0)".contains("corrupt zstd stream"), "\($0)")
            }
            // Whole blocks of the filter's output (128 KiB) come through; only the one that failed is lost.
            XCTAssertGreaterThanOrEqual(delivered.count, 2 << 17)
            XCTAssertEqual(delivered, Array(good.prefix(delivered.count)))
        }
    }
}
