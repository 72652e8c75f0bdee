/// A run of output bytes that lives either in a sorter's arena or in the spill file.
enum Segment {
    case arena(start: Int, length: Int)
    case file(offset: Int64, length: Int64)
}

/// A range of the spill file.
struct FileRange {
    var offset: Int64
    var length: Int64
}

/// Receives the serialized form of a finished object: bytes in memory and ranges of the spill file.
protocol SegmentSink: AnyObject {
    func append(_ bytes: UnsafeRawBufferPointer) throws
    func appendFile(offset: Int64, length: Int64) throws
    /// Appends `{`, `body`, `close` and `}`: a whole object held in memory.
    func appendObject(body: UnsafeRawBufferPointer, close: UnsafeRawBufferPointer) throws
}

extension ByteBuffer {
    /// Appends `{`, `body`, `close` and `}`.
    @inline(__always)
    func appendObject(body: UnsafeRawBufferPointer, close: UnsafeRawBufferPointer) {
        reserve(body.count + close.count + 2)
        append(UInt8(ascii: "{"))
        append(body)
        append(close)
        append(UInt8(ascii: "}"))
    }
}

/// Buffers the members of one object being written in canonical order, sorts them by key in the
/// Realtime Database's order, and emits them to the enclosing sink.
///
/// Memory is bounded: when the arena passes `budget`, the finished members are written to the spill
/// file as a sorted run (and a member that is large by itself is moved there as it grows); the runs
/// are merged by reading their indexes back. Member bytes are never copied between spill regions,
/// only referenced, so a big object costs one extra write and read of its bytes.
///
/// Members usually arrive already in order (dumps are mostly written in key order); that is tracked
/// as they come, so such objects are emitted with one copy of the arena, and their runs are
/// concatenated rather than merged.
final class ObjectSorter: SegmentSink {
    private struct Entry {
        var keyStart: Int
        var keyLength: Int
        var intKey: Int64  // Int64.max for keys that are not 32-bit integers
        /// Where the member's bytes begin in the arena, and (once it is closed) how many there are,
        /// when it has no explicit segments.
        var start: Int
        var length: Int
        /// The member's bytes as explicit segments, needed once part of it is in the spill file.
        var segStart: Int
        var segCount: Int
    }

    private struct Run {
        var indexOffset: Int64
        var indexLength: Int64
    }

    /// Where writes for the current member go.
    let arena: ByteBuffer
    /// Bytes the arena may hold before `spill()` should run.
    let budget: Int
    private let keys = ByteBuffer(capacity: 1024)
    private let entries = PlainStack<Entry>()
    private let segments = PlainStack<Segment>()
    private var fileSegments = 0  // how many of `segments` are in the spill file
    private var openEntry = false
    private var openArenaStart = 0  // start of the open member's arena bytes not yet in a segment
    /// Whether the members in memory came in strictly ascending key order.
    private var inOrder = true
    /// Whether all members so far, in memory and in runs, came in strictly ascending key order.
    private var ascending = true
    /// The key of the last member written to a run, to compare the next one with.
    private let lastRunKey = ByteBuffer(capacity: 64)
    private var lastRunIntKey = Int64.max
    private let runs = PlainStack<Run>()
    private let ranges = PlainStack<FileRange>()  // scratch for `writeRun`
    private let indexRecord = ByteBuffer(capacity: 256)  // scratch for `writeRun`
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
        keys.append(key)
        let e = Entry(
            keyStart: ks, keyLength: key.count, intKey: DatabaseKeyOrder.sortKey(key),
            start: arena.count, length: 0, segStart: segments.count, segCount: 0)
        if !entries.isEmpty {
            if inOrder && !less(entries.last, e) {
                inOrder = false
                ascending = false
            }
        } else if ascending && !runs.isEmpty {
            ascending = DatabaseKeyOrder.less(lastRunIntKey, lastRunKey.bytes(0, lastRunKey.count), e.intKey, key)
        }
        entries.append(e)
        openEntry = true
        openArenaStart = arena.count
    }

    @inline(__always)
    private func closeEntry() {
        guard openEntry else { return }
        if entries.last.segCount == 0 {
            entries.last.length = arena.count - entries.last.start
        } else {
            sealArenaPart()
        }
        openEntry = false
    }

    /// Moves the open member's arena bytes written so far into its segment list (which it then has
    /// for good).
    @inline(__always)
    private func sealArenaPart() {
        let n = arena.count - openArenaStart
        if n > 0 { addSegment(.arena(start: openArenaStart, length: n)) }
        openArenaStart = arena.count
    }

    @inline(__always)
    private func addSegment(_ s: Segment) {
        entries.last.segCount += 1
        segments.append(s)
        if case .file = s { fileSegments += 1 }
    }

    func append(_ bytes: UnsafeRawBufferPointer) throws {
        arena.append(bytes)
        if overBudget { try spill() }
    }

    func appendObject(body: UnsafeRawBufferPointer, close: UnsafeRawBufferPointer) throws {
        arena.appendObject(body: body, close: close)
        if overBudget { try spill() }
    }

    func appendFile(offset: Int64, length: Int64) throws {
        sealArenaPart()
        if entries.last.segCount > 0, case .file(let o, let l) = segments.last, o + l == offset {
            segments.last = .file(offset: o, length: l + length)
        } else {
            addSegment(.file(offset: offset, length: length))
        }
    }

    // MARK: - Order

    @inline(__always)
    private func less(_ a: Entry, _ b: Entry) -> Bool {
        DatabaseKeyOrder.less(a.intKey, keys.bytes(a.keyStart, a.keyLength), b.intKey, keys.bytes(b.keyStart, b.keyLength))
    }

    /// Calls `body` with the pieces of a closed entry's bytes, in order.
    @inline(__always)
    private func forEachPiece(of e: Entry, _ body: (Segment) throws -> Void) rethrows {
        if e.segCount == 0 {
            try body(.arena(start: e.start, length: e.length))
        } else {
            for j in e.segStart..<(e.segStart + e.segCount) { try body(segments[j]) }
        }
    }

    /// The first `count` entries sorted, or nil when they are in order already.
    private func sortedEntries(_ count: Int) -> [Entry]? {
        inOrder ? nil : Array(UnsafeBufferPointer(rebasing: entries.elements[0..<count])).sorted(by: less)
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
        let sorted = sortedEntries(count)
        // Data: arena parts in sorted order, contiguous, so that neighbours coalesce on merge. In
        // order, they are the start of the arena as it is.
        let dataStart = file.size
        if sorted == nil {
            try file.append(arena.bytes(0, arenaLength(count)))
        } else {
            for i in 0..<count {
                try forEachPiece(of: sorted?[i] ?? entries[i]) { piece in
                    if case .arena(let start, let length) = piece { try file.append(arena.bytes(start, length)) }
                }
            }
        }
        // Index: per entry its key and its file ranges (adjacent ones coalesced).
        let indexOffset = file.size
        var at = dataStart
        for i in 0..<count {
            let e = sorted?[i] ?? entries[i]
            ranges.removeAll()
            forEachPiece(of: e) { piece in
                var r: FileRange
                switch piece {
                case .arena(_, let length):
                    r = FileRange(offset: at, length: Int64(length))
                    at += Int64(length)
                case .file(let off, let length):
                    r = FileRange(offset: off, length: length)
                }
                if !ranges.isEmpty, ranges.last.offset + ranges.last.length == r.offset {
                    ranges.last.length += r.length
                } else {
                    ranges.append(r)
                }
            }
            let r = indexRecord
            r.count = 0
            appendUInt(r, UInt64(e.keyLength))
            r.append(keys.bytes(e.keyStart, e.keyLength))
            appendUInt(r, UInt64(ranges.count))
            for k in 0..<ranges.count {
                appendUInt(r, UInt64(ranges[k].offset))
                appendUInt(r, UInt64(ranges[k].length))
            }
            try file.append(r.bytes(0, r.count))
        }
        runs.append(Run(indexOffset: indexOffset, indexLength: file.size - indexOffset))
        let last = sorted?[count - 1] ?? entries[count - 1]
        lastRunIntKey = last.intKey
        lastRunKey.count = 0
        lastRunKey.append(keys.bytes(last.keyStart, last.keyLength))

        // Keep the open entry (if any), moved to the front.
        if count < entries.count {
            var open = entries[count]
            let openSegs = Array(UnsafeBufferPointer(rebasing: segments.elements[open.segStart..<(open.segStart + open.segCount)]))
            let keyBytes = Array(keys.bytes(open.keyStart, open.keyLength))
            // Arena bytes still in use start at the open entry's first arena segment or openArenaStart.
            var arenaFrom = openArenaStart
            for s in openSegs { if case .arena(let st, _) = s { arenaFrom = min(arenaFrom, st) } }
            keys.count = 0
            keyBytes.withUnsafeBytes { keys.append($0) }
            open.keyStart = 0
            open.start -= arenaFrom  // 0 unless it has segments (then unused)
            open.segStart = 0
            segments.removeAll()
            fileSegments = 0
            for s in openSegs {
                if case .arena(let st, let l) = s {
                    segments.append(.arena(start: st - arenaFrom, length: l))
                } else {
                    segments.append(s)
                    fileSegments += 1
                }
            }
            arena.removeFirst(arenaFrom)
            openArenaStart -= arenaFrom
            entries.removeAll()
            entries.append(open)
        } else {
            keys.count = 0
            entries.removeAll()
            segments.removeAll()
            fileSegments = 0
            arena.count = 0
            openArenaStart = 0
        }
        inOrder = true
    }

    /// How many arena bytes the first `count` entries have. The arena holds the entries' arena
    /// parts in entry order from its start (later ones follow, earlier ones are gone to runs).
    private func arenaLength(_ count: Int) -> Int {
        var length = 0
        for i in 0..<count {
            forEachPiece(of: entries[i]) { piece in
                guard case .arena(let start, let n) = piece else { return }
                assert(start == length, "arena parts out of place")
                length += n
            }
        }
        return length
    }

    private func appendUInt(_ b: ByteBuffer, _ v: UInt64) {
        withUnsafeBytes(of: v.littleEndian) { b.append($0) }
    }

    // MARK: - Output

    /// Emits `{`, the members in order and the closing text to `sink`, then resets for reuse.
    /// `close` is the text before `}` (a line break and indentation in pretty mode).
    func finish(into sink: SegmentSink, close: UnsafeRawBufferPointer) throws {
        closeEntry()
        if entries.isEmpty && runs.isEmpty {
            try sink.append(staticBytes("{}"))
            return
        }
        if runs.isEmpty && inOrder && fileSegments == 0 {
            // The arena holds the members in order; the first one drops its leading ','.
            try sink.appendObject(body: arena.bytes(1, arena.count - 1), close: close)
            reset()
            return
        }
        try sink.append(staticBytes("{"))
        if runs.isEmpty {
            let sorted = sortedEntries(entries.count)
            var first = true
            for i in 0..<entries.count {
                try forEachPiece(of: sorted?[i] ?? entries[i]) { piece in
                    let skip = first ? 1 : 0  // the first member drops its leading ','
                    first = false
                    switch piece {
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
        keys.count = 0
        entries.removeAll()
        segments.removeAll()
        fileSegments = 0
        runs.removeAll()
        arena.count = 0
        arena.shrink(to: 1 << 16)
        openArenaStart = 0
        openEntry = false
        inOrder = true
        ascending = true
    }

    /// Merges the runs by their indexes (or concatenates them when all members came in order) and
    /// emits file ranges, coalescing neighbours.
    private func merge(file: SpillFile, into sink: SegmentSink) throws {
        // Concatenating runs needs no keys.
        let cursors = try (0..<runs.count).map { try RunCursor(file: file, run: runs[$0], readKeys: !ascending) }
        var current: FileRange? = nil
        var first = true
        func emit(_ c: RunCursor) throws {
            for i in 0..<c.ranges.count {
                var r = c.ranges[i]
                if first {
                    r.offset += 1
                    r.length -= 1
                    first = false
                }
                if let cur = current, cur.offset + cur.length == r.offset {
                    current = FileRange(offset: cur.offset, length: cur.length + r.length)
                } else {
                    if let cur = current { try sink.appendFile(offset: cur.offset, length: cur.length) }
                    current = r
                }
            }
        }
        if ascending {
            for c in cursors {
                while c.hasEntry {
                    try emit(c)
                    try c.advance()
                }
            }
        } else {
            // A binary heap of cursors by their current key, ties to the earlier run.
            func before(_ i: Int, _ j: Int) -> Bool {
                if RunCursor.less(cursors[i], cursors[j]) { return true }
                if RunCursor.less(cursors[j], cursors[i]) { return false }
                return i < j
            }
            var heap = cursors.indices.filter { cursors[$0].hasEntry }
            func siftDown(_ start: Int) {
                var i = start
                while true {
                    let l = 2 * i + 1, r = l + 1
                    var m = i
                    if l < heap.count && before(heap[l], heap[m]) { m = l }
                    if r < heap.count && before(heap[r], heap[m]) { m = r }
                    if m == i { return }
                    heap.swapAt(i, m)
                    i = m
                }
            }
            for i in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(i) }
            while let top = heap.first {
                let c = cursors[top]
                try emit(c)
                try c.advance()
                if !c.hasEntry {
                    heap.swapAt(0, heap.count - 1)
                    heap.removeLast()
                }
                siftDown(0)
            }
        }
        if let cur = current { try sink.appendFile(offset: cur.offset, length: cur.length) }
    }

    /// Reads one run's index sequentially.
    private final class RunCursor {
        let file: SpillFile
        private var offset: Int64
        private let end: Int64
        private let buffer = ByteBuffer(capacity: 1 << 16)
        private var bufferPos = 0
        private let readKeys: Bool
        private let keyBytes = ByteBuffer(capacity: 64)
        private(set) var intKey: Int64 = .max
        let ranges = PlainStack<FileRange>()
        private(set) var hasEntry = false

        /// Opens `run`'s index; without `readKeys`, `key` and `intKey` stay empty.
        init(file: SpillFile, run: Run, readKeys: Bool) throws {
            self.file = file
            self.offset = run.indexOffset
            self.end = run.indexOffset + run.indexLength
            self.readKeys = readKeys
            try advance()
        }

        var key: UnsafeRawBufferPointer { keyBytes.bytes(0, keyBytes.count) }

        static func less(_ a: RunCursor, _ b: RunCursor) -> Bool {
            DatabaseKeyOrder.less(a.intKey, a.key, b.intKey, b.key)
        }

        /// The next `n` bytes of the index, valid until the next read.
        private func readBytes(_ n: Int) throws -> UnsafeRawBufferPointer {
            if buffer.count - bufferPos < n {
                buffer.removeFirst(bufferPos)
                bufferPos = 0
                let want = Int(min(Int64(max(n - buffer.count, 1 << 16)), end - offset))
                buffer.reserve(want)
                try file.read(at: offset, into: UnsafeMutableRawBufferPointer(start: buffer.base + buffer.count, count: want))
                buffer.count += want
                offset += Int64(want)
            }
            defer { bufferPos += n }
            return buffer.bytes(bufferPos, n)
        }

        private func readUInt() throws -> UInt64 {
            UInt64(littleEndian: try readBytes(8).loadUnaligned(as: UInt64.self))
        }

        func advance() throws {
            guard offset < end || bufferPos < buffer.count else {
                hasEntry = false
                return
            }
            let kl = Int(try readUInt())
            let k = try readBytes(kl)
            if readKeys {
                keyBytes.count = 0
                keyBytes.append(k)
                intKey = DatabaseKeyOrder.sortKey(key)
            }
            let n = Int(try readUInt())
            ranges.removeAll()
            for _ in 0..<n {
                let o = Int64(try readUInt())
                let l = Int64(try readUInt())
                ranges.append(FileRange(offset: o, length: l))
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
