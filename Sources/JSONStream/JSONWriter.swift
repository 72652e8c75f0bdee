/// A destination for bytes written by `JSONWriter`: a file, a compressor, memory.
public protocol JSONByteSink: AnyObject {
    func write(_ bytes: UnsafeRawBufferPointer) throws
}

/// Collects written bytes in memory.
public final class MemoryByteSink: JSONByteSink {
    public private(set) var bytes: [UInt8] = []
    public init() {}
    public func write(_ bytes: UnsafeRawBufferPointer) throws { self.bytes.append(contentsOf: bytes) }
    /// Forgets the bytes written so far, keeping up to `limit` bytes of storage for the next ones.
    public func removeAll(keepingCapacityUpTo limit: Int = .max) {
        if bytes.capacity > limit { bytes = [] } else { bytes.removeAll(keepingCapacity: true) }
    }
    /// The bytes as a UTF-8 string.
    public var string: String { String(decoding: bytes, as: UTF8.self) }
}

/// A streaming JSON writer: compact, pretty, or canonical (members in the Realtime Database's key
/// order, so the same data always gives the same bytes).
///
/// Canonical objects are buffered member by member and sorted when they close; memory stays within
/// `sortBudget` per open object, past which members spill to an anonymous temporary file.
public final class JSONWriter {
    /// Writer settings.
    public struct Options: Sendable {
        /// Line breaks and two-space indentation.
        public var pretty: Bool
        /// Members sorted in the database's key order (the canonical form).
        public var sortKeys: Bool
        /// Bytes an open sorted object may hold in memory before spilling.
        public var sortBudget: Int
        /// Where spill files go (default `$TMPDIR`).
        public var temporaryDirectory: String?

        public init(pretty: Bool = false, sortKeys: Bool = false, sortBudget: Int = 32 << 20, temporaryDirectory: String? = nil) {
            self.pretty = pretty
            self.sortKeys = sortKeys
            self.sortBudget = sortBudget
            self.temporaryDirectory = temporaryDirectory
        }

        /// Compact output in the original member order.
        public static let compact = Options()
        /// Compact output with members in the database's key order.
        public static let canonical = Options(sortKeys: true)
    }

    private struct Frame {
        var isObject: Bool
        var count: Int
        var sorted: Bool
        /// Opened by `continueContainer`: its brackets are not this writer's.
        var continued = false
    }

    public let options: Options
    private let sink: JSONByteSink
    private let out: ByteBuffer
    private let flushThreshold = 1 << 18
    private let frames = PlainStack<Frame>()
    /// Every sorter made so far (they are reused); only this array owns them.
    private var allSorters: [ObjectSorter] = []
    /// The sorters of the open sorted objects, innermost at `openSorters - 1`, then the idle ones.
    private let sorters = PlainStack<Unmanaged<ObjectSorter>>()
    private var openSorters = 0
    /// The innermost open sorted object.
    private var sorter: Unmanaged<ObjectSorter>?
    /// The buffer writes go to: the innermost sorted object's arena, or `out`. Both this and `sorter`
    /// are held unretained (their owners keep them alive), so writing does no reference counting.
    private var target: Unmanaged<ByteBuffer>
    /// `afterValue` acts (spills or flushes) once `target` holds more bytes than this.
    private var targetLimit: Int
    private var spillFile: SpillFile?
    private var afterName = false
    /// Bytes sent to the sink since the writer was made or reset.
    private var flushedBytes = 0
    private lazy var output = OutputSegmentSink(writer: self)

    /// Creates a writer that sends its bytes to `sink`; call `flush()` at the end.
    public init(sink: JSONByteSink, options: Options = .compact) {
        self.sink = sink
        self.options = options
        let out = ByteBuffer(capacity: 1 << 18)
        self.out = out
        target = Unmanaged.passUnretained(out)
        targetLimit = flushThreshold - 1
    }

    /// Runs `body` on the buffer writes go to.
    @inline(__always)
    private func withTarget<R>(_ body: (ByteBuffer) throws -> R) rethrows -> R {
        try target._withUnsafeGuaranteedRef(body)
    }

    /// How many containers are open.
    public var depth: Int { frames.count }

    /// Whether the writer writes compact JSON in the original member order (neither pretty nor sorted).
    public var isCompact: Bool { !options.pretty && !options.sortKeys }

    /// Bytes written since the writer was made or reset, sent to the sink or not: in a compact
    /// writer, the offset in its output where the next byte goes.
    public var bytesWritten: Int { flushedBytes + out.count }

    /// Forgets the open containers and the bytes not yet sent to the sink, to start a new value from
    /// offset 0 (compact and pretty writers); memory a large value took is given back.
    public func reset() {
        precondition(!options.sortKeys, "a sorted writer cannot be reset")
        frames.removeAll()
        out.removeAll(keepingCapacityUpTo: flushThreshold)
        afterName = false
        flushedBytes = 0
    }

    // MARK: - Structure

    public func beginObject() throws {
        try beforeValue()
        if options.sortKeys {
            frames.append(Frame(isObject: true, count: 0, sorted: true))
            if openSorters == sorters.count {
                let s = ObjectSorter(budget: options.sortBudget, spill: { [unowned self] in try self.spill() })
                allSorters.append(s)
                sorters.append(Unmanaged.passUnretained(s))
            }
            openSorters += 1
            setTarget(sorters[openSorters - 1])
        } else {
            withTarget { $0.append(UInt8(ascii: "{")) }
            frames.append(Frame(isObject: true, count: 0, sorted: false))
        }
    }

    public func endObject() throws {
        guard !frames.isEmpty else { throw JSONWriterError.misuse("endObject without a matching beginObject") }
        let f = frames.removeLast()
        guard f.isObject, !afterName else { throw JSONWriterError.misuse("endObject without a matching beginObject") }
        if f.sorted {
            let finished = sorter!
            openSorters -= 1
            let parent = openSorters > 0 ? sorters[openSorters - 1] : nil
            setTarget(parent)
            if options.pretty && f.count > 0 {
                let close = ByteBuffer(capacity: 64)
                appendIndent(close, frames.count)
                try finish(finished, into: parent, close: close.bytes(0, close.count))
            } else {
                try finish(finished, into: parent, close: UnsafeRawBufferPointer(start: nil, count: 0))
            }
        } else {
            withTarget { t in
                if options.pretty && f.count > 0 { appendIndent(t, frames.count) }
                t.append(UInt8(ascii: "}"))
            }
        }
        try afterValue()
    }

    /// Emits the object `sorter` holds into `parent`'s arena, or to the output when `parent` is nil.
    @inline(__always)
    private func finish(_ sorter: Unmanaged<ObjectSorter>, into parent: Unmanaged<ObjectSorter>?, close: UnsafeRawBufferPointer) throws {
        try sorter._withUnsafeGuaranteedRef { s in
            if let parent {
                try parent._withUnsafeGuaranteedRef { try s.finish(into: $0, close: close) }
            } else {
                try s.finish(into: output, close: close)
            }
        }
    }

    /// Directs writes to `s`'s arena, or to the output when `s` is nil.
    @inline(__always)
    private func setTarget(_ s: Unmanaged<ObjectSorter>?) {
        if let s {
            sorter = s
            s._withUnsafeGuaranteedRef { s in
                target = Unmanaged.passUnretained(s.arena)
                targetLimit = s.budget
            }
        } else {
            sorter = nil
            target = Unmanaged.passUnretained(out)
            targetLimit = flushThreshold - 1
        }
    }

    public func beginArray() throws {
        try beforeValue()
        withTarget { $0.append(UInt8(ascii: "[")) }
        frames.append(Frame(isObject: false, count: 0, sorted: false))
    }

    public func endArray() throws {
        guard !frames.isEmpty else { throw JSONWriterError.misuse("endArray without a matching beginArray") }
        let f = frames.removeLast()
        guard !f.isObject else { throw JSONWriterError.misuse("endArray without a matching beginArray") }
        withTarget { t in
            if options.pretty && f.count > 0 { appendIndent(t, frames.count) }
            t.append(UInt8(ascii: "]"))
        }
        try afterValue()
    }

    /// Continues an object or array whose opening bracket, and any members before, the output
    /// already has (as when a shard writes a run of members after the structure before them): its
    /// members follow with commas between them, the first without one, and `endContinued()` leaves
    /// it without writing a closing bracket. Compact writers only.
    public func continueContainer(isObject: Bool) throws {
        guard isCompact, frames.isEmpty else {
            throw JSONWriterError.misuse("continueContainer in a sorted or pretty writer, or inside a container")
        }
        frames.append(Frame(isObject: isObject, count: 0, sorted: false, continued: true))
    }

    /// Leaves the container `continueContainer` continued, without a closing bracket.
    public func endContinued() throws {
        guard !frames.isEmpty, frames.last.continued, !afterName else {
            throw JSONWriterError.misuse("endContinued without a matching continueContainer")
        }
        frames.removeLast()
        try afterValue()
    }

    /// Writes a member name given as decoded UTF-8.
    public func name(utf8 key: UnsafeRawBufferPointer, needsEscaping: Bool = true) throws {
        guard !frames.isEmpty, frames.last.isObject, !afterName else { throw JSONWriterError.misuse("a name outside an object") }
        if frames.last.sorted {
            // Every member starts with ','; the sorter drops the first one.
            sorter!._withUnsafeGuaranteedRef { $0.beginEntry(key: key) }
            withTarget { $0.append(UInt8(ascii: ",")) }
        } else if frames.last.count > 0 {
            withTarget { $0.append(UInt8(ascii: ",")) }
        }
        frames.last.count += 1
        withTarget { t in
            if options.pretty { appendIndent(t, frames.count) }
            appendString(t, key, needsEscaping: needsEscaping)
            if options.pretty { t.append(": ") } else { t.append(UInt8(ascii: ":")) }
        }
        afterName = true
    }

    /// Writes a member name.
    public func name(_ key: String) throws {
        var k = key
        try k.withUTF8 { try name(utf8: UnsafeRawBufferPointer($0)) }
    }

    // MARK: - Scalars

    /// Writes a string given as decoded UTF-8; `needsEscaping: false` promises it has no `"`, `\` or
    /// control characters (as when it had no escapes in strict JSON input).
    public func string(utf8: UnsafeRawBufferPointer, needsEscaping: Bool = true) throws {
        try beforeValue()
        if sorter == nil && utf8.count > flushThreshold {
            try streamString(utf8, needsEscaping: needsEscaping)
        } else {
            withTarget { appendString($0, utf8, needsEscaping: needsEscaping) }
        }
        try afterValue()
    }

    /// Writes a string longer than the output buffer to the sink piece by piece, so that a huge
    /// string (hundreds of MB) is not held a second time, escaped, in the buffer.
    private func streamString(_ s: UnsafeRawBufferPointer, needsEscaping: Bool) throws {
        out.append(UInt8(ascii: "\""))
        var start = 0
        while start < s.count {
            let end = min(s.count, start + flushThreshold)
            let piece = UnsafeRawBufferPointer(rebasing: s[start..<end])
            // Only ASCII bytes are escaped, so a piece may end inside a UTF-8 sequence.
            let plain = needsEscaping ? Self.plainPrefixLength(piece) : piece.count
            if plain == piece.count { out.append(piece) } else { appendEscapedContent(out, piece, plain: plain) }
            try flush()
            start = end
        }
        out.append(UInt8(ascii: "\""))
    }

    public func string(_ s: String) throws {
        var s = s
        try s.withUTF8 { try string(utf8: UnsafeRawBufferPointer($0)) }
    }

    /// Writes number text exactly as given (it must follow the JSON number grammar).
    public func number(text: UnsafeRawBufferPointer) throws {
        try beforeValue()
        withTarget { $0.append(text) }
        try afterValue()
    }

    public func number(_ n: JSONNumber) throws {
        var t = n.text
        try t.withUTF8 { try number(text: UnsafeRawBufferPointer($0)) }
    }

    public func bool(_ b: Bool) throws {
        try beforeValue()
        withTarget { $0.append(b ? "true" : "false") }
        try afterValue()
    }

    public func null() throws {
        try beforeValue()
        withTarget { $0.append("null") }
        try afterValue()
    }

    /// Writes a whole value.
    public func value(_ v: JSONValue) throws {
        switch v {
        case .null: try null()
        case .bool(let b): try bool(b)
        case .number(let n): try number(n)
        case .string(let s): try string(s)
        case .array(let a):
            try beginArray()
            for e in a { try value(e) }
            try endArray()
        case .object(let o):
            try beginObject()
            for m in o.members {
                try name(m.key)
                try value(m.value)
            }
            try endObject()
        }
    }

    /// Writes a value given as compact JSON text in pieces: `pieces` calls its argument with each
    /// piece in order. Only for compact writers, whose own bytes for the value the text must be.
    public func value(compactJSON pieces: ((UnsafeRawBufferPointer) throws -> Void) throws -> Void) throws {
        guard isCompact else { throw JSONWriterError.misuse("compact JSON text in a pretty or sorted writer") }
        try beforeValue()
        try pieces { bytes in
            if out.count + bytes.count <= flushThreshold {
                out.append(bytes)
            } else {
                try flush()
                if bytes.count >= flushThreshold {
                    try sink.write(bytes)
                    flushedBytes += bytes.count
                } else {
                    out.append(bytes)
                }
            }
        }
        try afterValue()
    }

    /// Writes a value given as compact JSON text (as a compact writer writes it): a compact writer
    /// copies it as it is, a pretty or sorted one rewrites it token by token.
    public func value(compactJSON json: UnsafeRawBufferPointer) throws {
        if isCompact { return try value(compactJSON: { try $0(json) }) }
        let reader = JSONReader(bytes: Array(json), options: .init(bufferSize: max(json.count, 64)))
        try reader.transfer(to: self)
    }

    /// Writes bytes between top-level values (e.g. the line break of NDJSON).
    public func raw(_ bytes: StaticString) throws {
        guard frames.isEmpty else { throw JSONWriterError.misuse("raw bytes inside a value") }
        out.append(bytes)
    }

    /// Writes bytes between top-level values that are not a value themselves: the structure around
    /// the values of a sharded run, which a compact writer of the whole tree would have written.
    public func raw(bytes: UnsafeRawBufferPointer) throws {
        guard frames.isEmpty else { throw JSONWriterError.misuse("raw bytes inside a value") }
        out.append(bytes)
        try afterValue()
    }

    /// Sends everything buffered to the sink.
    public func flush() throws {
        guard out.count > 0 else { return }
        try sink.write(out.bytes(0, out.count))
        flushedBytes += out.count
        out.count = 0
    }

    // MARK: - Internals

    @inline(__always)
    private func beforeValue() throws {
        if afterName {
            afterName = false
            return
        }
        guard !frames.isEmpty else { return }
        guard !frames.last.isObject else { throw JSONWriterError.misuse("a value in an object without a name") }
        withTarget { t in
            if frames.last.count > 0 { t.append(UInt8(ascii: ",")) }
            if options.pretty { appendIndent(t, frames.count) }
        }
        frames.last.count += 1
    }

    /// Spills the innermost sorted object past its budget, or flushes a full output buffer.
    @inline(__always)
    private func afterValue() throws {
        if withTarget({ $0.count }) > targetLimit {
            if let sorter { try sorter._withUnsafeGuaranteedRef { try $0.spill() } } else { try flush() }
        }
    }

    private func appendIndent(_ b: ByteBuffer, _ level: Int) {
        b.reserve(1 + 2 * level)
        b.append(UInt8(ascii: "\n"))
        for _ in 0..<level { b.append("  ") }
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    /// How many bytes at the start of `s` need no escaping (all of them, usually).
    @inline(__always)
    private static func plainPrefixLength(_ s: UnsafeRawBufferPointer) -> Int {
        let n = s.count
        guard n > 0, let p = s.baseAddress else { return 0 }
        if n < 8 {
            for i in 0..<n {
                let c = p.load(fromByteOffset: i, as: UInt8.self)
                if c < 0x20 || c == 0x22 || c == 0x5C { return i }
            }
            return n
        }
        // Whole words; the last one may overlap bytes already checked.
        var i = 0
        while true {
            let m = escapedBytes(UInt64(littleEndian: (p + i).loadUnaligned(as: UInt64.self)))
            if m != 0 { return i + m.trailingZeroBitCount >> 3 }
            if i == n - 8 { return n }
            i = min(i + 8, n - 8)
        }
    }

    /// A mask whose lowest set bit is in the first byte of `w` (first byte in the low bits) that
    /// must be escaped: a quote, a backslash or a control character; 0 when there is none.
    @inline(__always)
    private static func escapedBytes(_ w: UInt64) -> UInt64 {
        let high: UInt64 = 0x8080_8080_8080_8080
        let ones: UInt64 = 0x0101_0101_0101_0101
        let control = (w &- 0x2020_2020_2020_2020) & ~w & high
        let q = w ^ 0x2222_2222_2222_2222
        let quote = (q &- ones) & ~q & high
        let b = w ^ 0x5C5C_5C5C_5C5C_5C5C
        let backslash = (b &- ones) & ~b & high
        return control | quote | backslash
    }

    @inline(__always)
    private func appendString(_ t: ByteBuffer, _ s: UnsafeRawBufferPointer, needsEscaping: Bool) {
        let n = s.count
        let plain = needsEscaping ? Self.plainPrefixLength(s) : n
        if plain == n {
            t.append(upTo: n + 2) { p in
                p[0] = UInt8(ascii: "\"")
                copyBytes(p + 1, s)
                p[n + 1] = UInt8(ascii: "\"")
                return n + 2
            }
            return
        }
        appendEscapedString(t, s, plain: plain)
    }

    /// `appendString` for a string with characters to escape, the first at `plain`.
    private func appendEscapedString(_ t: ByteBuffer, _ s: UnsafeRawBufferPointer, plain: Int) {
        t.append(UInt8(ascii: "\""))
        appendEscapedContent(t, s, plain: plain)
        t.append(UInt8(ascii: "\""))
    }

    /// The content of a string, escaped, without its quotes; the first character to escape is at `plain`.
    private func appendEscapedContent(_ t: ByteBuffer, _ s: UnsafeRawBufferPointer, plain: Int) {
        let n = s.count
        t.append(UnsafeRawBufferPointer(rebasing: s[0..<plain]))
        var runStart = plain
        var i = plain
        while i < n {
            let c = s[i]
            if c >= 0x20 && c != 0x22 && c != 0x5C {
                i += 1
                continue
            }
            if i > runStart { t.append(UnsafeRawBufferPointer(rebasing: s[runStart..<i])) }
            switch c {
            case 0x22: t.append("\\\"")
            case 0x5C: t.append("\\\\")
            case 0x0A: t.append("\\n")
            case 0x0D: t.append("\\r")
            case 0x09: t.append("\\t")
            case 0x08: t.append("\\b")
            case 0x0C: t.append("\\f")
            default:
                t.append("\\u00")
                t.append(Self.hex[Int(c >> 4)])
                t.append(Self.hex[Int(c & 0xF)])
            }
            i += 1
            runStart = i
        }
        if n > runStart { t.append(UnsafeRawBufferPointer(rebasing: s[runStart..<n])) }
    }

    fileprivate func spill() throws -> SpillFile {
        if let spillFile { return spillFile }
        let f = try SpillFile(directory: options.temporaryDirectory)
        spillFile = f
        return f
    }

    /// Copies a range of the spill file to the output.
    fileprivate func copyFromSpill(offset: Int64, length: Int64) throws {
        guard let file = spillFile else { return }
        var off = offset
        var remaining = length
        while remaining > 0 {
            if out.count >= flushThreshold { try flush() }
            let n = Int(min(remaining, Int64(1 << 20)))
            out.reserve(n)
            try file.read(at: off, into: UnsafeMutableRawBufferPointer(start: out.base + out.count, count: n))
            out.count += n
            off += Int64(n)
            remaining -= Int64(n)
        }
    }

    fileprivate func appendToOutput(_ bytes: UnsafeRawBufferPointer) throws {
        out.append(bytes)
        if out.count >= flushThreshold { try flush() }
    }

    fileprivate func appendObjectToOutput(body: UnsafeRawBufferPointer, close: UnsafeRawBufferPointer) throws {
        out.appendObject(body: body, close: close)
        if out.count >= flushThreshold { try flush() }
    }
}

/// The writer's own output as the sink of the outermost sorted object.
private final class OutputSegmentSink: SegmentSink {
    unowned let writer: JSONWriter
    init(writer: JSONWriter) { self.writer = writer }
    func append(_ bytes: UnsafeRawBufferPointer) throws { try writer.appendToOutput(bytes) }
    func appendFile(offset: Int64, length: Int64) throws { try writer.copyFromSpill(offset: offset, length: length) }
    func appendObject(body: UnsafeRawBufferPointer, close: UnsafeRawBufferPointer) throws {
        try writer.appendObjectToOutput(body: body, close: close)
    }
}

/// A writer call out of order (a name outside an object, an unbalanced end).
public enum JSONWriterError: Error, CustomStringConvertible, Sendable {
    case misuse(String)
    public var description: String {
        switch self {
        case .misuse(let m): return "JSON writer misuse: \(m)"
        }
    }
}
