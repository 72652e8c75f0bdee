import Dispatch
import Foundation
import JSONSchema
import JSONStream

/// Checks records against their schemas on a thread of its own while the caller reads the next
/// ones, so that `validate` keeps two cores busy: reading (tokens, tapes, the limit checks) on the
/// caller's thread, schema evaluation on this one.
///
/// Records travel in batches of tapes (up to `batchRecords` records or `batchBytes` of tape) through
/// a ring of `batchCount` batches, reused. Each record carries the findings the caller made before
/// it (the limit checks), and the checker hands them on just before the record's schema findings,
/// so findings come out in the order a single thread would produce them.
final class RecordSchemaChecker: @unchecked Sendable {
    // Small enough for the batches in flight to stay in the caches.
    static let batchRecords = 256
    static let batchBytes = 1 << 20
    static let batchCount = 3

    /// Records read onto tapes, with their paths and the findings made before each. One thread at a
    /// time uses a batch (handed over under the lock): no dynamic exclusivity checks.
    private final class Batch {
        @exclusivity(unchecked) var tapes: [JSONTape] = []
        @exclusivity(unchecked) var paths: [[String]] = []
        @exclusivity(unchecked) var findingsBefore: [[Finding]] = []
        @exclusivity(unchecked) var count = 0
        @exclusivity(unchecked) var bytes = 0
    }

    private let schemas: [SchemaBinding]
    /// Receives the findings, on the checker's thread (until `finish()` returns).
    private let emit: (Finding) -> Void
    /// Per schema, whether it was applied to some value; written by the checker's thread, to be read
    /// after `finish()`.
    @exclusivity(unchecked) private(set) var applied: [Bool]
    /// The batch the caller fills (only the caller touches it and `isFinished`).
    @exclusivity(unchecked) private var filling: Batch
    @exclusivity(unchecked) private var isFinished = false
    // Shared under `lock`: batches to fill, and filled batches to check (nil: no more).
    private let lock = NSLock()
    private var free: [Batch]
    private var ready: [Batch?] = []
    private let freeCount = DispatchSemaphore(value: 0)
    private let readyCount = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    /// Starts the checker's thread; every schema applies to each value its pattern matches.
    init(schemas: [SchemaBinding], emit: @escaping (Finding) -> Void) {
        self.schemas = schemas
        self.emit = emit
        applied = Array(repeating: false, count: schemas.count)
        let batches = (0..<Self.batchCount).map { _ in Batch() }
        filling = batches[0]
        free = Array(batches.dropFirst())
        // Signalled rather than created with a count (libdispatch traps when a semaphore is freed
        // below its initial value).
        for _ in free { freeCount.signal() }
        DispatchQueue.global().async { [self] in
            check()
            finished.signal()
        }
    }

    /// The tape to read the next record onto.
    func nextTape() -> JSONTape {
        let b = filling
        if b.count == b.tapes.count {
            b.tapes.append(JSONTape())
            b.paths.append([])
            b.findingsBefore.append([])
        }
        return b.tapes[b.count]
    }

    /// Hands over the record just read onto `nextTape()`, found at `path`, with the findings the
    /// caller made since the previous record (taken; `findings` is left empty).
    func submit(path: [String], findingsBefore findings: inout [Finding]) {
        let b = filling
        b.paths[b.count] = path
        // The checker left the slot empty.
        if !findings.isEmpty { swap(&b.findingsBefore[b.count], &findings) }
        b.bytes += b.tapes[b.count].byteCount
        b.count += 1
        if b.count == Self.batchRecords || b.bytes >= Self.batchBytes { ship() }
    }

    /// Checks the records submitted so far and waits until they are checked and their findings
    /// emitted; also to be called when reading failed. Later calls return at once.
    func finish() {
        if isFinished { return }
        isFinished = true
        ship()
        lock.withLock { ready.append(nil) }
        readyCount.signal()
        finished.wait()
    }

    /// Passes the filled batch to the checker's thread and takes a free one.
    private func ship() {
        guard filling.count > 0 else { return }
        let b = filling
        lock.withLock { ready.append(b) }
        readyCount.signal()
        freeCount.wait()
        filling = lock.withLock { free.removeLast() }
        filling.count = 0
        filling.bytes = 0
    }

    /// The checker's thread: batches in order until the end.
    private func check() {
        while true {
            readyCount.wait()
            guard let batch = lock.withLock({ ready.removeFirst() }) else { return }
            for i in 0..<batch.count {
                if !batch.findingsBefore[i].isEmpty {
                    for f in batch.findingsBefore[i] { emit(f) }
                    batch.findingsBefore[i].removeAll(keepingCapacity: true)
                }
                check(batch.tapes[i], at: batch.paths[i])
                // Freed here rather than on the reading thread when the slot is reused.
                batch.paths[i] = []
            }
            lock.withLock { free.append(batch) }
            freeCount.signal()
        }
    }

    /// Emits the schema findings of the record on `tape`: of every schema whose pattern matches its
    /// path, and of those whose pattern matches values inside it (the reader makes records of the
    /// outer pattern only), for each such value.
    private func check(_ tape: JSONTape, at path: [String]) {
        // The reader yields only records some pattern matches: with one schema, that schema's.
        if schemas.count == 1 {
            applied[0] = true
            check(tape, at: 0, against: 0, record: path, below: [])
            return
        }
        for b in schemas.indices {
            if schemas[b].pattern.matches(path) {
                applied[b] = true
                check(tape, at: 0, against: b, record: path, below: [])
            } else if schemas[b].pattern.isPrefix(path) {
                var below: [String] = []
                forEachMatch(of: schemas[b].pattern, in: tape, at: 0, depth: path.count, below: &below) { index, below in
                    applied[b] = true
                    check(tape, at: index, against: b, record: path, below: below)
                }
            }
        }
    }

    /// Emits the findings of schema `b` for the value at `index` on the tape of the record at
    /// `record` (the value is at the keys `below` inside it), each located by its tape entry; the
    /// pointers are made only for a value with findings.
    private func check(_ tape: JSONTape, at index: Int, against b: Int, record: [String], below: [String]) {
        let binding = schemas[b]
        guard !binding.schema.isValid(tape, at: index) else { return }
        let recordPrefix = JSONPointer.string(record)
        let pointerPrefix = below.isEmpty ? recordPrefix : recordPrefix + JSONPointer.string(below)
        for violation in binding.schema.validate(tape, at: index, pointerPrefix: pointerPrefix) {
            var f = Finding(violation)
            let at = Self.location(of: f.pointer.dropFirst(recordPrefix.count), in: tape)
            f.line = at.line
            f.column = at.column
            emit(binding.tagged(f))
        }
    }

    /// Calls `body` with the tape index and the keys below the record of every value inside the
    /// value at `index` (at `depth` keys from the root) that `pattern` matches.
    private func forEachMatch(
        of pattern: PathPattern, in tape: JSONTape, at index: Int, depth: Int, below: inout [String], _ body: (Int, [String]) -> Void
    ) {
        if depth == pattern.depth {
            body(index, below)
            return
        }
        let entry = tape[index]
        guard entry.kind == .object || entry.kind == .array else { return }
        var j = index + 1
        for n in 0..<Int(entry.count) {
            let key = entry.kind == .object ? tape.string(j) : String(n)
            let value = entry.kind == .object ? j + 1 : j
            if pattern.segmentMatches(key, at: depth) {
                below.append(key)
                forEachMatch(of: pattern, in: tape, at: value, depth: depth + 1, below: &below, body)
                below.removeLast()
            }
            j = Int(tape[value].next)
        }
    }

    /// The line and column of the value at `pointer` (relative to the record on `tape`), found as
    /// `JSONValue.value(at:)` would find it; the record's own when the pointer names no value.
    static func location(of pointer: Substring, in tape: JSONTape) -> (line: Int, column: Int) {
        let i = JSONPointer.segments(String(pointer)).flatMap { tape.index(at: $0) } ?? 0
        return (Int(tape[i].line), Int(tape[i].column))
    }
}
