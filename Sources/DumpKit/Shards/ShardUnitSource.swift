import JSONStream

/// The units of one shard as a byte stream for a `JSONReader` (with `multipleDocuments`): each unit's
/// bytes, then a line break. The shard's units and the bytes between them are one stretch of the
/// file, read with `pread` in 1 MiB blocks; the entries come from the index as the reader reaches
/// them, so neither the index nor the shard's list of units is held whole.
///
/// The bytes from the previous unit's end to each unit's end are checked against the entry's CRC-32C
/// as they are read: a dump that is not the one the index was made for fails here.
final class ShardUnitSource: JSONByteSource {
    private let index: DumpIndexReader
    private let file: PositionalByteSource
    private let fileName: String
    private let spec: ShardSpec
    /// Entries whose bytes were served and whose value the consumer has not taken yet.
    private var served: [DumpIndex.Entry] = []
    private var servedHead = 0
    /// The entry being read, where it is and its checksum so far.
    private var current: DumpIndex.Entry?
    private var position: Int64 = 0
    /// The start of the range the current entry's checksum covers (the previous entry's end).
    private var rangeStart: Int64 = 0
    private var crc = CRC32C()
    private var separatorDue = false
    /// A block of the file, from `chunkOffset`, `chunkCount` bytes of it read.
    private var chunk = [UInt8](repeating: 0, count: 1 << 20)
    private var chunkOffset: Int64 = 0
    private var chunkCount = 0
    /// The end of the last index entry seen (of any shard).
    private(set) var previousEnd: Int64 = 0
    /// Whether the index has no more entries of this shard.
    private(set) var exhausted = false
    /// Input bytes read (units and the bytes between them).
    private(set) var bytesRead: Int64 = 0

    /// Reads the shard's entries of `index`, from the first one on (found by bisection).
    init(index: DumpIndexReader, file: PositionalByteSource, fileName: String, spec: ShardSpec) throws {
        self.index = index
        self.file = file
        self.fileName = fileName
        self.spec = spec
        previousEnd = try index.seek(to: spec)
    }

    /// The entry of the value the reader is about to read (call once per value, in order).
    func takeEntry() -> DumpIndex.Entry {
        let e = served[servedHead]
        servedHead += 1
        if servedHead > 1024 && servedHead * 2 > served.count {
            served.removeFirst(servedHead)
            servedHead = 0
        }
        return e
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        var filled = 0
        while filled < buffer.count {
            if separatorDue {
                buffer[filled] = UInt8(ascii: "\n")
                filled += 1
                separatorDue = false
                continue
            }
            if current == nil {
                guard try startNextEntry() else { break }
            }
            let e = current!
            if position >= chunkOffset + Int64(chunkCount) { try refillChunk(upTo: e.end) }
            let unitStarted = position >= e.offset
            let chunkEnd = chunkOffset + Int64(chunkCount)
            var n = Int(min(unitStarted ? e.end : e.offset, chunkEnd) - position)
            if unitStarted { n = min(n, buffer.count - filled) }
            chunk.withUnsafeBytes { c in
                let bytes = UnsafeRawBufferPointer(rebasing: c[Int(position - chunkOffset)..<(Int(position - chunkOffset) + n)])
                crc.update(bytes)
                if unitStarted { (buffer.baseAddress! + filled).copyMemory(from: bytes.baseAddress!, byteCount: n) }
            }
            if unitStarted { filled += n }
            position += Int64(n)
            bytesRead += Int64(n)
            if position == e.end {
                guard crc.value == e.crc else {
                    throw UsageError(
                        "\(fileName): bytes \(rangeStart)..<\(e.end) (\(e.pointer)) are not those the index was made from: "
                            + "the index is for another file or the file changed; make the index again")
                }
                current = nil
                separatorDue = true
            }
        }
        return filled
    }

    /// Reads the file from `position` on into `chunk`: the shard's ranges and the bytes between
    /// them are consecutive, so the file is read in large blocks, as an unsharded run reads it.
    private func refillChunk(upTo end: Int64) throws {
        chunkOffset = position
        chunkCount = try chunk.withUnsafeMutableBytes { try file.read(at: position, into: $0) }
        if chunkCount == 0 {
            throw UsageError(
                "\(fileName) ends at byte \(position), but the index has a unit up to byte \(end): it was made for another file")
        }
    }

    /// Moves to this shard's next entry, skipping others'; false when there are no more.
    private func startNextEntry() throws -> Bool {
        guard !exhausted else { return false }
        while let e = try index.next() {
            let before = previousEnd
            previousEnd = e.end
            let shard = DumpIndex.shard(of: e, count: spec.count, size: index.trailer.size)
            if shard < spec.index { continue }
            if shard > spec.index { break }
            current = e
            rangeStart = before
            position = before
            crc = CRC32C()
            served.append(e)
            return true
        }
        exhausted = true
        return false
    }

    /// For the last shard: reads the rest of the index and checks the bytes after the last unit.
    func checkEnd() throws {
        while let e = try index.next() { previousEnd = e.end }
        var crc = CRC32C()
        var at = previousEnd
        var scratch = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let n = try scratch.withUnsafeMutableBytes { b in
                let got = try file.read(at: at, into: b)
                crc.update(UnsafeRawBufferPointer(rebasing: b[0..<got]))
                return got
            }
            if n == 0 { break }
            at += Int64(n)
        }
        bytesRead += at - previousEnd
        guard at == index.trailer.size, crc.value == index.trailer.endCRC else {
            throw UsageError(
                "\(fileName): its bytes after \(previousEnd) are not those the index was made from: "
                    + "the index is for another file or the file changed; make the index again")
        }
    }
}
