import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Decompresses a stream on a thread of its own into a few blocks that the caller takes in turn, so
/// decompression overlaps whatever the caller does with the data (parsing, hashing, writing files).
///
/// One producer (the decompressing thread) and one consumer: the block `next()` returned stays valid
/// until the following call, which hands it back for refilling. The `DecompressingReader` lives and dies
/// on the producer's thread. Errors reach the consumer when it gets to the point where they happened.
final class ReadAheadDecompressor: @unchecked Sendable {
    private static let blockSize = 1 << 20
    private static let blockCount = 4

    /// The compression the stream starts with, once the producer opened it.
    var filter: CompressionFilter { shared.withLock { $0.detectedFilter } }
    /// Compressed bytes the producer consumed so far.
    var compressedBytesRead: Int64 { shared.withLock { $0.consumed } }
    /// The error that ended the stream early, once the consumer reached it.
    private(set) var failure: ArchiveError?

    private let blocks: [UnsafeMutableRawBufferPointer]
    /// Signalled once per block at the start rather than created with a count: libdispatch traps when a
    /// semaphore is freed below its initial value, as this one is when the consumer stops early.
    private let free = DispatchSemaphore(value: 0)
    private let filled = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    /// What the producer and the consumer share.
    private struct Shared {
        /// Bytes in each filled block: 0 marks the end of the stream, -1 an error.
        var counts = Array(repeating: 0, count: ReadAheadDecompressor.blockCount)
        var stopped = false
        var detectedFilter: CompressionFilter = .none
        var consumed: Int64 = 0
        var producerError: ArchiveError?
    }

    private let shared = Mutex(Shared())
    private var consumerIndex = 0
    private var holdsBlock = false
    /// Set once the consumer took the end of the stream or the error: later calls answer at once.
    private var ended = false

    /// Starts decompressing from `fileDescriptor` (not closed here), after serving `prefix`, the bytes the
    /// caller already read from it; `name` is used in errors.
    init(fileDescriptor: Int32, prefix: [UInt8], name: String) {
        blocks = (0..<Self.blockCount).map { _ in .allocate(byteCount: Self.blockSize, alignment: 16) }
        for _ in 0..<Self.blockCount { free.signal() }
        DispatchQueue.global().async { [self] in
            produce(fileDescriptor: fileDescriptor, prefix: prefix, name: name)
            finished.signal()
        }
    }

    deinit {
        blocks.forEach { $0.deallocate() }
    }

    /// Stops the producer and waits for it; must be called before the descriptor is closed.
    func stop() {
        shared.withLock { $0.stopped = true }
        for _ in 0..<Self.blockCount { free.signal() }
        finished.wait()
    }

    /// The next block of decompressed data; empty at the end of the stream, `nil` after an error (see `failure`).
    func next() -> UnsafeRawBufferPointer? {
        if ended { return failure == nil ? UnsafeRawBufferPointer(start: nil, count: 0) : nil }
        if holdsBlock {
            holdsBlock = false
            consumerIndex += 1
            free.signal()
        }
        filled.wait()
        let slot = consumerIndex % Self.blockCount
        let (count, producerError) = shared.withLock { ($0.counts[slot], $0.producerError) }
        if count < 0 {
            failure = producerError
            ended = true
            return nil
        }
        holdsBlock = count > 0
        ended = count == 0
        return UnsafeRawBufferPointer(rebasing: blocks[slot][..<count])
    }

    /// The producer: fills free blocks until the end of the stream, an error, or `stop()`.
    private func produce(fileDescriptor: Int32, prefix: [UInt8], name: String) {
        let reader: DecompressingReader
        do {
            reader = try DecompressingReader(fileDescriptor: fileDescriptor, prefix: prefix, name: name)
        } catch {
            publish(count: -1, at: 0, error: error)
            return
        }
        shared.withLock { $0.detectedFilter = reader.filter }
        var index = 0
        while true {
            free.wait()
            if shared.withLock({ $0.stopped }) { return }
            let slot = index % Self.blockCount
            var count = 0
            do {
                // Fill the block, so the consumer sees few large blocks.
                while count < Self.blockSize {
                    let n = try reader.read(into: UnsafeMutableRawBufferPointer(rebasing: blocks[slot][count...]))
                    if n == 0 { break }
                    count += n
                }
            } catch {
                if count > 0 {
                    publish(count: count, at: slot, error: nil)
                    free.wait()
                    index += 1
                }
                publish(count: -1, at: index % Self.blockCount, error: error)
                return
            }
            shared.withLock { $0.consumed = reader.compressedBytesRead }
            publish(count: count, at: slot, error: nil)
            if count == 0 { return }
            index += 1
        }
    }

    private func publish(count: Int, at slot: Int, error: ArchiveError?) {
        shared.withLock { shared in
            shared.counts[slot] = count
            if let error { shared.producerError = error }
        }
        filled.signal()
    }
}
