import ArchiveKit
import JSONStream
import TestSupport
import XCTest

@testable import DumpKit

/// Seekable zstd as `OutputFile` writes it (`--seekable`) and `PositionalInput` reads it: the layout
/// (independent frames, then the seek table), any decompressed range read back, and clear errors for
/// a table or frame that does not fit the file.
final class SeekableZstdTests: XCTestCase {
    /// `bytes` written through an `OutputFile` with `seekableZstd`; the file's bytes.
    func writeSeekable(_ bytes: [UInt8], to path: String, threads: Int? = nil) throws -> [UInt8] {
        let out = try OutputFile(path: path, threads: threads, seekableZstd: true)
        try bytes.withUnsafeBytes { try out.write($0) }
        try out.commit()
        return try contents(path)
    }

    func randomText(_ count: Int, seed: UInt64) -> [UInt8] {
        var rng = SplitMix64(seed: seed)
        let words = ["\"title\":", "\"done\":true,", "{\"-K", "é", "🙂", "12345", " ", ",", "}", "\\\"", "abc"].map { Array($0.utf8) }
        var out: [UInt8] = []
        out.reserveCapacity(count)
        while out.count < count { out += words[Int(rng.next() % UInt64(words.count))] }
        return Array(out.prefix(count))
    }

    /// The table at the end of `file`, parsed, with the frame list read from the frames' own headers.
    func table(of file: [UInt8]) throws -> ZstdSeekTable {
        let footer = Array(file.suffix(ZstdSeekTable.footerSize))
        let size = try ZstdSeekTable.frameSize(footer: footer, fileSize: Int64(file.count))
        return try ZstdSeekTable(frame: Array(file.suffix(size)), fileSize: Int64(file.count), maximumFrameSize: 64 << 20)
    }

    func testFramesOfFourMiBThenTheSeekTableWhichZstdSkips() throws {
        let dir = try TemporaryDirectory()
        let frame = SeekableZstdWriter.frameSize
        for (count, threads) in [(3 * frame + 12345, nil), (2 * frame, 2), (100, nil)] as [(Int, Int?)] {
            let bytes = randomText(count, seed: UInt64(count))
            let path = dir.path("out-\(count).json.zst")
            let file = try writeSeekable(bytes, to: path, threads: threads)
            let table = try table(of: file)
            let expected = stride(from: 0, to: count, by: frame).map { min(frame, count - $0) }
            XCTAssertEqual(table.entries.map { Int($0.decompressedSize) }, expected, "\(count) bytes")
            XCTAssertTrue(table.hasChecksums)
            XCTAssertEqual(table.decompressedSize, Int64(count))
            // The frames as their headers list them: one compressed frame per entry, then the table.
            let frames = try ZstdFrameList(file).frames
            XCTAssertEqual(frames.dropLast().map(\.size), table.entries.map { Int($0.compressedSize) })
            XCTAssertEqual(frames.last?.kind, .skippable)
            XCTAssertEqual(frames.last?.size, table.frameSize)
            XCTAssertEqual(try Shell.runData("zstd", ["-d", "-c", path]), Data(bytes), "zstd -d reads \(count) bytes back")
        }
    }

    func testAnEmptyOutputIsOneEmptyFrameAndATable() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("empty.json.zst")
        let file = try writeSeekable([], to: path)
        let table = try table(of: file)
        XCTAssertEqual(table.entries.count, 1)
        XCTAssertEqual(table.entries[0].decompressedSize, 0)
        XCTAssertEqual(try Shell.runData("zstd", ["-d", "-c", path]), Data())
        let opened = try PositionalInput.open(path)
        XCTAssertEqual(opened.size, 0)
        var buffer = [UInt8](repeating: 0, count: 16)
        XCTAssertEqual(try buffer.withUnsafeMutableBytes { try opened.source.read(at: 0, into: $0) }, 0)
    }

    func testReadsAtAnyOffsetGiveTheDecompressedBytes() throws {
        let dir = try TemporaryDirectory()
        let frame = SeekableZstdWriter.frameSize
        let bytes = randomText(3 * frame + 777, seed: 9)
        let data = Data(bytes)
        let path = dir.path("dump.json.zst")
        _ = try writeSeekable(bytes, to: path)
        let opened = try PositionalInput.open(path)
        XCTAssertEqual(opened.size, Int64(bytes.count))
        XCTAssertNil(opened.version)
        var rng = SplitMix64(seed: 4)
        for _ in 0..<60 {
            let offset = Int(rng.next() % UInt64(bytes.count + 10))
            let count = Int(rng.next() % UInt64(3 * frame))
            var buffer = [UInt8](repeating: 0, count: count)
            let n = try buffer.withUnsafeMutableBytes { try opened.source.read(at: Int64(offset), into: $0) }
            // One frame at a time: up to the end of the frame holding `offset`.
            let frameEnd = (offset / frame + 1) * frame
            XCTAssertEqual(n, max(0, min(count, frameEnd - offset, bytes.count - offset)), "\(count) bytes at \(offset)")
            XCTAssertTrue(Data(buffer.prefix(n)) == data[min(offset, bytes.count)...].prefix(n), "\(count) bytes at \(offset)")
        }
        // Front to back through a stream: the whole dump.
        let stream = opened.source.stream()
        var all = Data()
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = try chunk.withUnsafeMutableBytes { try stream.read(into: $0) }
            if n == 0 { break }
            all.append(contentsOf: chunk.prefix(n))
        }
        XCTAssertTrue(all == data, "the stream gives the whole dump")
    }

    /// The error `PositionalInput.open` (and a read of every byte) gives for `file`.
    func openError(_ file: [UInt8], in dir: TemporaryDirectory) throws -> Error? {
        let path = dir.path("bad-\(UUID().uuidString).json.zst")
        try writeFile(path, file)
        do {
            let opened = try PositionalInput.open(path)
            var buffer = [UInt8](repeating: 0, count: 1 << 20)
            var at: Int64 = 0
            while true {
                let n = try buffer.withUnsafeMutableBytes { try opened.source.read(at: at, into: $0) }
                if n == 0 { return nil }
                at += Int64(n)
            }
        } catch {
            return error
        }
    }

    func testACorruptTableOrFrameIsADataErrorNamingWhere() throws {
        let dir = try TemporaryDirectory()
        let good = try writeSeekable(randomText(3 * SeekableZstdWriter.frameSize, seed: 2), to: dir.path("good.json.zst"))
        let table = try table(of: good)
        let tableStart = good.count - table.frameSize
        func expect(_ file: [UInt8], _ message: String, line: UInt = #line) throws {
            let error = try openError(file, in: dir)
            XCTAssertTrue(error is SeekableZstdError, "\(String(describing: error))", line: line)
            XCTAssertTrue("\(error.map { "\($0)" } ?? "no error")".contains(message), "\(String(describing: error))", line: line)
        }
        var bad = good
        bad[tableStart] ^= 0xFF
        try expect(bad, "does not start with the skippable frame magic")
        bad = good
        bad[tableStart + 8] &+= 1  // the first frame's compressed size
        try expect(bad, "add up to")
        bad = good
        bad[tableStart + 8...tableStart + 11] = [0, 0, 0, 0]
        try expect(bad, "frame 0 of the seek table (byte \(tableStart + 8)) has a compressed size of 0")
        bad = good
        bad[good.count - 5] |= 0x04  // a reserved bit of the descriptor
        try expect(bad, "reserved bits")
        bad = good
        bad[good.count - 9..<good.count - 5] = [0xFF, 0xFF, 0xFF, 0x07]  // the number of frames
        try expect(bad, "larger than the file")
        // Cut: the footer is gone, so the file is plain zstd, refused as such.
        let cut = try openError(Array(good.prefix(good.count - 3)), in: dir)
        XCTAssertTrue("\(cut.map { "\($0)" } ?? "")".contains("without a seek table"), String(describing: cut))
        // A byte of the second frame changed: that frame cannot be decompressed.
        bad = good
        let second = Int(table.compressedStarts[1])
        bad[second + Int(table.entries[1].compressedSize) / 2] ^= 0x55
        try expect(bad, "frame 1 (bytes \(second)..<\(second + Int(table.entries[1].compressedSize))) cannot be decompressed")
    }

    func testOtherCompressionsAreRefusedWithTheWayToAShardableCopy() throws {
        let dir = try TemporaryDirectory()
        let plain = dir.path("dump.json")
        try writeFile(plain, Array("{\"a\":1}".utf8))
        _ = try Shell.run("zstd", ["-q", "-k", plain])
        _ = try Shell.run("gzip", ["-k", plain])
        for path in [plain + ".zst", plain + ".gz"] {
            XCTAssertThrowsError(try PositionalInput.open(path)) { error in
                XCTAssertTrue(error is UsageError)
                XCTAssertTrue("\(error)".contains("dumpkit convert \(path) -o DUMP.json.zst --seekable"), "\(error)")
            }
        }
    }

    func testSeekableNeedsAZstdOutput() throws {
        let dir = try TemporaryDirectory()
        for path in [dir.path("out.json"), dir.path("out.json.gz"), "-"] {
            XCTAssertThrowsError(try OutputFile(path: path, seekableZstd: true)) { error in
                XCTAssertTrue(error is UsageError)
                XCTAssertTrue("\(error)".contains("give an output whose name ends in .zst"), "\(error)")
            }
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.url.path), [], "no temporary file left")
    }

    /// An index's version of a bucket object: recorded, and compared only when both sides have one.
    func testAnIndexRefusesAnotherVersionOfItsObject() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("dump.json")
        try writeFile(path, Array("{\"a\":1}".utf8))
        var trailer = DumpIndex.Trailer(
            size: 7, sha256: "x", units: 1, unitBytes: 1, runBytes: 1, records: [], end: "}", endCRC: 0, hasPieces: false,
            objectVersion: "ETag abc")
        let parsed = try DumpIndex.Trailer(json: trailer.json(), file: "i")
        XCTAssertEqual(parsed, trailer)
        var opened = try PositionalInput.open(path)
        XCTAssertNoThrow(try trailer.checkVersion(of: opened, location: path), "a local copy is left to the checksums")
        opened.version = "ETag abc"
        XCTAssertNoThrow(try trailer.checkVersion(of: opened, location: "s3://b/k"))
        opened.version = "ETag def"
        XCTAssertThrowsError(try trailer.checkVersion(of: opened, location: "s3://b/k")) { error in
            XCTAssertTrue(error is DataError)
            XCTAssertEqual(
                "\(error)", "s3://b/k changed since it was indexed (ETag def, index says ETag abc): run dumpkit index again")
        }
        trailer.objectVersion = nil
        XCTAssertNoThrow(try trailer.checkVersion(of: opened, location: "s3://b/k"), "an older index without a version")
        XCTAssertNil(try DumpIndex.Trailer(json: trailer.json(), file: "i").objectVersion)
    }
}
