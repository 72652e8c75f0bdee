import DumpKit
import JSONStream

/// One value an import writes: a path relative to the import's target and the value as compact JSON.
public struct ImportEntry: Sendable, Equatable {
    public var path: [String]
    public var json: [UInt8]
}

/// One multi-path `PATCH` of an import, held as its body: one buffer per chunk, not an object per
/// value, so chunks in flight cost their bytes and no more.
public struct ImportChunk: Sendable, Equatable {
    /// The chunk's number, counted from 0 in dump order (the journal's key).
    public var index: Int
    /// `{"a/b":VALUE,...}`: keys are paths relative to the target (keys cannot hold `/`).
    public var body: [UInt8]
    /// How many values the body writes.
    public var count: Int
    /// A `--replace` deletion (values `null`): every chunk before it must be committed before it is
    /// sent, and none after it before it is.
    public var isBarrier: Bool

    /// The values the body writes, read back from it (to split a chunk the database refused).
    public var entries: [ImportEntry] {
        var result: [ImportEntry] = []
        forEachMember { path, reader in
            let sink = MemoryByteSink()
            let writer = JSONWriter(sink: sink)
            try reader.transfer(to: writer)
            try writer.flush()
            result.append(ImportEntry(path: path, json: sink.bytes))
        }
        return result
    }

    /// The JSON Pointers of the values the body writes (for error messages).
    public var pointers: [String] {
        var result: [String] = []
        forEachMember { path, reader in
            result.append(JSONPointer.string(path))
            try reader.skipValue()
        }
        return result
    }

    /// Calls `body` with each member's path, the reader at its value (which `body` must consume).
    private func forEachMember(_ each: ([String], JSONReader) throws -> Void) {
        let reader = JSONReader(bytes: body)
        guard (try? reader.next()) == .beginObject else { return }
        while (try? reader.next()) == .name {
            let path = reader.stringValue.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            guard (try? each(path, reader)) != nil else { return }
        }
    }

    /// The PATCH body of `entries`.
    static func body(_ entries: [ImportEntry]) -> [UInt8] {
        let sink = MemoryByteSink()
        let writer = JSONWriter(sink: sink)
        try? writer.beginObject()
        for e in entries {
            try? writer.name(e.path.joined(separator: "/"))
            try? e.json.withUnsafeBytes { try writer.value(compactJSON: $0) }
        }
        try? writer.endObject()
        try? writer.flush()
        return sink.bytes
    }
}

/// Cuts a streamed dump into multi-path PATCH chunks of at most `chunkSize` bytes, at the deepest
/// paths that keep each value whole under the limit, with memory bounded by about the chunk size.
///
/// Each open container keeps its finished members (compact JSON) until it ends, when it becomes one
/// member of its parent; when what all open containers keep passes the chunk size, the outermost
/// one is "opened up": its finished members become entries of their own and so will the rest of its
/// members. Nulls and empty containers are left out (writing them would delete).
///
/// - `merge` (the default): every container is written member by member when it closes (or when it
///   is opened up), so each leaf is its own entry and nothing the dump does not name is ever
///   overwritten. An object with `.value` (a leaf with a priority, as `format=export` writes it) is
///   the one container written whole.
/// - `replace`: the top-level children are written whole when they fit; one that does not is first
///   deleted by a barrier chunk (`{"T": null}`) and then written in pieces.
///
/// NDJSON records (`{"path": "/a/b", "value": ...}`, as `convert` writes them) are cut the same way,
/// each record's value under its path: in `replace` mode each record is the unit replaced.
public final class ImportChunker {
    public enum Mode: String, Sendable {
        case merge, replace
    }

    private struct Frame {
        var key: String?
        var isArray: Bool
        var nextIndex = 0
        var openedUp: Bool
        var members: [(key: String, json: [UInt8])] = []
        var bytes = 0
        /// An object's `.priority` while it is written member by member: it goes last, once the
        /// object has children (the database keeps no priority on a location without data).
        var priority: [UInt8]?
        /// The chunk being filled when the container began.
        var startChunk = 0
    }

    // Only this class's own methods touch its state, one at a time: no dynamic exclusivity checks
    // (on every token they cost more than the work itself).
    /// The document being cut: the dump, or the value of the current NDJSON record.
    @exclusivity(unchecked) private var reader: JSONReader?
    private let records: NDJSONReader?
    /// The path of the current record's value (empty for a dump).
    @exclusivity(unchecked) private var prefix: [String] = []
    /// The depth of the containers `replace` writes whole or deletes first: 1 (the top-level
    /// children) for a dump, 0 (the record itself) for a record.
    @exclusivity(unchecked) private var unitDepth = 1
    private let sourceName: String
    public let chunkSize: Int
    public let mode: Mode
    @exclusivity(unchecked) private var frames: [Frame] = []
    @exclusivity(unchecked) private var path: [String] = []
    @exclusivity(unchecked) private var buffered = 0
    @exclusivity(unchecked) private var finishedReading = false
    /// The body of the chunk being filled (`{` and its members so far), and how many it has.
    @exclusivity(unchecked) private var pending: [UInt8] = []
    @exclusivity(unchecked) private var pendingCount = 0
    /// One member `{"a/b":VALUE}` at a time, measured before it joins `pending`.
    private let memberSink = MemoryByteSink()
    private lazy var memberWriter = JSONWriter(sink: memberSink)
    @exclusivity(unchecked) private var ready: [ImportChunk] = []
    @exclusivity(unchecked) private var nextIndex = 0
    private let scratch = MemoryByteSink()
    private lazy var scratchWriter = JSONWriter(sink: scratch)
    /// A kept container as one value, and an NDJSON record's value (a writer is too costly to make
    /// for each: it starts with a 256 KiB buffer).
    private let valueSink = MemoryByteSink()
    private lazy var valueWriter = JSONWriter(sink: valueSink)

    /// The dump's top level must be an object or an array.
    public struct NotAnObject: Error, CustomStringConvertible, Sendable {
        public let source: String
        public var description: String { "\(source): the dump's top level is not an object; import writes the children of an object" }
    }

    /// Cuts the dump `reader` reads (its top level an object or an array).
    public init(reader: JSONReader, chunkSize: Int, mode: Mode) {
        self.reader = reader
        records = nil
        sourceName = reader.sourceName ?? "dump"
        self.chunkSize = max(chunkSize, 64)
        self.mode = mode
    }

    /// Cuts the records `records` reads.
    public init(records: NDJSONReader, chunkSize: Int, mode: Mode) {
        reader = nil
        self.records = records
        sourceName = records.reader.sourceName ?? "records"
        self.chunkSize = max(chunkSize, 64)
        self.mode = mode
    }

    /// The next chunk in dump order, or `nil` at the end.
    public func next() throws -> ImportChunk? {
        while ready.isEmpty, !finishedReading {
            try step()
        }
        if ready.isEmpty, !pending.isEmpty { flushPending() }
        return ready.isEmpty ? nil : ready.removeFirst()
    }

    /// Reads one token (or NDJSON record) and files what it finishes.
    private func step() throws {
        guard let reader else {
            try startNextRecord()
            return
        }
        if frames.isEmpty {
            let k = try reader.next()
            guard k == .beginObject || k == .beginArray else { throw NotAnObject(source: sourceName) }
            // The dump's root (or a record at the root) is written by its children; a record's value
            // is kept whole in replace mode while it fits.
            frames.append(Frame(key: nil, isArray: k == .beginArray, openedUp: prefix.isEmpty, startChunk: nextIndex))
            return
        }
        let k = try reader.next()
        switch k {
        case .name:
            path.append(reader.stringValue)
            return
        case .beginObject, .beginArray:
            let key = takeKey()
            // In merge mode a container holding a container is no leaf with a priority: it is written
            // member by member, so its members so far go first, in the dump's order.
            if mode == .merge, !frames[frames.count - 1].openedUp { try openUp(frames.count - 1) }
            path.append(key)
            frames.append(Frame(key: key, isArray: k == .beginArray, openedUp: false, startChunk: nextIndex))
            return
        case .endObject, .endArray:
            let frame = frames.removeLast()
            buffered -= frame.bytes
            if frames.isEmpty {
                if records != nil {
                    try close(frame, at: prefix)
                    self.reader = nil
                    return
                }
                try close(frame, at: prefix)
                guard try reader.next() == .end else { throw reader.error(.trailingData, "unexpected content after the dump's value") }
                finishedReading = true
                return
            }
            path.removeLast()
            if !frame.openedUp, writesWhole(frame) {
                try finish(key: frame.key!, json: try objectJSON(frame.members))
            } else {
                try close(frame, at: prefix + path + [frame.key!])
            }
        case .string:
            let key = takeKey()
            scratch.removeAll(keepingCapacityUpTo: 1 << 20)
            try scratchWriter.string(utf8: reader.bytes, needsEscaping: reader.lastStringHadEscapes)
            try scratchWriter.flush()
            try finish(key: key, json: scratch.bytes)
        case .number:
            try finish(key: takeKey(), json: Array(reader.bytes))
        case .true: try finish(key: takeKey(), json: Array("true".utf8))
        case .false: try finish(key: takeKey(), json: Array("false".utf8))
        case .null:
            _ = takeKey()
        case .end:
            finishedReading = true
        }
    }

    /// Whether a closed container becomes one value of its parent: always in replace mode, and in
    /// merge mode only a leaf with a priority (`{".value", ".priority"}`).
    private func writesWhole(_ frame: Frame) -> Bool {
        !frame.members.isEmpty && (mode == .replace || frame.members.contains { $0.key == ".value" })
    }

    /// Writes what is left of a closed container that is not a value of its parent: whole at
    /// `containerPath` when it `writesWhole`, else each kept member at its own path, and its
    /// `.priority` last.
    private func close(_ frame: Frame, at containerPath: [String]) throws {
        if !frame.openedUp, writesWhole(frame) {
            try emit(containerPath, try objectJSON(frame.members))
            return
        }
        var priority = frame.priority
        for m in frame.members {
            if m.key == ".priority", !frame.isArray {
                priority = m.json
            } else {
                try emit(containerPath + [m.key], m.json)
            }
        }
        guard let priority else { return }
        let entry = containerPath + [".priority"]
        if nextIndex == frame.startChunk {
            // The children are in the chunk being filled (or this one): one PATCH applies both.
            try emit(entry, priority)
        } else {
            // The children went out in earlier chunks, which may still be in flight: after them.
            flushPending()
            ready.append(
                ImportChunk(index: nextIndex, body: ImportChunk.body([ImportEntry(path: entry, json: priority)]), count: 1, isBarrier: true)
            )
            nextIndex += 1
        }
    }

    /// Takes the next NDJSON record: a leaf is one entry, a container becomes the document to cut.
    private func startNextRecord() throws {
        guard let record = try records?.next(passThrough: nil) else {
            finishedReading = true
            return
        }
        guard let value = record.value, !value.isNull else { return }
        valueSink.removeAll(keepingCapacityUpTo: 1 << 20)
        valueWriter.reset()
        try valueWriter.value(value)
        try valueWriter.flush()
        switch value {
        case .object, .array:
            prefix = record.path
            unitDepth = record.path.isEmpty ? 1 : 0
            reader = JSONReader(bytes: valueSink.bytes)
        default:
            guard !record.path.isEmpty else { throw NotAnObject(source: sourceName) }
            try emit(record.path, valueSink.bytes)
        }
    }

    /// The key of the value that starts now: the name just read, or the array index.
    private func takeKey() -> String {
        if frames[frames.count - 1].isArray {
            let i = frames[frames.count - 1].nextIndex
            frames[frames.count - 1].nextIndex += 1
            return String(i)
        }
        return path.removeLast()
    }

    /// Files a finished value: into its container while that keeps members, else as an entry.
    private func finish(key: String, json: [UInt8]) throws {
        let top = frames.count - 1
        if frames[top].openedUp {
            if key == ".priority", !frames[top].isArray {
                frames[top].priority = json
            } else {
                try emit(prefix + path + [key], json)
            }
            return
        }
        frames[top].members.append((key, json))
        let size = key.utf8.count + json.count + 4
        frames[top].bytes += size
        buffered += size
        while buffered > chunkSize, let outer = frames.firstIndex(where: { !$0.openedUp }) {
            try openUp(outer)
        }
    }

    /// Turns the kept members of the container at `index` into entries; its later members follow as entries too.
    private func openUp(_ index: Int) throws {
        // frames[i] (i >= 1) is the container at path[..<i]; the root is frames[0].
        let containerPath = prefix + path[..<index]
        if mode == .replace, index == unitDepth {
            // A unit too large to write whole: delete it first, in a chunk of its own.
            flushPending()
            ready.append(
                ImportChunk(
                    index: nextIndex, body: ImportChunk.body([ImportEntry(path: containerPath, json: Array("null".utf8))]),
                    count: 1, isBarrier: true))
            nextIndex += 1
        }
        frames[index].openedUp = true
        let members = frames[index].members
        frames[index].members = []
        buffered -= frames[index].bytes
        frames[index].bytes = 0
        for m in members {
            if m.key == ".priority", !frames[index].isArray {
                frames[index].priority = m.json
            } else {
                try emit(containerPath + [m.key], m.json)
            }
        }
    }

    /// Adds the value `json` at `path` to the chunk being filled, starting a new one when it would
    /// pass the chunk size.
    private func emit(_ path: [String], _ json: [UInt8]) throws {
        memberSink.removeAll(keepingCapacityUpTo: 1 << 20)
        memberWriter.reset()
        try memberWriter.beginObject()
        try memberWriter.name(path.joined(separator: "/"))
        try json.withUnsafeBytes { try memberWriter.value(compactJSON: $0) }
        try memberWriter.endObject()
        try memberWriter.flush()
        let member = memberSink.bytes.dropFirst().dropLast()  // `"a/b":VALUE`
        if !pending.isEmpty, pending.count + 1 + member.count + 1 > chunkSize { flushPending() }
        pending.append(pending.isEmpty ? UInt8(ascii: "{") : UInt8(ascii: ","))
        pending += member
        pendingCount += 1
    }

    private func flushPending() {
        guard !pending.isEmpty else { return }
        pending.append(UInt8(ascii: "}"))
        ready.append(ImportChunk(index: nextIndex, body: pending, count: pendingCount, isBarrier: false))
        nextIndex += 1
        pending = []
        pendingCount = 0
    }

    /// `{"k":v,...}` from kept members (arrays are written as objects with integer keys, which the
    /// database stores alike).
    private func objectJSON(_ members: [(key: String, json: [UInt8])]) throws -> [UInt8] {
        valueSink.removeAll(keepingCapacityUpTo: 1 << 20)
        valueWriter.reset()
        try valueWriter.beginObject()
        for m in members {
            try valueWriter.name(m.key)
            try m.json.withUnsafeBytes { try valueWriter.value(compactJSON: $0) }
        }
        try valueWriter.endObject()
        try valueWriter.flush()
        return valueSink.bytes
    }
}
