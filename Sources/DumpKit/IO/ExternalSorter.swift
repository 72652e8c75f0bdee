import Foundation
import JSONStream

/// Sorts entries, each a key and a payload of bytes, by key (bytewise; equal keys keep no particular
/// order) in bounded memory: entries gather in memory up to `budget` bytes, each such run is sorted
/// and written to an anonymous temporary file, and the runs are merged when read.
public final class ExternalSorter {
    /// One entry's bytes in `arena`.
    private struct Slot {
        var start: Int
        var keyCount: Int32
        var payloadCount: Int32
    }

    private let budget: Int
    private let temporaryDirectory: String?
    private var arena: [UInt8] = []
    private var slots: [Slot] = []
    private var file: TemporaryFile?
    /// The byte ranges of the runs written to `file`.
    private var runs: [Range<Int64>] = []
    /// Entries added.
    private(set) var count = 0

    public init(budget: Int = 16 << 20, temporaryDirectory: String? = nil) {
        self.budget = budget
        self.temporaryDirectory = temporaryDirectory
    }

    /// Adds an entry.
    public func add(key: [UInt8], payload: [UInt8]) throws {
        precondition(key.count < Int32.max && payload.count < Int32.max, "sort entry too large")
        slots.append(Slot(start: arena.count, keyCount: Int32(key.count), payloadCount: Int32(payload.count)))
        arena.append(contentsOf: key)
        arena.append(contentsOf: payload)
        count += 1
        if arena.count + slots.count * MemoryLayout<Slot>.stride >= budget { try spill() }
    }

    /// Ends adding; the entries are then read in key order with `next()`.
    public func sorted() throws -> Reader {
        sortSlots()
        if runs.isEmpty { return Reader(memory: arena, slots: slots.map { ($0.start, Int($0.keyCount), Int($0.payloadCount)) }) }
        try spill()
        arena = []
        slots = []
        return try Reader(file: file!, runs: runs)
    }

    private func sortSlots() {
        arena.withUnsafeBytes { bytes in
            slots.sort { a, b in
                let n = Int(min(a.keyCount, b.keyCount))
                let c = memcmp(bytes.baseAddress! + a.start, bytes.baseAddress! + b.start, n)
                return c != 0 ? c < 0 : a.keyCount < b.keyCount
            }
        }
    }

    /// Writes the entries in memory as one sorted run: each as key count, payload count (`u32`
    /// little-endian), key, payload.
    private func spill() throws {
        guard !slots.isEmpty else { return }
        sortSlots()
        if file == nil { file = try TemporaryFile(directory: temporaryDirectory) }
        let start = file!.size
        var out: [UInt8] = []
        out.reserveCapacity(1 << 20)
        for s in slots {
            withUnsafeBytes(of: UInt32(s.keyCount).littleEndian) { out.append(contentsOf: $0) }
            withUnsafeBytes(of: UInt32(s.payloadCount).littleEndian) { out.append(contentsOf: $0) }
            out.append(contentsOf: arena[s.start..<(s.start + Int(s.keyCount) + Int(s.payloadCount))])
            if out.count >= 1 << 20 {
                try out.withUnsafeBytes { try file!.write($0) }
                out.removeAll(keepingCapacity: true)
            }
        }
        try out.withUnsafeBytes { try file!.write($0) }
        runs.append(start..<file!.size)
        arena.removeAll(keepingCapacity: true)
        slots.removeAll(keepingCapacity: true)
    }

    /// The sorted entries, one at a time.
    public final class Reader {
        /// The current entry's key and payload, valid after `next()` returned true.
        public private(set) var key: [UInt8] = []
        public private(set) var payload: [UInt8] = []

        private var memory: [UInt8] = []
        private var memorySlots: [(start: Int, keyCount: Int, payloadCount: Int)] = []
        private var memoryIndex = 0
        private var cursors: [RunCursor] = []
        /// Indexes of cursors with an entry, as a min-heap by their current key.
        private var heap: [Int] = []

        fileprivate init(memory: [UInt8], slots: [(Int, Int, Int)]) {
            self.memory = memory
            memorySlots = slots
        }

        fileprivate init(file: TemporaryFile, runs: [Range<Int64>]) throws {
            let buffer = max(4096, min(1 << 16, (8 << 20) / max(1, runs.count)))
            for run in runs {
                let c = RunCursor(file: file, range: run, bufferSize: buffer)
                if try c.advance() {
                    cursors.append(c)
                    push(cursors.count - 1)
                }
            }
        }

        /// Moves to the next entry; false after the last.
        public func next() throws -> Bool {
            if cursors.isEmpty {
                guard memoryIndex < memorySlots.count else { return false }
                let s = memorySlots[memoryIndex]
                memoryIndex += 1
                key = Array(memory[s.start..<(s.start + s.keyCount)])
                payload = Array(memory[(s.start + s.keyCount)..<(s.start + s.keyCount + s.payloadCount)])
                return true
            }
            guard let top = heap.first else { return false }
            key = cursors[top].key
            payload = cursors[top].payload
            if try cursors[top].advance() {
                siftDown(0)
            } else {
                heap[0] = heap[heap.count - 1]
                heap.removeLast()
                if !heap.isEmpty { siftDown(0) }
            }
            return true
        }

        private func less(_ a: Int, _ b: Int) -> Bool { cursors[a].key.lexicographicallyPrecedes(cursors[b].key) }

        private func push(_ c: Int) {
            heap.append(c)
            var i = heap.count - 1
            while i > 0 {
                let parent = (i - 1) / 2
                guard less(heap[i], heap[parent]) else { break }
                heap.swapAt(i, parent)
                i = parent
            }
        }

        private func siftDown(_ start: Int) {
            var i = start
            while true {
                let l = 2 * i + 1
                let r = l + 1
                var m = i
                if l < heap.count && less(heap[l], heap[m]) { m = l }
                if r < heap.count && less(heap[r], heap[m]) { m = r }
                if m == i { return }
                heap.swapAt(i, m)
                i = m
            }
        }
    }

    /// Reads one run's entries through a buffer.
    private final class RunCursor {
        let file: TemporaryFile
        var offset: Int64
        let end: Int64
        var buffer: [UInt8]
        var position = 0
        var filled = 0
        var key: [UInt8] = []
        var payload: [UInt8] = []

        init(file: TemporaryFile, range: Range<Int64>, bufferSize: Int) {
            self.file = file
            offset = range.lowerBound
            end = range.upperBound
            buffer = [UInt8](repeating: 0, count: bufferSize)
        }

        /// Reads the next entry of the run; false at its end.
        func advance() throws -> Bool {
            guard try take(8) else { return false }
            let counts = buffer.withUnsafeBytes {
                (
                    $0.loadUnaligned(fromByteOffset: position, as: UInt32.self).littleEndian,
                    $0.loadUnaligned(fromByteOffset: position + 4, as: UInt32.self).littleEndian
                )
            }
            position += 8
            key = try bytes(Int(counts.0))
            payload = try bytes(Int(counts.1))
            return true
        }

        private func bytes(_ n: Int) throws -> [UInt8] {
            guard try take(n) else { throw InputError(file: "sort file", message: "truncated entry") }
            let out = Array(buffer[position..<(position + n)])
            position += n
            return out
        }

        /// Makes `n` bytes available at `position`; false if the run ended before any.
        private func take(_ n: Int) throws -> Bool {
            if filled - position >= n { return true }
            let left = filled - position
            if left == 0 && offset == end { return false }
            buffer.withUnsafeMutableBytes { b in
                if left > 0 { b.baseAddress!.copyMemory(from: b.baseAddress! + position, byteCount: left) }
            }
            if buffer.count < n { buffer.append(contentsOf: repeatElement(0, count: n - buffer.count)) }
            position = 0
            filled = left
            while filled < n {
                let want = min(buffer.count - filled, Int(end - offset))
                guard want > 0 else { throw InputError(file: "sort file", message: "truncated entry") }
                let got = try buffer.withUnsafeMutableBytes {
                    try file.read(at: offset, into: UnsafeMutableRawBufferPointer(rebasing: $0[filled..<(filled + want)]))
                }
                guard got > 0 else { throw InputError(file: "sort file", message: "truncated entry") }
                filled += got
                offset += Int64(got)
            }
            return true
        }
    }
}
