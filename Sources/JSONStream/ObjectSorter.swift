/// A run of output bytes that lives either in a sorter's arena or in the spill file.
enum Segment {
    case arena(start: Int, length: Int)
    case file(offset: Int64, length: Int64)
}

/// Receives the serialized form of a finished object: bytes in memory and ranges of the spill file.
protocol SegmentSink: AnyObject {
    func append(_ bytes: UnsafeRawBufferPointer) throws
    func appendFile(offset: Int64, length: Int64) throws
}

/// Buffers the members of one object being written in canonical order, sorts them by key in the
/// Realtime Database's order, and emits them to the enclosing sink.
///
/// Memory is bounded: when the arena passes `budget`, the finished members are written to the spill
/// file as a sorted run (and a member that is large by itself is moved there as it grows); the runs
/// are merged by reading their indexes back. Member bytes are never copied between spill regions,
/// only referenced, so a big object costs one extra write and read of its bytes.
final class ObjectSorter: SegmentSink {
    private struct Entry {
        var keyStart: Int
        var keyLength: Int
        var intKey: Int64  // Int64.max for keys that are not 32-bit integers
        var segStart: Int
        var segCount: Int
    }

    private struct Run {
        var indexOffset: Int64
        var indexLength: Int64
    }

    /// Where writes for the current member go.
    let arena: ByteBuffer
    private var keys: [UInt8] = []
    private var entries: [Entry] = []
    private var segments: [Segment] = []
    private var openEntry = false
    private var openArenaStart = 0  // start of the open member's bytes not yet in `segments`
    private var inOrder = true
    private var runs: [Run] = []
    private let budget: Int
    private let spillProvider: () throws -> SpillFile

    init(budget: Int, spill: @escaping () throws -> SpillFile) {
        self.budget = budget
        self.arena = ByteBuffer(capacity: 4096)
        self.spillProvider = spill
    }

    /// Whether the arena passed its budget and `spill()` should run.
    @inline(__always)
    var overBudget: Bool { arena.count > budget }

    // MARK: - Members

    /// Starts a member named `key` (raw UTF-8, unescaped); the caller then writes the member's output
    /// form (separator, key and value) into `arena`.
    func beginEntry(key: UnsafeRawBufferPointer) {
        closeEntry()
        let ks = keys.count
        keys.append(contentsOf: key)
        let intKey = DatabaseKeyOrder.integerValue(key).map(Int64.init) ?? Int64.max
        let e = Entry(keyStart: ks, keyLength: key.count, intKey: intKey, segStart: segments.count, segCount: 0)
        if inOrder, let last = entries.last, !less(last, e) { inOrder = false }
        if inOrder, entries.isEmpty, !runs.isEmpty { inOrder = false }
        entries.append(e)
        openEntry = true
        openArenaStart = arena.count
    }

    private func closeEntry() {
        guard openEntry else { return }
        sealArenaPart()
        openEntry = false
    }

    /// Moves the open member's arena bytes written so far into its segment list.
    private func sealArenaPart() {
        let n = arena.count - openArenaStart
        if n > 0 { addSegment(.arena(start: openArenaStart, length: n)) }
        openArenaStart = arena.count
    }

    private func addSegment(_ s: Segment) {
        entries[entries.count - 1].segCount += 1
        segments.append(s)
    }

    func append(_ bytes: UnsafeRawBufferPointer) throws {
        arena.append(bytes)
        if overBudget { try spill() }
    }

    func appendFile(offset: Int64, length: Int64) throws {
        sealArenaPart()
        if case .file(let o, let l)? = segments.last, entries[entries.count - 1].segCount > 0, o + l == offset {
            segments[segments.count - 1] = .file(offset: o, length: l + length)
        } else {
            addSegment(.file(offset: offset, length: length))
        }
    }

    // MARK: - Order

    @inline(__always)
    private func less(_ a: Entry, _ b: Entry) -> Bool {
        if a.intKey != b.intKey { return a.intKey < b.intKey }
        if a.intKey != Int64.max { return false }
        return keys.withUnsafeBytes { k in
            DatabaseKeyOrder.less(UnsafeRawBufferPointer(rebasing: k[a.keyStart..<(a.keyStart + a.keyLength)]),
                                  UnsafeRawBufferPointer(rebasing: k[b.keyStart..<(b.keyStart + b.keyLength)]))
        }
    }

    private func sortedEntries(_ list: [Entry]) -> [Entry] {
        inOrder ? list : list.sorted(by: less)
    }

    // MARK: - Spilling

    /// Writes finished members as a sorted run to the spill file, and moves a large open member's
    /// bytes there too, so the arena stays within budget.
    func spill() throws {
        let file = try spillProvider()
        let finished = openEntry ? entries.count - 1 : entries.count
        if finished > 0 {
            try writeRun(count: finished, file: file)
        }
        if openEntry && arena.count - openArenaStart > budget / 2 {
            let off = try file.append(arena.bytes(openArenaStart, arena.count - openArenaStart))
            arena.count = openArenaStart
            try appendFile(offset: off, length: file.size - off)
        }
    }

    /// Writes the first `count` entries as a run and compacts the rest to the front.
    private func writeRun(count: Int, file: SpillFile) throws {
        let order = sortedEntries(Array(entries[0..<count]))
        var index: [UInt8] = []
        // Data: arena parts in sorted order, contiguous, so that neighbours coalesce on merge.
        for e in order {
            var segs: [(Int64, Int64)] = []
            for s in segments[e.segStart..<(e.segStart + e.segCount)] {
                switch s {
                case .arena(let start, let length):
                    let off = try file.append(arena.bytes(start, length))
                    segs.append((off, Int64(length)))
                case .file(let off, let length):
                    segs.append((off, length))
                }
            }
            // Coalesce adjacent ranges within the entry.
            var merged: [(Int64, Int64)] = []
            for s in segs {
                if let last = merged.last, last.0 + last.1 == s.0 {
                    merged[merged.count - 1].1 += s.1
                } else {
                    merged.append(s)
                }
            }
            appendUInt(&index, UInt64(e.keyLength))
            index.append(contentsOf: keys[e.keyStart..<(e.keyStart + e.keyLength)])
            appendUInt(&index, UInt64(merged.count))
            for (o, l) in merged {
                appendUInt(&index, UInt64(o))
                appendUInt(&index, UInt64(l))
            }
        }
        let indexOffset = try index.withUnsafeBytes { try file.append($0) }
        runs.append(Run(indexOffset: indexOffset, indexLength: Int64(index.count)))

        // Keep the open entry (if any), moved to the front.
        if count < entries.count {
            var open = entries[count]
            let openSegs = Array(segments[open.segStart..<(open.segStart + open.segCount)])
            let keyBytes = Array(keys[open.keyStart..<(open.keyStart + open.keyLength)])
            // Arena bytes still in use start at the open entry's first arena segment or openArenaStart.
            var arenaFrom = openArenaStart
            for s in openSegs { if case .arena(let st, _) = s { arenaFrom = min(arenaFrom, st) } }
            keys = keyBytes
            open.keyStart = 0
            open.segStart = 0
            segments = openSegs.map { s in
                if case .arena(let st, let l) = s { return .arena(start: st - arenaFrom, length: l) }
                return s
            }
            arena.removeFirst(arenaFrom)
            openArenaStart -= arenaFrom
            entries = [open]
        } else {
            keys.removeAll(keepingCapacity: true)
            entries.removeAll(keepingCapacity: true)
            segments.removeAll(keepingCapacity: true)
            arena.count = 0
            openArenaStart = 0
        }
        inOrder = entries.count <= 1
    }

    private func appendUInt(_ out: inout [UInt8], _ v: UInt64) {
        withUnsafeBytes(of: v.littleEndian) { out.append(contentsOf: $0) }
    }

    // MARK: - Output

    /// Emits `{`, the members in order and the closing text to `sink`, then resets for reuse.
    /// `close` is the text before `}` (a line break and indentation in pretty mode).
    func finish(into sink: SegmentSink, close: UnsafeRawBufferPointer) throws {
        closeEntry()
        try sink.append(staticBytes("{"))
        if entries.isEmpty && runs.isEmpty {
            try sink.append(staticBytes("}"))
            return
        }
        if runs.isEmpty {
            var first = true
            for e in sortedEntries(entries) {
                for s in segments[e.segStart..<(e.segStart + e.segCount)] {
                    let skip = first ? 1 : 0  // the first member drops its leading ','
                    first = false
                    switch s {
                    case .arena(let start, let length):
                        try sink.append(arena.bytes(start + skip, length - skip))
                    case .file(let off, let length):
                        try sink.appendFile(offset: off + Int64(skip), length: length - Int64(skip))
                    }
                }
            }
        } else {
            let file = try spillProvider()
            if !entries.isEmpty { try writeRun(count: entries.count, file: file) }
            try merge(file: file, into: sink)
        }
        try sink.append(close)
        try sink.append(staticBytes("}"))
        reset()
    }

    private func reset() {
        keys.removeAll(keepingCapacity: true)
        entries.removeAll(keepingCapacity: true)
        segments.removeAll(keepingCapacity: true)
        runs.removeAll()
        arena.count = 0
        arena.shrink(to: 1 << 16)
        openArenaStart = 0
        openEntry = false
        inOrder = true
    }

    /// K-way merge of the runs' indexes; emits file ranges, coalescing neighbours.
    private func merge(file: SpillFile, into sink: SegmentSink) throws {
        let cursors = try runs.map { try RunCursor(file: file, run: $0) }
        var current: (Int64, Int64)? = nil
        var first = true
        while true {
            var best: RunCursor? = nil
            for c in cursors where c.hasEntry {
                if let b = best {
                    if RunCursor.less(c, b) { best = c }
                } else {
                    best = c
                }
            }
            guard let b = best else { break }
            for var (o, l) in b.segments {
                if first {
                    o += 1
                    l -= 1
                    first = false
                }
                if let cur = current, cur.0 + cur.1 == o {
                    current = (cur.0, cur.1 + l)
                } else {
                    if let cur = current { try sink.appendFile(offset: cur.0, length: cur.1) }
                    current = (o, l)
                }
            }
            try b.advance()
        }
        if let cur = current { try sink.appendFile(offset: cur.0, length: cur.1) }
    }

    /// Reads one run's index sequentially.
    private final class RunCursor {
        let file: SpillFile
        var offset: Int64
        let end: Int64
        var buffer: [UInt8] = []
        var bufferPos = 0
        private(set) var key: [UInt8] = []
        private(set) var intKey: Int64 = .max
        private(set) var segments: [(Int64, Int64)] = []
        private(set) var hasEntry = false

        init(file: SpillFile, run: Run) throws {
            self.file = file
            self.offset = run.indexOffset
            self.end = run.indexOffset + run.indexLength
            try advance()
        }

        static func less(_ a: RunCursor, _ b: RunCursor) -> Bool {
            if a.intKey != b.intKey { return a.intKey < b.intKey }
            if a.intKey != .max { return false }
            return a.key.withUnsafeBytes { ka in b.key.withUnsafeBytes { kb in DatabaseKeyOrder.less(ka, kb) } }
        }

        private func readBytes(_ n: Int) throws -> ArraySlice<UInt8> {
            if buffer.count - bufferPos < n {
                let keep = Array(buffer[bufferPos...])
                let want = Int(min(Int64(max(n - keep.count, 1 << 16)), end - offset))
                var more = [UInt8](repeating: 0, count: want)
                try more.withUnsafeMutableBytes { try file.read(at: offset, into: $0) }
                offset += Int64(want)
                buffer = keep + more
                bufferPos = 0
            }
            defer { bufferPos += n }
            return buffer[bufferPos..<(bufferPos + n)]
        }

        private func readUInt() throws -> UInt64 {
            let s = try readBytes(8)
            var v: UInt64 = 0
            for (i, b) in s.enumerated() { v |= UInt64(b) << (8 * UInt64(i)) }
            return v
        }

        func advance() throws {
            guard offset < end || bufferPos < buffer.count else {
                hasEntry = false
                return
            }
            let kl = Int(try readUInt())
            key = Array(try readBytes(kl))
            intKey = DatabaseKeyOrder.integerValue(key).map(Int64.init) ?? .max
            let n = Int(try readUInt())
            segments.removeAll(keepingCapacity: true)
            for _ in 0..<n {
                let o = Int64(try readUInt())
                let l = Int64(try readUInt())
                segments.append((o, l))
            }
            hasEntry = true
        }
    }
}

/// The bytes of a static string.
@inline(__always)
func staticBytes(_ s: StaticString) -> UnsafeRawBufferPointer {
    UnsafeRawBufferPointer(start: s.utf8Start, count: s.utf8CodeUnitCount)
}
