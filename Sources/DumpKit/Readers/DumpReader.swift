import JSONStream

/// Streams a dump tree and yields the subtrees that path patterns match as records; everything else
/// is passed through token by token without being built in memory.
public final class DumpReader: RecordReader {
    public let reader: JSONReader
    public var bytesConsumed: Int64 { reader.bytesConsumed }
    public var patterns: [PathPattern] { walk.patterns }
    private var walk: PatternWalk
    private var started = false
    private var finished = false
    /// Whether records come with their value. When false, a record's `value` is nil and the reader
    /// stands before it: the caller reads it (`reader.readValue(into:)`, `skipValue()`) before the
    /// next call.
    public var readsRecordValues = true
    /// Whether records come with their pattern's captures (else empty).
    public var readsRecordCaptures = true

    /// Reads `source`; `patterns` name the records (none: the whole dump passes through).
    public init(source: JSONByteSource, patterns: [PathPattern], options: JSONReader.Options = .init(), sourceName: String? = nil) {
        reader = JSONReader(source: source, options: options, sourceName: sourceName)
        walk = PatternWalk(patterns: patterns)
    }

    public func next(passThrough sink: PassThroughSink?) throws -> Record? {
        if !started {
            started = true
            if let record = try readRoot(sink) { return record }
        }
        while let key = try walk.nextKey(reader, sink: sink) {
            let level = walk.levels[walk.levels.count - 1]
            let (exact, deeper) = walk.match(key, in: level)
            if let exact {
                var recordPath = walk.path
                recordPath.append(key)
                let captures = readsRecordCaptures ? walk.patterns[exact].match(recordPath) ?? [:] : [:]
                return Record(path: recordPath, captures: captures, value: try recordValue())
            }
            let next = try reader.peek()
            if !deeper.isEmpty && (next == .beginObject || next == .beginArray) {
                if level.isObject { try sink?.name(key) }
                try reader.next()
                try sink?.beginContainer(isObject: next == .beginObject)
                walk.open(PatternWalk.Level(isObject: next == .beginObject, active: deeper), key: key)
                continue
            }
            if let sink {
                if level.isObject { try sink.name(key) }
                try sink.transferValue(from: reader)
                continue
            }
            return Record(path: walk.path + [key], value: try recordValue())
        }
        if !finished {
            finished = true
            let k = try reader.next()
            guard k == .end else { throw reader.error(.trailingData, "unexpected data after the JSON value") }
        }
        return nil
    }

    /// Handles the root value: a record itself, a container to descend into, or pass-through.
    private func readRoot(_ sink: PassThroughSink?) throws -> Record? {
        let k = try reader.peek()
        if patterns.contains(where: { $0.depth == 0 }) {
            return Record(path: [], value: try recordValue())
        }
        if !patterns.isEmpty && (k == .beginObject || k == .beginArray) {
            try reader.next()
            try sink?.beginContainer(isObject: k == .beginObject)
            walk.open(PatternWalk.Level(isObject: k == .beginObject, active: Array(patterns.indices)), key: nil)
            return nil
        }
        if let sink {
            try sink.transferValue(from: reader)
            return nil
        }
        return Record(path: [], value: try recordValue())
    }

    /// The value of the record the reader stands before, unless the caller reads it.
    private func recordValue() throws -> JSONValue? {
        readsRecordValues ? try reader.readValue() : nil
    }
}
