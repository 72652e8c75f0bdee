import CArchive
import CZstd
import Foundation
import Workers

/// Compresses a byte stream into a sequence of independent zstd frames, on a `WorkerPool`, and writes
/// them in order to a sink; stretches announced with `storeRaw(count:)` or given with `storeRaw(_:)`
/// become raw frames instead.
///
/// Compressible bytes are cut into segments of `segmentSize` (and wherever a raw stretch begins); each
/// segment becomes one frame (with a content checksum). Frames are handed on about `handOverSize` input
/// bytes at a time: their compression is one job for a worker (several small frames to a job) while the
/// caller goes on. A raw stretch becomes frames of at most `rawFrameSize` bytes made of raw blocks,
/// without any work by libzstd. Frame boundaries depend only on the bytes and the raw stretches, never
/// on the number of threads, so the output is the same for any pool. A decoder sees the concatenated
/// frames as one stream. With worker threads, a thread of the writer's own writes the frames to the
/// sink in order, so the caller's thread only cuts and hands on; with none, everything happens on the
/// caller's thread. At most two segments per worker (2 to 8 segments, 8 to 32 MiB) wait for compression
/// or writing, beside up to `handOverSize` not yet handed on (and the rest of an array given to
/// `storeRaw(_:)`, held until its last frame is written); the caller waits beyond that. Call `finish()`
/// or `cancel()` before the sink goes. Made with `logsFrames`, it lists the frames written
/// (`writtenFrames`), for a seek table: 12 bytes a frame, so only where a table is written.
public final class ZstdFrameWriter: ArchiveSink {
    /// The most compressible bytes one frame holds.
    public static let segmentSize = 4 << 20
    /// The most bytes one raw frame holds.
    public static let rawFrameSize = 1 << 20
    /// Frames are handed on (and their compression to a worker) once they hold this many input bytes,
    /// so small frames between raw stretches are compressed many to a job.
    static let handOverSize = 1 << 20

    private let sink: ArchiveSink
    private let pool: WorkerPool
    private let contexts: ContextStore
    private let name: String
    private let queueLimit: Int
    /// The frames written so far, in order, when asked for.
    private let log: FrameLog?
    /// Compressible bytes not yet handed to a worker.
    private var segment: [UInt8] = []
    /// Bytes of the current raw stretch still to come.
    private var rawRemaining: Int64 = 0
    /// The array given to `storeRaw(_:)` for the current raw stretch: its bytes written are only counted.
    private var rawSupplied: [UInt8]?
    /// The content of the raw frame being filled from bytes written (`storeRaw(count:)`).
    private var rawContent: [UInt8] = []
    /// Frames made but not yet handed on, in order, their input bytes, and the inputs of those among
    /// them still to compress (all compressed by one job when handed on).
    private var pending: [Frame] = []
    private var pendingBytes = 0
    private var pendingInputs: [(frame: Frame, input: [UInt8])] = []
    /// Writes the frames on a thread of its own; `nil` with a pool of no threads, where frames are
    /// compressed and written by the caller when handed on.
    private let writerThread: FrameWriterThread?
    private var cancelled = false
    /// Writes to `sink`, compressing with libzstd at `level` (negative fast levels to 22) on `pool`.
    /// `name` is used in errors.
    public init(sink: ArchiveSink, level: Int, pool: WorkerPool, name: String, logsFrames: Bool = false) throws(ArchiveError) {
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
        let log = logsFrames ? FrameLog() : nil
        self.log = log
        writerThread = pool.threads > 0 ? FrameWriterThread(sink: sink, pool: pool, name: name, log: log) : nil
    }

    /// The frames written to the sink so far, in order: their sizes and content checksums (complete
    /// after `finish()`); empty unless made with `logsFrames`.
    public var writtenFrames: [ZstdSeekTable.Entry] { log?.entries ?? [] }

    deinit { writerThread?.cancel() }

    /// One frame of `bytes` compressed at `level` with a content checksum, as the writer makes them.
    public static func frame(compressing bytes: [UInt8], level: Int, name: String) throws -> [UInt8] {
        let frame = Frame(size: bytes.count, contentSize: bytes.count)
        frame.compress(bytes, with: ContextStore(level: Int32(level)))
        if let error = frame.error {
            throw ArchiveError(name: name, call: "ZSTD_compress2", status: ARCHIVE_FATAL, errno: 0, message: error)
        }
        return frame.bytes
    }

    /// Stores the next `count` bytes written as raw frames, then goes back to compressing.
    public func storeRaw(count: Int64) throws {
        try checkNotCancelled()
        precondition(rawRemaining == 0, "storeRaw while a raw stretch is still open")
        guard count > 0 else { return }
        try sealSegment()
        rawRemaining = count
    }

    /// Stores `data` as the next raw stretch without copying it: its raw frames refer to the array. The
    /// next `data.count` bytes written must be these same bytes (as an archive writer passes an entry's
    /// data on to its sink); they are only counted.
    public func storeRaw(_ data: [UInt8]) throws {
        try checkNotCancelled()
        precondition(rawRemaining == 0, "storeRaw while a raw stretch is still open")
        guard !data.isEmpty else { return }
        try sealSegment()
        rawRemaining = Int64(data.count)
        rawSupplied = data
        var start = 0
        while start < data.count {
            let end = start + min(Self.rawFrameSize, data.count - start)
            try add(Self.rawFrame(data[start..<end]))
            start = end
        }
    }

    /// A raw frame of `content` (at most `rawFrameSize` bytes): its headers and slices of the content,
    /// which is not copied.
    private static func rawFrame(_ content: ArraySlice<UInt8>) -> Frame {
        let frame = Frame(size: ZstdFrame.rawFrameSize(holding: content.count), contentSize: content.count)
        var header: [UInt8] = []
        ZstdFrame.appendRawFrameHeader(contentSize: content.count, to: &header)
        var block = content.startIndex
        while block < content.endIndex {
            let end = block + min(ZstdFrame.maximumBlockSize, content.endIndex - block)
            ZstdFrame.appendRawBlockHeader(size: end - block, last: end == content.endIndex, to: &header)
            frame.pieces += [header[...], content[block..<end]]
            header = []
            block = end
        }
        return frame
    }

    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        try checkNotCancelled()
        var rest = bytes[...]
        while !rest.isEmpty {
            if rawRemaining > 0 {
                let count = Int(min(Int64(rest.count), rawRemaining))
                if let supplied = rawSupplied {
                    assert(
                        supplied[(supplied.count - Int(rawRemaining))...].prefix(count).elementsEqual(rest.prefix(count)),
                        "the bytes written differ from those given to storeRaw(_:)")
                    rawRemaining -= Int64(count)
                    if rawRemaining == 0 { rawSupplied = nil }
                } else {
                    try appendRaw(UnsafeRawBufferPointer(rebasing: rest.prefix(count)))
                }
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
        try checkNotCancelled()
        guard rawRemaining == 0 else {
            throw ArchiveError(
                name: name, call: "ZstdFrameWriter.finish", status: ARCHIVE_FATAL, errno: 0,
                message: "a raw stretch ended \(rawRemaining) bytes early")
        }
        try sealSegment()
        try handOver()
        try writerThread?.finish()
    }

    /// Stops writing after the frame being written (if any) and drops the others; for a caller that gives
    /// up on the output, before it closes or removes the sink. Idempotent; afterwards every call throws.
    public func cancel() {
        (pending, pendingBytes, pendingInputs) = ([], 0, [])
        cancelled = true
        writerThread?.cancel()
    }

    /// Whether `cancel()` has reached the writer thread (for tests: its frame in hand is the last one).
    var cancelRequested: Bool { writerThread?.cancelRequested ?? cancelled }

    private func checkNotCancelled() throws {
        if cancelled { throw ArchiveError.cancelledFrameWriter(name) }
    }

    /// Adds bytes of the raw stretch to raw frames of `rawFrameSize` (the last one shorter), adding each
    /// frame to those pending once complete.
    private func appendRaw(_ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            let count = min(bytes.count - offset, Self.rawFrameSize - rawContent.count)
            rawContent.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count]))
            offset += count
            rawRemaining -= Int64(count)
            if rawContent.count == Self.rawFrameSize || rawRemaining == 0 {
                try add(Self.rawFrame(rawContent[...]))
                rawContent = []
            }
        }
    }

    /// Makes the compressible bytes gathered so far one frame, to be compressed.
    private func sealSegment() throws {
        guard !segment.isEmpty else { return }
        let frame = Frame(size: segment.count, contentSize: segment.count)
        pendingInputs.append((frame, segment))
        segment = []
        try add(frame)
    }

    /// Adds a frame to those pending, handing them on once they hold `handOverSize` input bytes.
    private func add(_ frame: Frame) throws {
        pending.append(frame)
        pendingBytes += frame.size
        if pendingBytes >= Self.handOverSize { try handOver() }
    }

    /// Submits the pending frames' compression as one job, then writes them or queues them for the
    /// writer thread (waiting while too much is queued).
    private func handOver() throws {
        guard !pending.isEmpty else { return }
        if !pendingInputs.isEmpty {
            let inputs = pendingInputs
            let contexts = self.contexts
            let ticket = pool.submit { for (frame, input) in inputs { frame.compress(input, with: contexts) } }
            for (frame, _) in inputs { frame.ticket = ticket }
        }
        let frames = pending
        (pending, pendingBytes, pendingInputs) = ([], 0, [])
        if let writerThread {
            try writerThread.enqueue(frames, limit: queueLimit)
        } else {
            for frame in frames {
                try frame.write(to: sink, name: name)
                log?.append(frame)
            }
        }
    }
}

/// Writes frames to the sink in order on a thread of its own, each once its compression is done, so that
/// the thread feeding the frame writer does not spend its time copying output into the kernel.
///
/// The first error (of compression or of the sink) stops the writing; it is thrown by the next `enqueue`
/// or by `finish`.
private final class FrameWriterThread: @unchecked Sendable {
    private let condition = NSCondition()
    private let sink: ArchiveSink
    private let pool: WorkerPool
    private let name: String
    /// Frames not yet written, oldest first, from `head` on (those before it are written and let go).
    private var queue: [Frame?] = []
    private var head = 0
    private var queuedBytes = 0
    private var failure: Error?
    private var closing = false
    private var cancelled = false
    private var running = true
    private let log: FrameLog?

    init(sink: ArchiveSink, pool: WorkerPool, name: String, log: FrameLog?) {
        self.sink = sink
        self.pool = pool
        self.name = name
        self.log = log
        let thread = Thread { [self] in run() }
        thread.name = "dumpkit-frame-writer"
        thread.start()
    }

    /// Queues `frames`, then waits while more than `limit` input bytes are queued.
    func enqueue(_ frames: [Frame], limit: Int) throws {
        try condition.withLock {
            if let failure { throw failure }
            queue.append(contentsOf: frames as [Frame?])
            queuedBytes += frames.reduce(0) { $0 + $1.size }
            condition.broadcast()
            while queuedBytes > limit, failure == nil, !cancelled { condition.wait() }
            if let failure { throw failure }
            if cancelled { throw ArchiveError.cancelledFrameWriter(name) }
        }
    }

    /// Waits until every queued frame is written and ends the thread.
    func finish() throws {
        try condition.withLock {
            closing = true
            condition.broadcast()
            while running { condition.wait() }
            if let failure { throw failure }
        }
    }

    var cancelRequested: Bool { condition.withLock { cancelled } }

    /// Ends the thread after the frame in hand, leaving the others unwritten.
    func cancel() {
        condition.withLock {
            cancelled = true
            condition.broadcast()
            while running { condition.wait() }
        }
    }

    /// The thread's loop: the oldest frame first, once done, until closed, cancelled or failed.
    private func run() {
        condition.lock()
        while !cancelled, failure == nil {
            guard head < queue.count, let frame = queue[head] else {
                if closing { break }
                condition.wait()
                continue
            }
            condition.unlock()
            pool.wait(for: frame.ticket)
            var error: Error?
            do {
                try frame.write(to: sink, name: name)
                log?.append(frame)
            } catch let caught { error = caught }
            condition.lock()
            if let error { failure = error }
            queue[head] = nil
            head += 1
            queuedBytes -= frame.size
            if head > 1024 && head * 2 > queue.count {
                queue.removeFirst(head)
                head = 0
            }
            condition.broadcast()
        }
        running = false
        condition.broadcast()
        condition.unlock()
    }
}

extension ArchiveError {
    /// What a call to a cancelled `ZstdFrameWriter` throws.
    fileprivate static func cancelledFrameWriter(_ name: String) -> ArchiveError {
        ArchiveError(name: name, call: "ZstdFrameWriter", status: ARCHIVE_FATAL, errno: 0, message: "the writer was cancelled")
    }
}

extension WorkerPool {
    /// Waits for the job of `ticket`; `nil` stands for work done on the spot.
    fileprivate func wait(for ticket: Ticket?) {
        if let ticket { wait(for: ticket) }
    }
}

/// One frame on its way to the sink: its bytes once compressed (or the pieces of a raw frame), or the
/// error that stopped them.
private final class Frame: @unchecked Sendable {
    /// Input bytes, for the queue's limit.
    let size: Int
    /// The bytes the frame decompresses to.
    let contentSize: Int
    var ticket: WorkerPool.Ticket?
    var bytes: [UInt8] = []
    /// Written after `bytes`: a raw frame's headers and slices of its content, in order.
    var pieces: [ArraySlice<UInt8>] = []
    var error: String?

    init(size: Int, contentSize: Int) {
        self.size = size
        self.contentSize = contentSize
    }

    /// The frame's size as written.
    var writtenSize: Int { bytes.count + pieces.reduce(0) { $0 + $1.count } }

    /// Writes the frame's bytes to `sink`, or throws the error that stopped them.
    func write(to sink: ArchiveSink, name: String) throws {
        if let error {
            throw ArchiveError(name: name, call: "ZSTD_compress2", status: ARCHIVE_FATAL, errno: 0, message: error)
        }
        if !bytes.isEmpty { try bytes.withUnsafeBytes { try sink.write($0) } }
        for piece in pieces { try piece.withUnsafeBytes { try sink.write($0) } }
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

/// The sizes and checksums of the frames written, appended by whichever thread writes them.
private final class FrameLog: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [ZstdSeekTable.Entry] = []

    func append(_ frame: Frame) {
        // A compressed frame ends with its content checksum; a raw frame has none.
        let entry =
            frame.pieces.isEmpty
            ? ZstdSeekTable.Entry(checksummedFrame: frame.bytes, decompressedSize: frame.contentSize)
            : ZstdSeekTable.Entry(compressedSize: UInt32(frame.writtenSize), decompressedSize: UInt32(frame.contentSize), checksum: nil)
        lock.withLock { list.append(entry) }
    }

    var entries: [ZstdSeekTable.Entry] { lock.withLock { list } }
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
