import CZstd
import Foundation
import TestSupport
import Workers
import XCTest

@testable import ArchiveKit

/// Raw and skippable frames written by hand, and the frame writer, decoded by libzstd and the `zstd` tool.
final class ZstdFrameWriterTests: XCTestCase {
    private final class MemorySink: ArchiveSink {
        var bytes: [UInt8] = []
        func write(_ bytes: UnsafeRawBufferPointer) throws { self.bytes += bytes }
    }

    /// A sink that fails from its `failAt`-th write on (as a full disk does), counting the writes tried.
    private final class FailingSink: ArchiveSink, @unchecked Sendable {
        struct Full: Error {}
        let failAt: Int
        private let lock = NSLock()
        private var tried = 0
        var writes: Int { lock.withLock { tried } }
        init(failAt: Int) { self.failAt = failAt }
        func write(_ bytes: UnsafeRawBufferPointer) throws {
            let count = lock.withLock {
                tried += 1
                return tried
            }
            if count >= failAt { throw Full() }
        }
    }

    /// A sink whose first write waits for `gate`, counting the writes.
    private final class GateSink: ArchiveSink, @unchecked Sendable {
        let gate = DispatchSemaphore(value: 0)
        /// Signalled when the first write has begun.
        let entered = DispatchSemaphore(value: 0)
        private let lock = NSLock()
        private var count = 0
        var writes: Int { lock.withLock { count } }
        func write(_ bytes: UnsafeRawBufferPointer) throws {
            if lock.withLock({ () -> Int in
                count += 1
                return count
            }) == 1 {
                entered.signal()
                gate.wait()
            }
        }
    }

    /// Deterministic bytes that do not compress.
    private func noise(_ count: Int, seed: UInt64) -> [UInt8] {
        var state = seed
        return (0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 33)
        }
    }

    /// libzstd's one-shot decoder over every frame of `bytes`.
    private func decompress(_ bytes: [UInt8], expecting count: Int) throws -> [UInt8] {
        var status = 0
        let out = [UInt8](unsafeUninitializedCapacity: count + 1) { buffer, initialized in
            status = bytes.withUnsafeBytes { ZSTD_decompress(buffer.baseAddress, buffer.count, $0.baseAddress, $0.count) }
            initialized = ZSTD_isError(status) != 0 ? 0 : status
        }
        if ZSTD_isError(status) != 0 { XCTFail("ZSTD_decompress: \(String(cString: ZSTD_getErrorName(status)))") }
        return out
    }

    /// The `zstd` tool's decoding of `bytes`.
    private func zstdTool(_ bytes: [UInt8]) throws -> [UInt8] {
        Array(try Shell.runData("zstd", ["-d", "-c", "-q"], stdin: Data(bytes)))
    }

    /// A raw frame of `data`, as the writer stores a raw stretch of at most one frame.
    private func rawFrame(_ data: [UInt8]) throws -> [UInt8] {
        let pool = WorkerPool(threads: 0)
        let sink = MemorySink()
        let writer = try ZstdFrameWriter(sink: sink, level: 3, pool: pool, name: "raw")
        try writer.storeRaw(count: Int64(data.count))
        try data.withUnsafeBytes { try writer.write($0) }
        try writer.finish()
        return sink.bytes
    }

    func testRawFramesDecodeAtEverySizeBoundary() throws {
        let block = ZstdFrame.maximumBlockSize
        for count in [1, 255, 256, 65_791, 65_792, block - 1, block, block + 1, 2 * block, 300_000] {
            let data = noise(count, seed: UInt64(count))
            let frame = try rawFrame(data)
            XCTAssertEqual(frame.count, ZstdFrame.rawFrameSize(holding: count), "\(count)")
            let content = frame.withUnsafeBytes { ZSTD_getFrameContentSize($0.baseAddress, $0.count) }
            XCTAssertEqual(content, UInt64(count))
            XCTAssertEqual(try decompress(frame, expecting: count), data, "\(count)")
            XCTAssertEqual(try zstdTool(frame), data, "\(count)")
            let listed = try ZstdFrameList(frame).frames
            XCTAssertEqual(listed.map(\.kind), [.raw])
            XCTAssertEqual(listed.first?.blockSizes.reduce(0, +), count)
            XCTAssertTrue(listed.first?.blockSizes.allSatisfy { $0 <= block } ?? false)
        }
    }

    func testASkippableFrameIsSkippedByDecoders() throws {
        let data = Array("after the skippable frame\n".utf8)
        let stream = ZstdFrame.skippableHeader(payloadSize: 100) + [UInt8](repeating: 0, count: 100) + (try rawFrame(data))
        XCTAssertEqual(try ZstdFrameList(stream).frames.map(\.kind), [.skippable, .raw])
        XCTAssertEqual(try decompress(stream, expecting: data.count), data)
        XCTAssertEqual(try zstdTool(stream), data)
    }

    /// Text, a raw stretch, text: the stream decodes to the same bytes and has the same frames on any pool.
    func testTheWriterCompressesTextStoresRawStretchesAndIgnoresThreadCount() throws {
        let text = Array(String(repeating: "{\"title\": \"buy milk\", \"done\": false}\n", count: 200_000).utf8)
        let raw = noise(ZstdFrame.maximumBlockSize * 9 + 1, seed: 7)
        var outputs: [[UInt8]] = []
        for threads in [0, 1, 3] {
            let pool = WorkerPool(threads: threads)
            defer { pool.stop() }
            let sink = MemorySink()
            let writer = try ZstdFrameWriter(sink: sink, level: 3, pool: pool, name: "test")
            // Written in pieces that do not line up with segments or blocks.
            for piece in stride(from: 0, to: text.count, by: 100_003) {
                try text[piece..<min(piece + 100_003, text.count)].withUnsafeBytes { try writer.write($0) }
            }
            try writer.storeRaw(count: Int64(raw.count))
            for piece in stride(from: 0, to: raw.count, by: 70_001) {
                try raw[piece..<min(piece + 70_001, raw.count)].withUnsafeBytes { try writer.write($0) }
            }
            try text.prefix(1000).withUnsafeBytes { try writer.write($0) }
            try writer.finish()
            outputs.append(sink.bytes)
        }
        XCTAssertEqual(outputs[0], outputs[1])
        XCTAssertEqual(outputs[0], outputs[2])
        let expected = text + raw + text.prefix(1000)
        XCTAssertEqual(try decompress(outputs[0], expecting: expected.count), expected)
        XCTAssertEqual(try zstdTool(outputs[0]), expected)
        let frames = try ZstdFrameList(outputs[0]).frames
        // 7.6 MB of text in two segments, the raw stretch in frames of at most 1 MiB, then the last text.
        XCTAssertEqual(frames.map(\.kind), [.compressed, .compressed] + Array(repeating: .raw, count: 2) + [.compressed])
        XCTAssertEqual(
            frames.filter { $0.kind == .raw }.compactMap(\.contentSize),
            [ZstdFrameWriter.rawFrameSize, raw.count - ZstdFrameWriter.rawFrameSize])
        XCTAssertLessThan(outputs[0].count, raw.count + text.count / 20)
    }

    func testARawStretchCutShortIsAnError() throws {
        let pool = WorkerPool(threads: 0)
        let writer = try ZstdFrameWriter(sink: MemorySink(), level: 3, pool: pool, name: "short.zst")
        try writer.storeRaw(count: 10)
        try [UInt8]([1, 2, 3]).withUnsafeBytes { try writer.write($0) }
        XCTAssertThrowsError(try writer.finish()) { error in
            XCTAssertTrue("\(error)".contains("a raw stretch ended 7 bytes early"), "\(error)")
        }
        XCTAssertThrowsError(try ZstdFrameWriter(sink: MemorySink(), level: 99, pool: pool, name: "x")) { error in
            XCTAssertTrue("\(error)".contains("zstd does not support compression level 99"), "\(error)")
        }
    }

    /// Raw data given as an array (no copy) makes the same stream as the same bytes copied in, on any pool.
    func testRawDataGivenAsAnArrayMakesTheSameFramesAsCopiedBytes() throws {
        let text = Array(String(repeating: "{\"name\": \"a.jpg\"}\n", count: 50_000).utf8)
        let raws = [noise(1, seed: 1), noise(ZstdFrame.maximumBlockSize, seed: 2), noise(ZstdFrameWriter.rawFrameSize * 2 + 5, seed: 3)]
        var outputs: [[UInt8]] = []
        for (threads, given) in [(0, false), (0, true), (1, true), (3, true), (3, false)] {
            let pool = WorkerPool(threads: threads)
            defer { pool.stop() }
            let sink = MemorySink()
            let writer = try ZstdFrameWriter(sink: sink, level: 3, pool: pool, name: "given")
            for raw in raws {
                try text.prefix(70_001).withUnsafeBytes { try writer.write($0) }
                if given { try writer.storeRaw(raw) } else { try writer.storeRaw(count: Int64(raw.count)) }
                // The bytes pass through as an archive writer hands them on, in pieces.
                for piece in stride(from: 0, to: raw.count, by: 50_000) {
                    try raw[piece..<min(piece + 50_000, raw.count)].withUnsafeBytes { try writer.write($0) }
                }
            }
            try writer.finish()
            outputs.append(sink.bytes)
        }
        for output in outputs.dropFirst() { XCTAssertEqual(output, outputs[0]) }
        let expected = raws.flatMap { Array(text.prefix(70_001)) + $0 }
        XCTAssertEqual(try decompress(outputs[0], expecting: expected.count), expected)
        XCTAssertEqual(try zstdTool(outputs[0]), expected)
    }

    /// A sink that fails stops the writer thread; the error comes out of a later call, and nothing hangs.
    func testASinkErrorOnTheWriterThreadIsThrownToTheCaller() throws {
        let pool = WorkerPool(threads: 2)
        defer { pool.stop() }
        let sink = FailingSink(failAt: 3)
        let writer = try ZstdFrameWriter(sink: sink, level: 3, pool: pool, name: "full.zst")
        let raw = noise(64 << 10, seed: 9)
        var thrown: Error?
        do {
            for _ in 0..<2_000 {
                try writer.storeRaw(raw)
                try raw.withUnsafeBytes { try writer.write($0) }
            }
            try writer.finish()
        } catch {
            thrown = error
        }
        XCTAssertTrue(thrown is FailingSink.Full, "\(String(describing: thrown))")
        // The thread stopped at the failing write: no write was tried after it.
        XCTAssertEqual(sink.writes, 3)
    }

    /// `cancel` ends the writer thread after the frame in hand; the frames still queued are never written.
    func testCancelStopsWritingQueuedFrames() throws {
        let pool = WorkerPool(threads: 2)
        defer { pool.stop() }
        let sink = GateSink()
        let writer = try ZstdFrameWriter(sink: sink, level: 1, pool: pool, name: "cancelled.zst")
        let text = Array(String(repeating: "{\"title\": \"buy milk\", \"done\": false}\n", count: 400_000).utf8)
        // Three whole segments: three frames queued, the first held up in the sink.
        try text.prefix(3 * ZstdFrameWriter.segmentSize).withUnsafeBytes { try writer.write($0) }
        XCTAssertEqual(sink.entered.wait(timeout: .now() + 30), .success)
        let cancelled = DispatchSemaphore(value: 0)
        // Only `cancel` is called on the other thread (the caller waits), which is what it is for.
        nonisolated(unsafe) let cancelling = writer
        Thread {
            cancelling.cancel()
            cancelled.signal()
        }.start()
        // The first frame is let through only once the cancel has reached the writer thread.
        let deadline = Date().addingTimeInterval(30)
        while !writer.cancelRequested && Date() < deadline { Thread.sleep(forTimeInterval: 0.001) }
        sink.gate.signal()
        XCTAssertEqual(cancelled.wait(timeout: .now() + 30), .success)
        pool.stop()
        XCTAssertEqual(sink.writes, 1)
        XCTAssertThrowsError(try writer.finish()) { error in
            XCTAssertTrue("\(error)".contains("cancelled"), "\(error)")
        }
    }
}
