import Foundation
import JSONStream
import Synchronization
import Workers

/// Runs reader -> transformers -> writer, records in input order, memory bounded.
///
/// Cheap transformers run inline on the reading thread. When a transformer declares
/// `maxConcurrency > 1`, records go through an ordered window in batches of consecutive records
/// (at most `batchRecords`, and no more once `batchBytes` of input are in one): `maxConcurrency`
/// worker threads transform them, up to `batchesPerWorker` batches per worker are read ahead,
/// results leave in input order, and the first error stops reading, waits for the batches in
/// flight and is rethrown (the caller then discards its output). Memory is about
/// `batchesPerWorker` x workers x (`batchBytes` + the largest record) of batches read ahead or in
/// work, plus what a step makes of them (finished batches wait in order to be written: up to twice
/// as many, holding only their results).
public final class Pipeline {
    public let transformers: [RecordTransformer]
    /// Called on the reading thread after each record is read.
    public var onRecord: (() -> Void)?
    /// Records read so far.
    public private(set) var recordsRead = 0
    /// Set when records come without their values (`DumpReader.readsRecordValues` off): each
    /// record's value is read from this reader. With worker threads it is copied as compact JSON on
    /// the reading thread and built into a `JSONValue` on a worker, so the reading thread only scans.
    public var recordValues: JSONReader?

    public init(transformers: [RecordTransformer] = []) {
        self.transformers = transformers
    }

    /// At most this many records go to a worker thread at once.
    public static let batchRecords = 32
    /// A batch takes no more records once it holds this many bytes of input.
    public static let batchBytes: Int64 = 1 << 20
    /// Batches read ahead per worker thread: the reader goes on while workers are busy, and workers
    /// find work while the reader is slow, so neither waits for the other as long as it can.
    public static let batchesPerWorker = 4

    /// The window size: the smallest `maxConcurrency` above 1, or 1 when every step is cheap.
    public var window: Int {
        transformers.map(\.maxConcurrency).filter { $0 > 1 }.min() ?? 1
    }

    /// Streams every record from `reader` through the transformers to `writer`, then finishes it.
    public func run(reader: some RecordReader, writer: RecordWriter) throws {
        if window > 1 {
            let steps = UncheckedBox(self)  // only its immutable transformers are used
            let valueOptions = recordValues.map {
                JSONReader.Options(maxDepth: $0.options.maxDepth, maxValueBytes: $0.options.maxValueBytes, multipleDocuments: true)
            }
            try runWindowed(reader: reader, writer: writer, window: window) { records, values in
                var records = records
                if let values, let valueOptions {
                    let reader = JSONReader(bytes: values, options: valueOptions)
                    for i in records.indices { records[i].value = try reader.readValue() }
                }
                return try steps.value.apply(batch: records)
            }
        } else {
            while var record = try reader.next(passThrough: writer.passThrough) {
                recordsRead += 1
                if let recordValues { record.value = try recordValues.readValue() }
                onRecord?()
                try write(apply(record), of: record.path, to: writer)
            }
        }
        try writer.finish()
    }

    /// Streams every unit from `reader` through `first`, which makes records of them, then through
    /// the transformers to `writer`, and finishes it. (`recordValues` does not apply.)
    public func run<Unit>(reader: some UnitReader<Unit>, first: some UnitTransformer<Unit>, writer: RecordWriter) throws {
        let window = min(max(1, first.maxConcurrency), transformers.map(\.maxConcurrency).filter { $0 > 1 }.min() ?? .max)
        precondition(recordValues == nil, "recordValues is for records")
        let steps = UncheckedBox(self)  // only its immutable transformers are used
        let work: @Sendable ([Unit], [UInt8]?) throws -> [[Record]] = { units, _ in
            let records: [[Record]]
            do {
                records = try first.transform(units: units)
            } catch let e as BatchRecordError {
                throw PipelineError(step: first.name, pointer: JSONPointer.string(units[e.index].path), underlying: e.underlying)
            } catch {
                throw PipelineError(step: first.name, pointer: JSONPointer.string(units.first?.path ?? []), underlying: error)
            }
            precondition(
                records.count == units.count, "\(first.name): transform(units:) gave \(records.count) results for \(units.count) units")
            return try steps.value.apply(groups: records)
        }
        if window > 1 {
            try runWindowed(reader: reader, writer: writer, window: window, work: work)
        } else {
            while let unit = try reader.next(passThrough: writer.passThrough) {
                recordsRead += 1
                onRecord?()
                try write(work([unit], nil)[0], of: unit.path, to: writer)
            }
        }
        try writer.finish()
    }

    /// Writes what the unit read at `path` became; nothing deletes it.
    private func write(_ outputs: [Record], of path: [String], to writer: RecordWriter) throws {
        if outputs.isEmpty { try writer.write(Record(path: path, value: nil), from: path) }
        for out in outputs { try writer.write(out, from: path) }
    }

    /// Applies every transformer in order to each of consecutive records.
    func apply(batch records: [Record]) throws -> [[Record]] {
        if records.count == 1 { return [try apply(records[0])] }
        return try apply(groups: records.map { [$0] })
    }

    /// Applies every transformer in order to groups of consecutive records; each group's results
    /// stay together.
    func apply(groups: [[Record]]) throws -> [[Record]] {
        var current = groups
        for t in transformers {
            // Each record's outputs so far, flattened for the step, then grouped back by record.
            let flat = current.flatMap { $0 }
            let results: [[Record]]
            do {
                results = try t.transform(batch: flat)
            } catch let e as PipelineError {
                throw e
            } catch let e as BatchRecordError {
                if let inner = e.underlying as? PipelineError { throw inner }
                throw PipelineError(step: t.name, pointer: flat[e.index].pointer, underlying: e.underlying)
            } catch {
                throw PipelineError(step: t.name, pointer: flat.first?.pointer ?? "", underlying: error)
            }
            precondition(
                results.count == flat.count, "\(t.name): transform(batch:) gave \(results.count) results for \(flat.count) records")
            var next: [[Record]] = []
            var index = 0
            for group in current {
                next.append(results[index..<index + group.count].flatMap { $0 })
                index += group.count
            }
            current = next
        }
        return current
    }

    /// Applies every transformer in order.
    func apply(_ record: Record) throws -> [Record] {
        if transformers.count == 1 {
            // The usual single step (migrate, validate): no intermediate lists.
            let t = transformers[0]
            do {
                return try t.transform(record)
            } catch let e as PipelineError {
                throw e
            } catch {
                throw PipelineError(step: t.name, pointer: record.pointer, underlying: error)
            }
        }
        var current = [record]
        for t in transformers {
            var next: [Record] = []
            for r in current {
                do {
                    next += try t.transform(r)
                } catch let e as PipelineError {
                    throw e
                } catch {
                    throw PipelineError(step: t.name, pointer: r.pointer, underlying: error)
                }
            }
            current = next
        }
        return current
    }

    /// Runs `work` on batches of units on `window` worker threads, writing results in input order;
    /// with `recordValues`, `work` also gets the batch's values as compact JSON, one a line.
    private func runWindowed<Reader: UnitReader>(
        reader: Reader, writer: RecordWriter, window: Int, work: @escaping @Sendable ([Reader.Unit], [UInt8]?) throws -> [[Record]]
    ) throws {
        let recorder = writer.passThrough.map { PassThroughRecorder(target: $0) }
        var queue: [Slot] = []
        var head = 0
        let depth = window * Self.batchesPerWorker
        let inFlight = DispatchSemaphore(value: depth)
        let pool = WorkerPool(threads: window)
        defer { pool.stop() }
        let group = DispatchGroup()
        let cancelled = Atomic(false)
        let renders = writer.takesCompactJSON
        var batch: [Reader.Unit] = []
        var preceding: [[PassThroughRecorder.Event]?] = []  // content read before each record of the batch
        var batchStart: Int64 = 0  // where the batch's first record began
        var consumed = reader.bytesConsumed
        // With `recordValues`, the batch's values as compact JSON, one a line.
        let values = MemoryByteSink()
        let valueWriter = JSONWriter(sink: values)

        func drain(all: Bool) throws {
            while head < queue.count {
                let slot = queue[head]
                if !all && !slot.isDone && queue.count - head <= depth * 2 { return }
                switch try slot.wait() {
                case .passThrough(let events): try recorder?.replay(events)
                case .records(let job, let batch):
                    for (index, outputs) in batch.outputs.enumerated() {
                        if let events = job.preceding[index] { try recorder?.replay(events) }
                        if outputs.isEmpty { try writer.write(Record(path: job.originals[index], value: nil), from: job.originals[index]) }
                        for output in outputs {
                            switch output {
                            case .record(let r): try writer.write(r, from: job.originals[index])
                            case .json(let path, let range):
                                try batch.json.withUnsafeBytes {
                                    try writer.write(
                                        path: path, compactJSON: UnsafeRawBufferPointer(rebasing: $0[range]), from: job.originals[index])
                                }
                            }
                        }
                    }
                }
                queue[head] = .finished
                head += 1
                if head > 1024 && head * 2 > queue.count {
                    queue.removeFirst(head)
                    head = 0
                }
            }
        }

        /// Hands the records gathered so far to a worker thread.
        func dispatch() throws {
            guard !batch.isEmpty else { return }
            let records = batch
            let json: [UInt8]? = try recordValues.map { _ in
                try valueWriter.flush()
                defer {
                    values.removeAll(keepingCapacityUpTo: 4 << 20)
                    valueWriter.reset()
                }
                return values.bytes
            }
            let job = Job(originals: records.map(\.path), preceding: preceding)
            batch = []
            preceding = []
            queue.append(.job(job))
            inFlight.wait()
            group.enter()
            pool.submit {
                defer {
                    inFlight.signal()
                    group.leave()
                }
                if cancelled.load(ordering: .relaxed) {
                    job.fail(CancellationError())
                    return
                }
                do {
                    job.succeed(try BatchOutput(work(records, json), rendering: renders))
                } catch {
                    cancelled.store(true, ordering: .relaxed)
                    job.fail(error)
                }
            }
            try drain(all: false)
        }

        do {
            while let record = try reader.next(passThrough: recorder) {
                recordsRead += 1
                onRecord?()
                if batch.isEmpty { batchStart = consumed }
                if let recordValues {
                    try recordValues.transfer(to: valueWriter)
                    try valueWriter.raw("\n")
                }
                consumed = reader.bytesConsumed
                batch.append(record)
                preceding.append(recorder?.take())  // written just before the record
                if batch.count >= Self.batchRecords || consumed - batchStart >= Self.batchBytes { try dispatch() }
            }
            try dispatch()
            if let events = recorder?.take() { queue.append(.ready(.passThrough(events))) }
            try drain(all: true)
        } catch {
            cancelled.store(true, ordering: .relaxed)
            group.wait()
            // Report the earliest failing record rather than a cancellation.
            for slot in queue[head...] {
                if case .job(let j) = slot, let e = j.error, !(e is CancellationError) { throw e }
            }
            throw error
        }
    }
}

/// One entry of the ordered window: pass-through content or a record's transformation.
private enum Slot {
    enum Output {
        case passThrough([PassThroughRecorder.Event])
        /// A batch and what its records became.
        case records(Job, BatchOutput)
    }

    case ready(Output)
    case job(Job)
    case finished

    var isDone: Bool {
        switch self {
        case .ready, .finished: return true
        case .job(let j): return j.isDone
        }
    }

    func wait() throws -> Output {
        switch self {
        case .ready(let o): return o
        case .job(let j): return .records(j, try j.wait())
        case .finished: return .passThrough([])
        }
    }
}

/// What the records of a batch became, in input order; values the writer takes as compact JSON
/// are written on the worker thread, so the writing thread only copies their bytes.
private struct BatchOutput {
    enum Output {
        case record(Record)
        /// A record at `path` whose value is `json[range]`.
        case json(path: [String], Range<Int>)
    }

    /// Each input record's outputs.
    var outputs: [[Output]]
    var json: [UInt8] = []

    /// A string longer than this keeps its record a record: the writing thread writes it in pieces,
    /// where compact JSON here would hold it a second time.
    static let longString = 1 << 20

    /// The records as they are, or (`rendering`) with their values written as compact JSON into
    /// one buffer; deleted records, and those holding a long string, stay records.
    init(_ records: [[Record]], rendering: Bool) throws {
        guard rendering else {
            outputs = records.map { $0.map(Output.record) }
            return
        }
        let sink = MemoryByteSink()
        let writer = JSONWriter(sink: sink)
        outputs = try records.map { group in
            try group.map { record in
                guard let value = record.value, !value.holdsString(longerThan: Self.longString) else { return .record(record) }
                let start = writer.bytesWritten
                try writer.value(value)
                return .json(path: record.path, start..<writer.bytesWritten)
            }
        }
        try writer.flush()
        json = sink.bytes
    }
}

extension JSONValue {
    /// Whether the value is or contains a string of more than `limit` bytes of UTF-8.
    fileprivate func holdsString(longerThan limit: Int) -> Bool {
        switch self {
        case .string(let s): return s.utf8.count > limit
        case .array(let elements): return elements.contains { $0.holdsString(longerThan: limit) }
        case .object(let object): return object.members.contains { $0.value.holdsString(longerThan: limit) }
        case .null, .bool, .number: return false
        }
    }
}

/// A batch of records being transformed on a worker thread.
private final class Job: @unchecked Sendable {
    /// The path of each record as read.
    let originals: [[String]]
    /// Content outside records read before each record, written just before its results.
    let preceding: [[PassThroughRecorder.Event]?]
    private let condition = NSCondition()
    private var result: BatchOutput?
    private(set) var error: Error?

    init(originals: [[String]], preceding: [[PassThroughRecorder.Event]?]) {
        self.originals = originals
        self.preceding = preceding
    }

    var isDone: Bool {
        condition.lock()
        defer { condition.unlock() }
        return result != nil || error != nil
    }

    func succeed(_ output: BatchOutput) {
        condition.lock()
        result = output
        condition.broadcast()
        condition.unlock()
    }

    func fail(_ e: Error) {
        condition.lock()
        error = e
        condition.broadcast()
        condition.unlock()
    }

    func wait() throws -> BatchOutput {
        condition.lock()
        defer { condition.unlock() }
        while result == nil && error == nil { condition.wait() }
        if let error { throw error }
        return result!
    }
}

/// Hands a value to a worker thread; used for the pipeline, whose `apply` only reads immutable
/// transformers (which are `Sendable`).
private struct UncheckedBox<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}

/// Records pass-through content while records are in flight, and replays it in order.
final class PassThroughRecorder: PassThroughSink {
    enum Event {
        case begin(isObject: Bool)
        case end
        case name(String)
        /// A value, as compact JSON.
        case json([UInt8])
    }

    private let target: PassThroughSink
    private var events: [Event] = []
    /// One writer for every transferred value; `bytes` is emptied after each.
    private let bytes = MemoryByteSink()
    private lazy var writer = JSONWriter(sink: bytes)

    init(target: PassThroughSink) { self.target = target }

    func beginContainer(isObject: Bool) throws { events.append(.begin(isObject: isObject)) }
    func endContainer() throws { events.append(.end) }
    func name(_ key: String) throws { events.append(.name(key)) }
    func transferValue(from reader: JSONReader) throws {
        try reader.transfer(to: writer)
        try writer.flush()
        events.append(.json(bytes.bytes))
        bytes.removeAll()
    }
    func value(compactJSON json: UnsafeRawBufferPointer) throws { events.append(.json(Array(json))) }

    /// The events recorded since the last call.
    func take() -> [Event]? {
        guard !events.isEmpty else { return nil }
        defer { events = [] }
        return events
    }

    /// Sends recorded events to the real sink.
    func replay(_ list: [Event]) throws {
        for e in list {
            switch e {
            case .begin(let o): try target.beginContainer(isObject: o)
            case .end: try target.endContainer()
            case .name(let n): try target.name(n)
            case .json(let json): try json.withUnsafeBytes { try target.value(compactJSON: $0) }
            }
        }
    }
}
