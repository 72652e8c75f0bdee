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
/// Each open container keeps its finished members until it ends, when it becomes one member of its
/// parent; when what all open containers keep passes the chunk size, the outermost one is "opened
/// up": its finished members become entries of their own and so will the rest of its members.
/// Nulls and empty containers are left out (writing them would delete).
///
/// - `merge` (the default): every container is written member by member when it closes (or when it
///   is opened up), so each leaf is its own entry and nothing the dump does not name is ever
///   overwritten. An object with `.value` (a leaf with a priority, as `format=export` writes it) is
///   the one container written whole, even past the chunk size.
/// - `replace`: the top-level children are written whole when they fit; one that does not is first
///   deleted by a barrier chunk (`{"T": null}`) and then written in pieces.
///
/// NDJSON records (`{"path": "/a/b", "value": ...}`, as `convert` writes them) are cut the same way,
/// each record's value under its path: in `replace` mode each record is the unit replaced.
///
/// The kept containers are held as the text they are written as, one after the other in one
/// buffer (`{"k":v,...` with the next one open inside the last), so a value kept whole is written
/// once and copied once more, into its chunk.
public final class ImportChunker {
    public enum Mode: String, Sendable {
        case merge, replace
    }

    private struct Frame {
        var key: String?
        var isArray: Bool
        var nextIndex = 0
        var openedUp: Bool
        /// An object's `.priority` once it is opened up: it goes last, once the object has children
        /// (the database keeps no priority on a location without data).
        var priority: [UInt8]?
        /// The chunk being filled when the container began.
        var startChunk = 0
        // A kept container's place in `kept`:
        /// Where its member in its kept parent begins (at the comma before it, if any), else 0.
        var memberStart = 0
        /// Its key in its kept parent (escaped, without quotes).
        var keyRange = 0..<0
        /// Its `{`.
        var start = 0
        /// Its first finished member in `members`.
        var firstMember = 0
        /// The size of its finished members, counted in `buffered`.
        var bytes = 0
        var hasValueKey = false
    }

    /// A finished member of a kept container: its key (escaped, without quotes) and value in `kept`.
    private struct Member {
        var key: Range<Int>
        var value: Range<Int>
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
    /// The text of the kept containers, outermost first, and their finished members.
    @exclusivity(unchecked) private var kept: [UInt8] = []
    @exclusivity(unchecked) private var members: [Member] = []
    @exclusivity(unchecked) private var buffered = 0
    @exclusivity(unchecked) private var finishedReading = false
    /// The body of the chunk being filled (`{` and its members so far), and how many it has.
    @exclusivity(unchecked) private var pending: [UInt8] = []
    @exclusivity(unchecked) private var pendingCount = 0
    /// The path of the entry being added, escaped as in JSON, without quotes.
    @exclusivity(unchecked) private var entryPath: [UInt8] = []
    @exclusivity(unchecked) private var ready: [ImportChunk] = []
    @exclusivity(unchecked) private var nextIndex = 0
    /// Strings with characters to escape (a writer is too costly to make for each: it starts with
    /// a 256 KiB buffer).
    private let scratch = MemoryByteSink()
    private lazy var scratchWriter = JSONWriter(sink: scratch)
    /// An NDJSON record's value.
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
            let root = Frame(key: nil, isArray: k == .beginArray, openedUp: prefix.isEmpty, startChunk: nextIndex)
            if !root.openedUp { kept.append(UInt8(ascii: "{")) }
            frames.append(root)
            return
        }
        let k = try reader.next()
        switch k {
        case .name:
            path.append(reader.stringValue)
        case .beginObject, .beginArray:
            try begin(key: takeKey(), isArray: k == .beginArray)
        case .endObject, .endArray:
            try end()
        case .string:
            let key = takeKey()
            if reader.lastStringHadEscapes {
                // Copied out of `scratch`, which the key may need.
                var text: [UInt8] = []
                try escaped(reader.bytes) { text = Array($0) }
                try text.withUnsafeBytes { try finish(key: key, text: $0, quoted: true) }
            } else {
                try finish(key: key, text: reader.bytes, quoted: true)
            }
        case .number: try finish(key: takeKey(), text: reader.bytes)
        case .true: try Self.trueText.withUnsafeBytes { try finish(key: takeKey(), text: $0) }
        case .false: try Self.falseText.withUnsafeBytes { try finish(key: takeKey(), text: $0) }
        case .null:
            _ = takeKey()
        case .end:
            finishedReading = true
        }
    }

    private static let trueText = Array("true".utf8)
    private static let falseText = Array("false".utf8)

    /// A container starts as the value of `key`.
    private func begin(key: String, isArray: Bool) throws {
        // In merge mode a container holding a container is no leaf with a priority: it is written
        // member by member, so its members so far go first, in the dump's order.
        if mode == .merge, !frames[frames.count - 1].openedUp { try openUp(frames.count - 1) }
        path.append(key)
        var frame = Frame(key: key, isArray: isArray, openedUp: false, startChunk: nextIndex)
        frame.firstMember = members.count
        if !frames[frames.count - 1].openedUp {
            frame.memberStart = kept.count
            if members.count > frames[frames.count - 1].firstMember { kept.append(UInt8(ascii: ",")) }
            frame.keyRange = appendKey(key)
        }
        frame.start = kept.count
        kept.append(UInt8(ascii: "{"))
        frames.append(frame)
    }

    /// The container on top ends.
    private func end() throws {
        let frame = frames.removeLast()
        buffered -= frame.bytes
        if frames.isEmpty {
            try close(frame, at: prefix)
            if records != nil {
                reader = nil
                return
            }
            guard try reader!.next() == .end else { throw reader!.error(.trailingData, "unexpected content after the dump's value") }
            finishedReading = true
            return
        }
        path.removeLast()
        let top = frames.count - 1
        guard !frame.openedUp, writesWhole(frame) else {
            try close(frame, at: prefix + path + [frame.key!])
            return
        }
        kept.append(UInt8(ascii: "}"))
        if frames[top].openedUp {
            // It was the outermost kept container: all of `kept`.
            try kept[frame.start...].withUnsafeBytes { try finish(key: frame.key!, text: $0) }
            kept.removeAll(keepingCapacity: true)
            members.removeAll(keepingCapacity: true)
            releaseLargeBuffer()
        } else {
            members.removeSubrange(frame.firstMember...)
            try addMember(key: frame.keyRange, keyLength: frame.key!.utf8.count, value: frame.start..<kept.count, to: top)
        }
    }

    /// Whether a closed kept container becomes one value of its parent: always in replace mode,
    /// and in merge mode only a leaf with a priority (`{".value", ".priority"}`).
    private func writesWhole(_ frame: Frame) -> Bool {
        members.count > frame.firstMember && (mode == .replace || frame.hasValueKey)
    }

    /// Writes what is left of a closed container that is not a value of its parent: whole at
    /// `containerPath` when it `writesWhole`, else each kept member at its own path, and its
    /// `.priority` last; then forgets its text.
    private func close(_ frame: Frame, at containerPath: [String]) throws {
        defer {
            if !frame.openedUp {
                kept.removeSubrange(frame.memberStart...)
                members.removeSubrange(frame.firstMember...)
                releaseLargeBuffer()
            }
        }
        if !frame.openedUp, writesWhole(frame) {
            kept.append(UInt8(ascii: "}"))
            setEntryPath(containerPath)
            try kept[frame.start...].withUnsafeBytes { try emit($0) }
            return
        }
        var priority = frame.priority
        if !frame.openedUp {
            priority = try emitMembers(frame.firstMember..<members.count, at: containerPath, isArray: frame.isArray) ?? priority
        }
        guard let priority else { return }
        let entry = containerPath + [".priority"]
        if nextIndex == frame.startChunk {
            // The children are in the chunk being filled (or this one): one PATCH applies both.
            setEntryPath(entry)
            try priority.withUnsafeBytes { try emit($0) }
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
            setEntryPath(record.path)
            try valueSink.bytes.withUnsafeBytes { try emit($0) }
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

    /// Files a finished value, its compact JSON `text` (a string's content when `quoted`): into its
    /// container while that is kept, else as an entry.
    private func finish(key: String, text: UnsafeRawBufferPointer, quoted: Bool = false) throws {
        let top = frames.count - 1
        if frames[top].openedUp {
            if key == ".priority", !frames[top].isArray {
                frames[top].priority = quoted ? [UInt8(ascii: "\"")] + Array(text) + [UInt8(ascii: "\"")] : Array(text)
                return
            }
            setEntryPath(prefix)
            for p in path { addPathComponent(p) }
            // The value of a leaf whose priority came first, and alone passed the chunk size, is
            // written at the leaf's own path (its priority follows, as for any opened-up object).
            if key != ".value" || frames[top].isArray { addPathComponent(key) }
            try emit(text, quoted: quoted)
            return
        }
        if members.count > frames[top].firstMember { kept.append(UInt8(ascii: ",")) }
        let keyRange = appendKey(key)
        let valueStart = kept.count
        if quoted { kept.append(UInt8(ascii: "\"")) }
        kept.append(contentsOf: text)
        if quoted { kept.append(UInt8(ascii: "\"")) }
        try addMember(key: keyRange, keyLength: key.utf8.count, value: valueStart..<kept.count, to: top)
    }

    /// Counts a member just written into the kept container `index` (the innermost kept one),
    /// opening up the outermost kept containers while all they keep passes the chunk size.
    /// `keyLength` is the key's own length, not its escaped text's.
    private func addMember(key: Range<Int>, keyLength: Int, value: Range<Int>, to index: Int) throws {
        members.append(Member(key: key, value: value))
        if isValueKey(key) { frames[index].hasValueKey = true }
        let size = keyLength + value.count + 4
        frames[index].bytes += size
        buffered += size
        // A leaf with a priority (the innermost container, with `.value`) is not opened up
        // (`a/.value` is no path to write): past the chunk size it goes whole, in a chunk of its own.
        while buffered > chunkSize, let outer = frames.firstIndex(where: { !$0.openedUp }),
            !(frames[outer].hasValueKey && outer == frames.count - 1)
        {
            try openUp(outer)
        }
    }

    /// Turns the kept members of the container at `index`, the outermost kept one, into entries;
    /// its later members follow as entries too.
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
        buffered -= frames[index].bytes
        frames[index].bytes = 0
        let first = frames[index].firstMember
        let end = index + 1 < frames.count ? frames[index + 1].firstMember : members.count
        if let priority = try emitMembers(first..<end, at: containerPath, isArray: frames[index].isArray) {
            frames[index].priority = priority
        }
        // Its text goes; the next kept container's, from its `{`, stays.
        let cut = index + 1 < frames.count ? frames[index + 1].start : kept.count
        kept.removeSubrange(..<cut)
        members.removeSubrange(first..<end)
        for j in (index + 1)..<frames.count {
            // The next one's member in this container is gone with it; the rest move down.
            if j == index + 1 {
                frames[j].memberStart = 0
                frames[j].keyRange = 0..<0
            } else {
                frames[j].memberStart -= cut
                frames[j].keyRange = (frames[j].keyRange.lowerBound - cut)..<(frames[j].keyRange.upperBound - cut)
            }
            frames[j].start -= cut
            frames[j].firstMember -= end - first
        }
        for i in members.indices {
            members[i].key = (members[i].key.lowerBound - cut)..<(members[i].key.upperBound - cut)
            members[i].value = (members[i].value.lowerBound - cut)..<(members[i].value.upperBound - cut)
        }
        releaseLargeBuffer()
    }

    /// Writes the kept members `range` of the container at `containerPath` as entries of their own,
    /// except an object's `.priority`, which it returns (it goes after the children).
    private func emitMembers(_ range: Range<Int>, at containerPath: [String], isArray: Bool) throws -> [UInt8]? {
        var priority: [UInt8]?
        setEntryPath(containerPath)
        let base = entryPath.count
        for m in members[range] {
            if !isArray, isPriority(m.key) {
                priority = Array(kept[m.value])
                continue
            }
            entryPath.removeSubrange(base...)
            addEscapedPathComponent(m.key)
            try kept[m.value].withUnsafeBytes { try emit($0) }
        }
        return priority
    }

    /// Gives back the memory a large value took in `kept` once nothing is kept, so that after one
    /// large value the chunker holds about one chunk again.
    private func releaseLargeBuffer() {
        if kept.isEmpty, kept.capacity > max(4 * chunkSize, 1 << 20) { kept = [] }
    }

    /// Adds the value `text` (a string's escaped content when `quoted`) at `entryPath` to the chunk
    /// being filled, starting a new one when it would pass the chunk size.
    private func emit(_ text: UnsafeRawBufferPointer, quoted: Bool = false) throws {
        let member = entryPath.count + 3 + text.count + (quoted ? 2 : 0)  // `"a/b":VALUE`
        if !pending.isEmpty, pending.count + 1 + member + 1 > chunkSize { flushPending() }
        // Each chunk's body is a new buffer (it leaves with the chunk): room for a chunk from the start.
        if pending.isEmpty { pending.reserveCapacity(min(chunkSize, 1 << 22)) }
        pending.append(pending.isEmpty ? UInt8(ascii: "{") : UInt8(ascii: ","))
        pending.append(UInt8(ascii: "\""))
        pending += entryPath
        pending.append(UInt8(ascii: "\""))
        pending.append(UInt8(ascii: ":"))
        if quoted { pending.append(UInt8(ascii: "\"")) }
        pending.append(contentsOf: text)
        if quoted { pending.append(UInt8(ascii: "\"")) }
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

    // MARK: - Paths and keys as JSON text

    /// Makes `entryPath` the path `keys`.
    private func setEntryPath(_ keys: [String]) {
        entryPath.removeAll(keepingCapacity: true)
        for key in keys { addPathComponent(key) }
    }

    /// Adds a key to `entryPath` (`a/b` joined as one JSON string, whose escaping is its keys').
    private func addPathComponent(_ key: String) {
        if !entryPath.isEmpty { entryPath.append(UInt8(ascii: "/")) }
        appendEscaped(key, to: &entryPath)
    }

    /// Adds a key already escaped (one in `kept`) to `entryPath`.
    private func addEscapedPathComponent(_ key: Range<Int>) {
        if !entryPath.isEmpty { entryPath.append(UInt8(ascii: "/")) }
        entryPath += kept[key]
    }

    /// Appends `"key":` to `kept`; returns where the key's escaped text is.
    private func appendKey(_ key: String) -> Range<Int> {
        kept.append(UInt8(ascii: "\""))
        let start = kept.count
        appendEscaped(key, to: &kept)
        let range = start..<kept.count
        kept.append(UInt8(ascii: "\""))
        kept.append(UInt8(ascii: ":"))
        return range
    }

    /// Appends the content of `s` as a JSON string has it, escaped, without quotes.
    private func appendEscaped(_ s: String, to bytes: inout [UInt8]) {
        var s = s
        s.withUTF8 { utf8 in
            if !utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
                bytes.append(contentsOf: utf8)
            } else {
                try? escaped(UnsafeRawBufferPointer(utf8)) { bytes.append(contentsOf: $0) }
            }
        }
    }

    /// Calls `body` with the content of the string `text` escaped, without quotes.
    private func escaped(_ text: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        scratch.removeAll(keepingCapacityUpTo: 1 << 20)
        scratchWriter.reset()
        try scratchWriter.string(utf8: text, needsEscaping: true)
        try scratchWriter.flush()
        try scratch.bytes.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0.dropFirst().dropLast())) }
    }

    private func isPriority(_ key: Range<Int>) -> Bool { kept[key].elementsEqual(".priority".utf8) }
    private func isValueKey(_ key: Range<Int>) -> Bool { kept[key].elementsEqual(".value".utf8) }
}
