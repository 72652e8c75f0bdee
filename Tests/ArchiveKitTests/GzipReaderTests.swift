import ArchiveKit
import Foundation
import TestSupport
import XCTest

final class GzipReaderTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws {
        directory = try TemporaryDirectory()
    }

    override func tearDown() {
        directory = nil
    }

    /// Compresses `bytes` with the `gzip` command-line tool; returns the compressed bytes. With a
    /// `name`, gzip reads a file of that name and stores the name in the header.
    private func gzip(_ bytes: [UInt8], storingName name: String? = nil) throws -> [UInt8] {
        let tool = try commandLineTool(for: .gzip)
        let plain = directory.path(name ?? "plain")
        let compressed = directory.path("compressed.gz")
        try writeFile(plain, bytes)
        try shell(
            name == nil
                ? "\(tool) -c < '\(plain)' > '\(compressed)'" : "cd '\(directory.url.path)' && \(tool) -c '\(name!)' > '\(compressed)'")
        return try contents(compressed)
    }

    /// Writes `bytes` to a file and decompresses it with `GzipReader`, `bufferSize` bytes at a time.
    private func gunzip(_ bytes: [UInt8], bufferSize: Int = 1 << 20, name: String = "input.gz") throws -> [UInt8] {
        let path = directory.path(name)
        try writeFile(path, bytes)
        return try withFileDescriptor(path) { fd in try readAll(try GzipReader(fileDescriptor: fd, name: path), bufferSize: bufferSize) }
    }

    /// The error `GzipReader` throws for `bytes`, named `name`.
    private func gunzipError(
        _ bytes: [UInt8], name: String = "input.gz", file: StaticString = #filePath, line: UInt = #line
    ) -> ArchiveError? {
        archiveError(file: file, line: line) { _ = try gunzip(bytes, name: name) }
    }

    /// What `gzip -dc` makes of `bytes`: its exit status and output.
    private func gzipTool(_ bytes: [UInt8]) throws -> (status: Int32, output: [UInt8]) {
        let tool = try commandLineTool(for: .gzip)
        let input = directory.path("for-gzip.gz")
        let output = directory.path("from-gzip")
        try writeFile(input, bytes)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "\(tool) -dcq < '\(input)' > '\(output)' 2>/dev/null"]
        try process.run()
        process.waitUntilExit()
        return (process.terminationStatus, try contents(output))
    }

    // MARK: Reading what gzip wrote

    func testReadsWhatGzipWrote() throws {
        for data in [[], Array("{\"a\":1}\n".utf8), SampleBytes.text(count: 100_000), SampleBytes.mixed] {
            let compressed = try gzip(data)
            let path = directory.path("data.gz")
            try writeFile(path, compressed)
            try withFileDescriptor(path) { fd in
                let reader = try GzipReader(fileDescriptor: fd, name: path)
                XCTAssertEqual(try readAll(reader, bufferSize: 1 << 20), data, "\(data.count) bytes")
                XCTAssertEqual(reader.compressedBytesRead, Int64(compressed.count), "\(data.count) bytes")
                XCTAssertEqual(try readAll(reader, bufferSize: 1), [], "the end stays the end: \(data.count) bytes")
            }
        }
    }

    func testProgressCountsTheFirstBlockOnlyAfterInit() throws {
        let compressed = try gzip(SampleBytes.mixed)
        let path = directory.path("data.gz")
        try writeFile(path, compressed)
        try withFileDescriptor(path) { fd in
            let reader = try GzipReader(fileDescriptor: fd, name: path)
            XCTAssertEqual(reader.compressedBytesRead, 1 << 20)
        }
    }

    func testAStoredFileNameInTheHeaderIsSkipped() throws {
        let data = SampleBytes.text(count: 10_000)
        XCTAssertEqual(try gunzip(try gzip(data, storingName: "name-in-header.json")), data)
    }

    func testOddBufferSizesCrossEveryBlockBoundary() throws {
        let data = SampleBytes.random(count: 150_000, seed: 2) + SampleBytes.text(count: 150_000)
        let compressed = try gzip(data)
        for bufferSize in [1, 7, 4093, 1 << 16] {
            XCTAssertEqual(try gunzip(compressed, bufferSize: bufferSize), data, "buffers of \(bufferSize)")
        }
    }

    func testAPrefixReadByTheCallerIsServedFirst() throws {
        let compressed = try gzip(SampleBytes.mixed)
        let path = directory.path("data.gz")
        try writeFile(path, compressed)
        // Also prefixes longer than the 1 MiB block, up to the whole file.
        for length in [0, 1, 2, 6, 11, 1 << 20, (1 << 20) + 3, compressed.count] {
            try withFileDescriptor(path) { fd in
                var prefix = [UInt8](repeating: 0, count: length)
                var got = 0
                while got < length {
                    let n = prefix.withUnsafeMutableBytes { read(fd, $0.baseAddress! + got, length - got) }
                    XCTAssertGreaterThan(n, 0)
                    got += n
                }
                let reader = try GzipReader(fileDescriptor: fd, prefix: prefix, name: path)
                XCTAssertEqual(try readAll(reader, bufferSize: 65_536), SampleBytes.mixed, "prefix of \(length)")
                XCTAssertEqual(reader.compressedBytesRead, Int64(compressed.count), "prefix of \(length)")
            }
        }
    }

    func testReadsFromAPipeInSmallWrites() throws {
        let data = SampleBytes.text(count: 200_000) + SampleBytes.random(count: 100_000, seed: 6)
        let compressed = try gzip(data) + gzip(Array("tail".utf8))
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        let (readEnd, writeEnd) = (fds[0], fds[1])
        // Should the reader fail early, the writer gets EPIPE instead of killing the test run.
        signal(SIGPIPE, SIG_IGN)
        let writer = Thread {
            compressed.withUnsafeBytes { all in
                for start in stride(from: 0, to: all.count, by: 777) {
                    _ = write(writeEnd, all.baseAddress! + start, min(777, all.count - start))
                }
            }
            close(writeEnd)
        }
        writer.start()
        defer { close(readEnd) }
        let reader = try GzipReader(fileDescriptor: readEnd, prefix: [], name: "<stdin>")
        XCTAssertEqual(try readAll(reader, bufferSize: 100_000), data + Array("tail".utf8))
    }

    // MARK: Several members

    func testConcatenatedMembersReadAsOneStream() throws {
        let first = SampleBytes.text(count: 300_000)
        // Incompressible, so member boundaries fall at odd places in the 1 MiB blocks.
        let second = SampleBytes.random(count: 1_100_000, seed: 3)
        let third = Array("third".utf8)
        let compressed = try gzip(first) + gzip([]) + gzip(second) + gzip(third, storingName: "third.json")
        let expected = first + second + third
        XCTAssertEqual(try gunzip(compressed), expected)
        XCTAssertEqual(try gunzip(compressed, bufferSize: 4093), expected)
        XCTAssertEqual(try gzipTool(compressed).output, expected, "what gzip -dc makes of it")
    }

    func testManySmallMembers() throws {
        var compressed: [UInt8] = []
        var expected: [UInt8] = []
        let members = try (0..<50).map { i in try gzip(Array("{\"member\":\(i)}\n".utf8)) }
        for (i, member) in members.enumerated() {
            compressed += member
            expected += Array("{\"member\":\(i)}\n".utf8)
        }
        XCTAssertEqual(try gunzip(compressed, bufferSize: 1), expected)
        XCTAssertEqual(try gunzip(compressed), expected)
    }

    // MARK: Truncation

    func testEveryTruncationThrows() throws {
        // A stored name in the second member: cuts inside a header's variable part too.
        let first = try gzip(SampleBytes.text(count: 3_000))
        let compressed = first + (try gzip(SampleBytes.random(count: 300, seed: 7), storingName: "second.json"))
        for length in 0..<compressed.count where length != first.count {
            let error = gunzipError(Array(compressed.prefix(length)), name: "cut.gz")
            XCTAssertEqual(
                error?.description, "\(directory.path("cut.gz")): truncated gzip stream: the data ends before the compressed stream does",
                "cut at \(length) of \(compressed.count)")
        }
        // Cut between the members, the rest is a complete gzip file.
        XCTAssertEqual(try gunzip(first), SampleBytes.text(count: 3_000))
    }

    func testTruncationWithOneByteBuffersThrows() throws {
        let compressed = try gzip(SampleBytes.text(count: 50_000))
        for cut in [1, 4, 8, 9] {
            let path = directory.path("cut.gz")
            try writeFile(path, Array(compressed.dropLast(cut)))
            let error = archiveError {
                _ = try withFileDescriptor(path) { fd in try readAll(try GzipReader(fileDescriptor: fd, name: path), bufferSize: 1) }
            }
            XCTAssertEqual(error?.message.hasPrefix("truncated gzip stream"), true, "\(cut): \(String(describing: error))")
        }
    }

    func testALargeTruncatedStreamThrows() throws {
        let compressed = try gzip(SampleBytes.mixed)
        for length in [compressed.count / 2, compressed.count - 1, 1 << 20] {
            let error = gunzipError(Array(compressed.prefix(length)))
            XCTAssertEqual(error?.message.hasPrefix("truncated gzip stream"), true, "\(length): \(String(describing: error))")
        }
    }

    func testEmptyInputIsTruncated() throws {
        XCTAssertEqual(gunzipError([])?.message.hasPrefix("truncated gzip stream"), true)
    }

    // MARK: Corruption

    func testAFlippedByteInTheDataThrows() throws {
        var compressed = try gzip(SampleBytes.mixed)
        // gzip stores the random first half in stored blocks: only the CRC-32 can tell the byte changed.
        compressed[1_000_000] ^= 0x01
        XCTAssertEqual(gunzipError(compressed)?.message, "corrupt gzip stream (incorrect data check)")
        compressed[1_000_000] ^= 0x01
        // In the compressed text, inflating or the CRC-32 fails.
        compressed[compressed.count - 10_000] ^= 0x01
        let error = gunzipError(compressed)
        XCTAssertEqual(error?.message.hasPrefix("corrupt gzip stream ("), true, String(describing: error))
    }

    func testAFlippedByteInTheTrailerThrows() throws {
        let compressed = try gzip(SampleBytes.mixed)
        for offset in 1...8 {
            var bytes = compressed
            bytes[bytes.count - offset] ^= 0x20
            // The last 4 bytes are the length modulo 2^32, the 4 before them the CRC-32.
            let check = offset <= 4 ? "length" : "data"
            XCTAssertEqual(gunzipError(bytes)?.message, "corrupt gzip stream (incorrect \(check) check)", "byte \(offset) from the end")
        }
    }

    func testAFlippedByteInAnyMemberNeverGivesWrongData() throws {
        // Every byte of a small two-member file flipped in turn: the reader throws, or (a flip in the
        // header's time stamp or OS byte, which nothing checks) returns exactly the original data.
        let data = SampleBytes.text(count: 500) + SampleBytes.random(count: 200, seed: 8)
        let compressed = try gzip(data) + gzip(data)
        var thrown = 0
        for offset in compressed.indices {
            var bytes = compressed
            bytes[offset] ^= 0xFF
            do {
                // Outside XCTAssertEqual, which would record a throw as a failure.
                let output = try gunzip(bytes)
                XCTAssertEqual(output, data + data, "flipped byte \(offset) read without an error")
            } catch let error as ArchiveError {
                XCTAssertEqual(
                    error.message.hasPrefix("corrupt gzip stream (") || error.message.hasPrefix("truncated gzip stream"), true, "\(error)")
                thrown += 1
            }
        }
        // Only MTIME (4 bytes), XFL and OS (1 each) per member are unchecked.
        XCTAssertEqual(thrown, compressed.count - 2 * 6)
    }

    func testGarbageBehindGzipMagicThrows() throws {
        let garbage = SampleBytes.random(count: 10_000, seed: 4)
        XCTAssertEqual(gunzipError([0x1F, 0x8B] + garbage)?.message.hasPrefix("corrupt gzip stream ("), true)
        let header: [UInt8] = [0x1F, 0x8B, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03]
        XCTAssertEqual(gunzipError(header + garbage)?.message.hasPrefix("corrupt gzip stream ("), true)
        XCTAssertEqual(gunzipError(Array("{\"not\":\"gzip\"}".utf8))?.message, "corrupt gzip stream (incorrect header check)")
    }

    // MARK: After the last member

    func testTrailingZerosAreIgnoredLikeGzipDoes() throws {
        let data = SampleBytes.text(count: 10_000)
        let compressed = try gzip(data)
        // 2 MiB of zeros run over the next blocks.
        for zeros in [1, 2, 7, 512, 2 << 20] {
            let padded = compressed + [UInt8](repeating: 0, count: zeros)
            XCTAssertEqual(try gunzip(padded), data, "\(zeros) zeros")
            XCTAssertEqual(try gzipTool(padded).status, 0, "gzip agrees: \(zeros) zeros")
        }
    }

    func testTrailingGarbageThrowsWhereGzipWarns() throws {
        let data = SampleBytes.text(count: 10_000)
        let compressed = try gzip(data)
        let member = try gzip(Array("next".utf8))
        let cases: [(String, [UInt8], String)] = [
            ("text", Array("xyz".utf8), "corrupt gzip stream (trailing garbage at byte \(compressed.count), after the end of a member)"),
            (
                "zeros then text", [0, 0, 0x78],
                "corrupt gzip stream (trailing garbage at byte \(compressed.count + 2), after the end of a member)"
            ),
            (
                "zeros then a member", [0] + member,
                "corrupt gzip stream (trailing garbage at byte \(compressed.count + 1), after the end of a member)"
            ),
            (
                "far zeros then text", [UInt8](repeating: 0, count: 1 << 21) + [1],
                "corrupt gzip stream (trailing garbage at byte \(compressed.count + (1 << 21)), after the end of a member)"
            ),
            ("a bad second header", [0x1F, 0x8C] + Array(member.dropFirst(2)), "corrupt gzip stream (incorrect header check)"),
            ("the first magic byte", [0x1F], "truncated gzip stream: the data ends before the compressed stream does"),
        ]
        for (label, tail, message) in cases {
            XCTAssertEqual(gunzipError(compressed + tail)?.message, message, label)
            // gzip exits 2 (a warning: trailing garbage ignored) or 1 (an error); never 0.
            XCTAssertNotEqual(try gzipTool(compressed + tail).status, 0, "gzip agrees: \(label)")
        }
    }

    // MARK: Errors

    func testAFailedReadKeepsFailing() throws {
        var compressed = try gzip(SampleBytes.mixed)
        compressed[compressed.count - 6] ^= 0x01
        let path = directory.path("corrupt.gz")
        try writeFile(path, compressed)
        try withFileDescriptor(path) { fd in
            let reader = try GzipReader(fileDescriptor: fd, name: "corrupt.gz")
            let first = archiveError { _ = try readAll(reader, bufferSize: 1 << 20) }
            let second = archiveError { _ = try readAll(reader, bufferSize: 1 << 20) }
            XCTAssertEqual(first?.description, "corrupt.gz: corrupt gzip stream (incorrect data check)")
            XCTAssertEqual(first?.description, second?.description)
            XCTAssertEqual(first?.call, "inflate")
        }
    }

    func testReadErrorsNameTheFileAndTheCause() throws {
        // Reading a directory's descriptor fails with EISDIR, already when the first block is read.
        try withFileDescriptor(directory.url.path) { fd in
            let error = archiveError { _ = try GzipReader(fileDescriptor: fd, name: "somedir") }
            XCTAssertEqual(error?.description, "somedir: cannot read: Is a directory")
            XCTAssertEqual(error?.errno, EISDIR)
            XCTAssertEqual(error?.call, "read")
        }
    }
}
