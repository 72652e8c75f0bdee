import CArchive
import CZstd
import Foundation

/// Compresses a byte stream into a sequence of independent zstd frames, on a `WorkerPool`, and writes
/// them in order to a sink; stretches announced with `storeRaw(count:)` become raw frames instead.
///
/// Compressible bytes are cut into segments of `segmentSize` (and wherever a raw stretch begins); each
/// segment becomes one frame (with a content checksum), compressed by a worker while the caller goes on.
/// A raw stretch becomes frames of at most `rawFrameSize` bytes made of raw blocks, without any work by
/// libzstd. Frame boundaries depend only on the bytes and the raw stretches, never on the number of
/// threads, so the output is the same for any pool. A decoder sees the concatenated frames as one stream.
/// At most two segments per worker (2 to 8 segments, 8 to 32 MiB) wait for compression or writing; the
/// caller waits beyond that.
public final class ZstdFrameWriter: ArchiveSink {
    /// The most compressible bytes one frame holds.
    public static let segmentSize = 4 << 20
    /// The most bytes one raw frame holds.
    public static let rawFrameSize = 1 << 20

    private let sink: ArchiveSink
    private let pool: WorkerPool
    private let contexts: ContextStore
    private let name: String
    private let queueLimit: Int
    /// Compressible bytes not yet handed to a worker.
    private var segment: [UInt8] = []
    /// Bytes of the current raw stretch still to come.
    private var rawRemaining: Int64 = 0
    /// The raw frame being filled, its content bytes still to come, and those of its current block.
    private var rawFrame: [UInt8] = []
    private var rawFrameRemaining = 0
    private var rawBlockRemaining = 0
    /// Frames not yet written, oldest first, from `head` on (those before it are written and let go).
    private var queue: [Frame?] = []
    private var head = 0
    private var queuedBytes = 0

    /// Writes to `sink`, compressing with libzstd at `level` (negative fast levels to 22) on `pool`.
    /// `name` is used in errors.
    public init(sink: ArchiveSink, level: Int, pool: WorkerPool, name: String) throws(ArchiveError) {
        guard (Int(ZSTD_minCLevel())...Int(ZSTD_maxCLevel())).contains(level) else {
            throw ArchiveError(
                name: name, call: "ZSTD_c_compressionLevel", status: ARCHIVE_FATAL, errno: 0,
                message: "zstd does not support compression level \(level)")
        }
        self.sink = sink
        self.pool = pool
        self.name = name
        contexts = ContextStore(level: Int32(level))
        queueLimit = min(max(2, 2 * pool.threads), 8) * Self.segmentSize
    }

    /// One frame of `bytes` compressed at `level` with a content checksum, as the writer makes them.
    public static func frame(compressing bytes: [UInt8], level: Int, name: String) throws -> [UInt8] {
        let frame = Frame(size: bytes.count)
        frame.compress(bytes, with: ContextStore(level: Int32(level)))
        if let error = frame.error {
            throw ArchiveError(name: name, call: "ZSTD_compress2", status: ARCHIVE_FATAL, errno: 0, message: error)
        }
        return frame.bytes
    }

    /// Stores the next `count` bytes written as raw frames, then goes back to compressing.
    public func storeRaw(count: Int64) throws {
        precondition(rawRemaining == 0, "storeRaw while a raw stretch is still open")
        guard count > 0 else { return }
        try sealSegment()
        rawRemaining = count
    }

    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        var rest = bytes[...]
        while !rest.isEmpty {
            if rawRemaining > 0 {
                let count = Int(min(Int64(rest.count), rawRemaining))
                try appendRaw(UnsafeRawBufferPointer(rebasing: rest.prefix(count)))
                rest = rest.dropFirst(count)
            } else {
                let count = min(rest.count, Self.segmentSize - segment.count)
                segment.append(contentsOf: UnsafeRawBufferPointer(rebasing: rest.prefix(count)))
                rest = rest.dropFirst(count)
                if segment.count == Self.segmentSize { try sealSegment() }
            }
        }
    }

    /// Compresses what is left and writes every frame to the sink (which stays open).
    public func finish() throws {
        guard rawRemaining == 0 else {
            throw ArchiveError(
                name: name, call: "ZstdFrameWriter.finish", status: ARCHIVE_FATAL, errno: 0,
                message: "a raw stretch ended \(rawRemaining) bytes early")
        }
        try sealSegment()
        while head < queue.count {
            pool.wait(for: queue[head]!.ticket)
            try drain()
        }
    }

    /// Adds bytes of the raw stretch to raw frames, queueing each frame once complete.
    private func appendRaw(_ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            if rawFrameRemaining == 0 {
                rawFrameRemaining = Int(min(Int64(Self.rawFrameSize), rawRemaining))
                rawFrame = []
                rawFrame.reserveCapacity(ZstdFrame.rawFrameSize(holding: rawFrameRemaining))
                ZstdFrame.appendRawFrameHeader(contentSize: rawFrameRemaining, to: &rawFrame)
            }
            if rawBlockRemaining == 0 {
                rawBlockRemaining = min(ZstdFrame.maximumBlockSize, rawFrameRemaining)
                ZstdFrame.appendRawBlockHeader(size: rawBlockRemaining, last: rawBlockRemaining == rawFrameRemaining, to: &rawFrame)
            }
            let count = min(rawBlockRemaining, bytes.count - offset)
            rawFrame.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count]))
            offset += count
            rawBlockRemaining -= count
            rawFrameRemaining -= count
            rawRemaining -= Int64(count)
            if rawFrameRemaining == 0 {
                let frame = Frame(size: rawFrame.count)
                frame.bytes = rawFrame
                rawFrame = []
                try enqueue(frame, ticket: nil)
            }
        }
    }

    /// Hands the compressible bytes gathered so far to a worker as one frame.
    private func sealSegment() throws {
        guard !segment.isEmpty else { return }
        let input = segment
        segment = []
        let frame = Frame(size: input.count)
        let contexts = self.contexts
        let ticket = pool.submit { frame.compress(input, with: contexts) }
        try enqueue(frame, ticket: ticket)
    }

    /// Queues a frame, writes those that are ready, and waits while too much is queued.
    private func enqueue(_ frame: Frame, ticket: WorkerPool.Ticket?) throws {
        frame.ticket = ticket
        queue.append(frame)
        queuedBytes += frame.size
        try drain()
        while queuedBytes > queueLimit, head < queue.count {
            pool.wait(for: queue[head]!.ticket)
            try drain()
        }
    }

    /// Writes the ready frames at the head of the queue, in order.
    private func drain() throws {
        while head < queue.count, let frame = queue[head], pool.isDone(frame.ticket) {
            if let error = frame.error {
                throw ArchiveError(name: name, call: "ZSTD_compress2", status: ARCHIVE_FATAL, errno: 0, message: error)
            }
            try frame.bytes.withUnsafeBytes { try sink.write($0) }
            queuedBytes -= frame.size
            queue[head] = nil
            head += 1
        }
        if head > 1024 && head * 2 > queue.count {
            queue.removeFirst(head)
            head = 0
        }
    }
}

extension WorkerPool {
    /// Whether the job is done; `nil` stands for work done on the spot.
    fileprivate func isDone(_ ticket: Ticket?) -> Bool {
        guard let ticket else { return true }
        return isDone(ticket)
    }

    fileprivate func wait(for ticket: Ticket?) {
        if let ticket { wait(for: ticket) }
    }
}

/// One frame on its way to the sink: its bytes once made, or the error that stopped them.
private final class Frame: @unchecked Sendable {
    /// Input bytes, for the queue's limit.
    let size: Int
    var ticket: WorkerPool.Ticket?
    var bytes: [UInt8] = []
    var error: String?

    init(size: Int) {
        self.size = size
    }

    /// Compresses `input` into one frame with a context from `contexts`.
    func compress(_ input: [UInt8], with contexts: ContextStore) {
        let context = contexts.take()
        defer { contexts.give(context) }
        guard let context else {
            error = "cannot create a zstd context (out of memory)"
            return
        }
        var status = 0
        bytes = [UInt8](unsafeUninitializedCapacity: ZSTD_compressBound(input.count)) { buffer, count in
            status = input.withUnsafeBytes { ZSTD_compress2(context, buffer.baseAddress, buffer.count, $0.baseAddress, $0.count) }
            count = ZSTD_isError(status) != 0 ? 0 : status
        }
        if ZSTD_isError(status) != 0 { error = String(cString: ZSTD_getErrorName(status)) }
    }
}

/// Compression contexts shared by the workers, each used by one at a time and kept for the next job.
private final class ContextStore: @unchecked Sendable {
    private let lock = NSLock()
    private var free: [OpaquePointer] = []
    private let level: Int32

    init(level: Int32) {
        self.level = level
    }

    deinit { free.forEach { ZSTD_freeCCtx($0) } }

    /// A context set to the level, with content checksums; `nil` when out of memory.
    func take() -> OpaquePointer? {
        if let context = lock.withLock({ free.popLast() }) { return context }
        guard let context = ZSTD_createCCtx() else { return nil }
        ZSTD_CCtx_setParameter(context, ZSTD_c_compressionLevel, level)
        ZSTD_CCtx_setParameter(context, ZSTD_c_checksumFlag, 1)
        return context
    }

    func give(_ context: OpaquePointer?) {
        guard let context else { return }
        lock.withLock { free.append(context) }
    }
}
