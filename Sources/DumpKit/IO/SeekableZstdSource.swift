import ArchiveKit
import JSONStream

/// A seekable zstd file (`dumpkit convert --seekable`, or any file in zstd's seekable format) read
/// at any offset of its decompressed bytes: a read finds the frame holding its offset in the seek
/// table (bisection) and decompresses that frame alone, so a shard decompresses only the frames of
/// its ranges. The frames read last are kept (up to `cacheBytes`), so reads going front to back,
/// and the index pass's checksum reads just behind them, decompress each frame once, except where a
/// unit is longer than the frames kept: its checksum read decompresses its frames again. Memory: a
/// frame's compressed bytes and the frames kept.
package final class SeekableZstdSource: PositionalByteSource {
    /// The largest frame read (decompressed): the memory a read may need. DumpKit writes 4 MiB.
    static let maximumFrameSize = 64 << 20
    /// How many decompressed bytes of recent frames are kept (at least the last frame).
    static let cacheBytes = 8 << 20

    package let name: String
    package let table: ZstdSeekTable
    private let file: PositionalByteSource
    private let decoder: ZstdFrameDecoder
    /// Recently decompressed frames, the most recent last.
    private var cache: [(number: Int, bytes: [UInt8])] = []
    private var cachedBytes = 0
    /// Buffers kept for the next frame (a frame's compressed bytes, the last frame let go), so that
    /// reading frame after frame does not map fresh memory for each.
    private var compressed: [UInt8] = []
    private var spare: [UInt8] = []

    /// The decompressed size.
    package var size: Int64 { table.decompressedSize }

    private init(file: PositionalByteSource, table: ZstdSeekTable, name: String) throws {
        self.file = file
        self.table = table
        self.name = name
        decoder = try ZstdFrameDecoder()
    }

    /// Opens `file` (`size` bytes, zstd) as seekable zstd: nil when it does not end with a seek table
    /// (a plain zstd stream); throws `SeekableZstdError` for a table that does not fit the file.
    package static func open(_ file: PositionalByteSource, size: Int64, name: String) throws -> SeekableZstdSource? {
        guard size >= Int64(ZstdSeekTable.footerSize) else { return nil }
        var footer: [UInt8] = []
        try read(file, at: size - Int64(ZstdSeekTable.footerSize), count: ZstdSeekTable.footerSize, into: &footer, name: name)
        guard ZstdSeekTable.hasFooter(footer) else { return nil }
        do {
            let frameSize = try ZstdSeekTable.frameSize(footer: footer, fileSize: size)
            var frame: [UInt8] = []
            try read(file, at: size - Int64(frameSize), count: frameSize, into: &frame, name: name)
            let table = try ZstdSeekTable(frame: frame, fileSize: size, maximumFrameSize: maximumFrameSize)
            return try SeekableZstdSource(file: file, table: table, name: name)
        } catch let error as ZstdSeekTable.FormatError {
            throw SeekableZstdError(file: name, message: error.message)
        }
    }

    /// Serves bytes of one frame at a time, so that a reader stopping at the end of its range (a
    /// shard reading ahead in blocks) does not decompress the next frame.
    package func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        precondition(offset >= 0, "a read before the start of \(name)")
        guard offset < size, buffer.count > 0 else { return 0 }
        let number = table.frame(containing: offset)
        let bytes = try frame(number)
        let start = Int(offset - table.decompressedStarts[number])
        let n = min(buffer.count, bytes.count - start)
        bytes.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + start, byteCount: n) }
        return n
    }

    /// Frame `number` decompressed, from the cache or the file.
    private func frame(_ number: Int) throws -> [UInt8] {
        if let hit = cache.lastIndex(where: { $0.number == number }) { return cache[hit].bytes }
        let entry = table.entries[number]
        let start = table.compressedStarts[number]
        try Self.read(file, at: start, count: Int(entry.compressedSize), into: &compressed, name: name)
        var bytes = spare
        spare = []
        Self.resize(&bytes, to: Int(entry.decompressedSize))
        do {
            try compressed.withUnsafeBytes { frame in
                try bytes.withUnsafeMutableBytes { try decoder.decompress(frame, contentSize: Int(entry.decompressedSize), into: $0) }
            }
        } catch {
            throw SeekableZstdError(
                file: name,
                message:
                    "frame \(number) (bytes \(start)..<\(start + Int64(entry.compressedSize))) cannot be decompressed: \((error as? ArchiveError)?.message ?? "\(error)")"
            )
        }
        cache.append((number, bytes))
        cachedBytes += bytes.count
        while cache.count > 1, cachedBytes > Self.cacheBytes {
            spare = cache.removeFirst().bytes
            cachedBytes -= spare.count
        }
        return bytes
    }

    /// Makes `bytes` `count` long, keeping its memory.
    private static func resize(_ bytes: inout [UInt8], to count: Int) {
        if bytes.count > count {
            bytes.removeLast(bytes.count - count)
        } else if bytes.count < count {
            bytes.append(contentsOf: repeatElement(0, count: count - bytes.count))
        }
    }

    /// Reads `count` bytes of `file` from `offset` into `bytes` (resized), all of them (a file that
    /// ends before is an error).
    private static func read(_ file: PositionalByteSource, at offset: Int64, count: Int, into bytes: inout [UInt8], name: String) throws {
        resize(&bytes, to: count)
        var got = 0
        while got < count {
            let n = try bytes.withUnsafeMutableBytes {
                try file.read(at: offset + Int64(got), into: UnsafeMutableRawBufferPointer(rebasing: $0[got...]))
            }
            if n == 0 {
                throw SeekableZstdError(
                    file: name, message: "ends at byte \(offset + Int64(got)), before the frame its seek table puts there")
            }
            got += n
        }
    }
}

/// A seekable zstd file whose seek table or frames cannot be read: the file, and the byte or frame.
public struct SeekableZstdError: DataError, CustomStringConvertible, Sendable {
    public let file: String
    public let message: String
    public var description: String { "\(file): \(message)" }
}
