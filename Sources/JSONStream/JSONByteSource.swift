/// A source of bytes for `JSONReader`: a file, a decompressor, a buffer.
public protocol JSONByteSource: AnyObject {
    /// Fills up to `buffer.count` bytes and returns how many; 0 means the end of the input.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int
}

/// Serves bytes held in memory, optionally in chunks of at most `chunkSize` (to test boundaries).
public final class MemoryByteSource: JSONByteSource {
    private let bytes: ArraySlice<UInt8>
    private var position = 0
    private let chunkSize: Int
    private var splits: [Int]

    /// Serves `bytes` in reads of at most `chunkSize`, and never across any offset in `splitAt`.
    public convenience init(_ bytes: [UInt8], chunkSize: Int = .max, splitAt: [Int] = []) {
        self.init(bytes[...], chunkSize: chunkSize, splitAt: splitAt)
    }

    /// Serves part of an array without copying it (`splitAt` offsets count from the slice's start).
    public init(_ bytes: ArraySlice<UInt8>, chunkSize: Int = .max, splitAt: [Int] = []) {
        self.bytes = bytes
        self.chunkSize = max(1, chunkSize)
        self.splits = splitAt.sorted()
    }

    public convenience init(_ string: String, chunkSize: Int = .max) {
        self.init(Array(string.utf8), chunkSize: chunkSize)
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        var n = min(buffer.count, bytes.count - position, chunkSize)
        while let s = splits.first, s <= position { splits.removeFirst() }
        if let s = splits.first { n = min(n, s - position) }
        guard n > 0 else { return 0 }
        bytes.withUnsafeBytes { src in
            buffer.baseAddress!.copyMemory(from: src.baseAddress! + position, byteCount: n)
        }
        position += n
        return n
    }
}
