import JSONStream

/// The units of one shard as a byte stream for a `JSONReader` (with `multipleDocuments`): each unit's
/// bytes, in the brackets of its container for a run of siblings (`{"a":1,"b":2}` for a run
/// `"a":1,"b":2` of an object's members), then a line break. The shard's units and the bytes
/// between them are one stretch of the file, read with `pread` in 1 MiB blocks; the entries come from the index as the reader reaches
/// them, so neither the index nor the shard's list of units is held whole.
///
/// The bytes from the previous unit's end to each unit's end are checked against the entry's CRC-32C
/// as they are read: a dump that is not the one the index was made for fails here.
///
/// As `wholeRange` (for `validate`), the source is instead one JSON document that reads, where the
/// shard's bytes are, as the dump does, token for token and line for line: a `prefix` of synthetic
/// JSON that opens the containers the shard starts in (names and array elements standing in for
/// what came before, so paths and depths are the dump's), the shard's whole range (units and the
/// structure between them), then closing brackets (the last shard: the dump's own bytes to its
/// end). The reader reads the shard's first byte on line 1 after the start; `lineShift` and
/// `firstLineColumnShift` turn its lines and columns into the dump's (padding the reader to them
/// instead would have every shard skip as many bytes as come before it on their line).
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
    private var checkedFrom: Int64 = 0
    private var crc = CRC32C()
    /// Whether the current entry's run still needs its opening bracket.
    private var openingDue = false
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
    /// The shard's units read so far.
    private(set) var unitsRead = 0
    /// Whether the whole range is served as one document (see above).
    private let wholeRange: Bool
    /// Synthetic bytes to serve before anything else, from `pendingAt`: brackets and line breaks
    /// around units, or the start and end of the whole range.
    private var pending: [UInt8] = []
    private var pendingAt = 0
    /// What to add to the reader's lines, and to its columns on its first line, for the dump's.
    private(set) var lineShift = 0
    private(set) var firstLineColumnShift = 0
    /// Bytes served so far (the reader's offsets).
    private var servedBytes: Int64 = 0
    /// Where the shard's own bytes start and (once the closing brackets are due) end in what the
    /// source serves; tokens outside are synthetic.
    private(set) var rangeStart: Int64 = 0
    private(set) var rangeEnd = Int64.max
    /// The last entry whose containers the shard is in (whole range).
    private var lastEntry: DumpIndex.Entry?
    private var closed = false
    private var endChecked = false
    /// The index entry read ahead (whole range), to know whether the shard has any bytes.
    private var lookahead: DumpIndex.Entry?
    /// Whole range: whether the source serves nothing (a shard before the first unit without units).
    private(set) var isEmpty = false

    /// Reads the shard's entries of `index`, from the first one on (found by bisection).
    init(index: DumpIndexReader, file: PositionalByteSource, fileName: String, spec: ShardSpec, wholeRange: Bool = false) throws {
        self.index = index
        self.file = file
        self.fileName = fileName
        self.spec = spec
        self.wholeRange = wholeRange
        let before = try index.seek(to: spec)
        previousEnd = before?.end ?? 0
        guard wholeRange else { return }
        lookahead = try index.next()
        if let before {
            lastEntry = before
            try startAfter(before)
        } else {
            let first = lookahead.map { DumpIndex.shard(of: $0, count: spec.count, size: index.trailer.size) }
            isEmpty = spec.index < spec.count - 1 && first != spec.index
        }
    }

    /// Sets up the start that puts the reader where `entry` ends.
    private func startAfter(_ entry: DumpIndex.Entry) throws {
        let sink = MemoryByteSink()
        let w = JSONWriter(sink: sink)
        // One segment per container: `DumpIndexReader` refuses entries where they disagree.
        var segments = JSONPointer.segments(entry.pointer) ?? []
        let kinds = Array(entry.containers.utf8)
        // The run's last member stands for it: in an array, its index counts.
        if kinds.last == UInt8(ascii: "a"), let first = Int(segments[segments.count - 1]) {
            segments[segments.count - 1] = String(first + entry.members - 1)
        }
        for (kind, key) in zip(kinds, segments) {
            if kind == UInt8(ascii: "o") {
                try w.beginObject()
                try w.name(key)
            } else {
                try w.beginArray()
                for _ in 0..<(Int(key) ?? 0) { try w.number(JSONNumber(0)) }
            }
        }
        try w.number(JSONNumber(0))
        try w.flush()
        pending = sink.bytes
        rangeStart = Int64(pending.count)
        // The shard's first byte is read on line 1, after the start: where it is in the dump.
        lineShift = Int(entry.line - 1)
        firstLineColumnShift = Int(entry.end - entry.lineStart) - pending.count
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
        let filled = try fill(buffer)
        servedBytes += Int64(filled)
        return filled
    }

    private func fill(_ buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        var filled = 0
        while filled < buffer.count {
            if pendingAt < pending.count {
                filled += servePending(UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]))
                continue
            }
            if current == nil {
                guard try startNextEntry() else {
                    if wholeRange && !closed {
                        closed = true
                        try close(at: servedBytes + Int64(filled))
                        continue
                    }
                    break
                }
            }
            let e = current!
            if openingDue && position >= e.offset {
                openingDue = false
                serve([e.brackets.open])
                continue
            }
            if position >= chunkOffset + Int64(chunkCount) { try refillChunk(upTo: e.end) }
            let copies = wholeRange || position >= e.offset
            let chunkEnd = chunkOffset + Int64(chunkCount)
            var n = Int(min(copies ? e.end : e.offset, chunkEnd) - position)
            if copies { n = min(n, buffer.count - filled) }
            chunk.withUnsafeBytes { c in
                let bytes = UnsafeRawBufferPointer(rebasing: c[Int(position - chunkOffset)..<(Int(position - chunkOffset) + n)])
                crc.update(bytes)
                if copies { (buffer.baseAddress! + filled).copyMemory(from: bytes.baseAddress!, byteCount: n) }
            }
            if copies { filled += n }
            position += Int64(n)
            bytesRead += Int64(n)
            if position == e.end {
                guard crc.value == e.crc else {
                    throw UsageError(
                        "\(fileName): bytes \(checkedFrom)..<\(e.end) (\(e.pointer)"
                            + (e.members > 1 ? " and the \(e.members - 1) after it" : "") + ") are not those the index was made from: "
                            + "the index is for another file or the file changed; make the index again")
                }
                current = nil
                if !wholeRange {
                    serve(e.members > 0 ? [e.brackets.close, UInt8(ascii: "\n")] : [UInt8(ascii: "\n")])
                }
            }
        }
        return filled
    }

    /// Serves `bytes` next (nothing else is pending).
    private func serve(_ bytes: [UInt8]) {
        pending = bytes
        pendingAt = 0
    }

    /// Copies what is left of the synthetic bytes into `buffer`; returns how many.
    private func servePending(_ buffer: UnsafeMutableRawBufferPointer) -> Int {
        var filled = 0
        if pendingAt < pending.count {
            let n = min(pending.count - pendingAt, buffer.count)
            pending.withUnsafeBytes { (buffer.baseAddress!).copyMemory(from: $0.baseAddress! + pendingAt, byteCount: n) }
            pendingAt += n
            filled = n
        }
        return filled
    }

    /// After the shard's last unit, which ends at `offset` of what the source serves (whole range):
    /// the closing brackets of the containers it is in, or in the last shard the dump's own bytes to
    /// its end, checked.
    private func close(at offset: Int64) throws {
        rangeEnd = offset
        guard spec.index == spec.count - 1 else {
            serve((lastEntry?.containers.utf8.reversed() ?? []).map { $0 == UInt8(ascii: "o") ? UInt8(ascii: "}") : UInt8(ascii: "]") })
            return
        }
        rangeEnd = Int64.max
        serve(try checkEnd())
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
        while let e = try nextIndexEntry() {
            let before = previousEnd
            previousEnd = e.end
            let shard = DumpIndex.shard(of: e, count: spec.count, size: index.trailer.size)
            if shard < spec.index { continue }
            if shard > spec.index { break }
            current = e
            lastEntry = e
            unitsRead += 1
            checkedFrom = before
            position = before
            crc = CRC32C()
            if !wholeRange {
                served.append(e)
                openingDue = e.members > 0
            }
            return true
        }
        exhausted = true
        return false
    }

    private func nextIndexEntry() throws -> DumpIndex.Entry? {
        if let e = lookahead {
            lookahead = nil
            return e
        }
        return try index.next()
    }

    /// For the last shard: reads the rest of the index and checks the bytes after the last unit,
    /// which it returns (closing brackets and white space); once.
    @discardableResult
    func checkEnd() throws -> [UInt8] {
        if endChecked { return [] }
        endChecked = true
        while let e = try nextIndexEntry() { previousEnd = e.end }
        var crc = CRC32C()
        var at = previousEnd
        var rest: [UInt8] = []
        var scratch = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let n = try scratch.withUnsafeMutableBytes { b in
                let got = try file.read(at: at, into: b)
                crc.update(UnsafeRawBufferPointer(rebasing: b[0..<got]))
                return got
            }
            if n == 0 { break }
            rest += scratch[0..<n]
            at += Int64(n)
        }
        bytesRead += at - previousEnd
        guard at == index.trailer.size, crc.value == index.trailer.endCRC else {
            throw UsageError(
                "\(fileName): its bytes after \(previousEnd) are not those the index was made from: "
                    + "the index is for another file or the file changed; make the index again")
        }
        return rest
    }
}
