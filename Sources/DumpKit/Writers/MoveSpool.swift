import JSONStream

/// Records moved to a new path, set aside while the rest of the tree is written: their values as
/// compact JSON in an anonymous temporary file, and a log of (target, source, value range) in
/// another, so that memory holds neither.
///
/// Records usually arrive in path order (a dump's keys are in the database's order, and a plan
/// moves them to paths built from those keys). As long as they do, the values file is also the
/// moved records' part of the output, ready to copy: each top-level key the records go to is one
/// value there (`members`), its objects made by a `PathPlacer` around the records. `MoveMerger`
/// copies those values when the tree lacks those keys, and otherwise sorts the log.
final class MoveSpool {
    private let values: TemporaryFile
    private let writer: JSONWriter
    private let log: TemporaryFile
    private var logBuffer: [UInt8] = []
    /// Records added.
    private(set) var count = 0
    /// Whether every record so far came after the one before in path order (`PathKey` order).
    private(set) var inOrder = true
    private var last: (target: [String], source: [String])?
    /// While in order: the top-level members the records make, each a value in the values file.
    private(set) var members: [(key: String, range: Range<Int64>)] = []
    /// The open member (records below its key): its key, where its value starts, its placer.
    private var open: (key: String, start: Int64, placer: PathPlacer)?

    init(temporaryDirectory: String?) throws {
        values = try TemporaryFile(directory: temporaryDirectory)
        writer = JSONWriter(sink: values)
        log = try TemporaryFile(directory: temporaryDirectory)
    }

    /// Adds the record read at `source` and moved to `target`, whose value `writeValue` writes; or,
    /// when the records come in path order and the one before lies at or above `target`, returns
    /// that conflict and adds nothing.
    func add(target: [String], source: [String], writeValue: (JSONWriter) throws -> Void) throws -> MoveConflict.Reason? {
        if inOrder, let last {
            switch Self.order(last.target, target) {
            case .above: return .movedRecord(source: last.source, target: last.target)
            case .before: break
            case .after: try endOrder()
            }
        }
        if inOrder && target.isEmpty { try endOrder() }
        let start: Int64
        let end: Int64
        if inOrder {
            if let o = open, o.key != target[0] { try closeMember() }
            if target.count == 1 {
                start = Int64(writer.bytesWritten)
                try writeValue(writer)
                end = Int64(writer.bytesWritten)
                members.append((target[0], start..<end))
            } else {
                if open == nil {
                    let memberStart = Int64(writer.bytesWritten)
                    try writer.beginObject()
                    open = (target[0], memberStart, PathPlacer(writer: writer, baseDepth: 1))
                }
                var range: Range<Int64> = 0..<0
                try open!.placer.place(target) { w in
                    let s = Int64(w.bytesWritten)
                    try writeValue(w)
                    range = s..<Int64(w.bytesWritten)
                }
                (start, end) = (range.lowerBound, range.upperBound)
            }
        } else {
            start = Int64(writer.bytesWritten)
            try writeValue(writer)
            end = Int64(writer.bytesWritten)
        }
        appendLog(target, source, start..<end)
        last = (target, source)
        count += 1
        if logBuffer.count >= 1 << 20 { try flushLog() }
        return nil
    }

    /// The records no longer come in path order: the values file stops being output.
    private func endOrder() throws {
        try closeMember()
        inOrder = false
        members = []
    }

    private func closeMember() throws {
        guard let o = open else { return }
        try o.placer.closeAll()
        try writer.endObject()
        members.append((o.key, o.start..<Int64(writer.bytesWritten)))
        open = nil
    }

    /// Ends adding: the values can then be read back.
    func finishWriting() throws {
        if inOrder { try closeMember() }
        try writer.flush()
        try flushLog()
    }

    // MARK: - The log

    private func appendLog(_ target: [String], _ source: [String], _ range: Range<Int64>) {
        appendLog(target)
        appendLog(source)
        appendInteger(UInt64(range.lowerBound))
        appendInteger(UInt64(range.upperBound))
    }

    private func appendLog(_ path: [String]) {
        appendInteger(UInt64(path.count))
        for segment in path {
            var s = segment
            s.withUTF8 { utf8 in
                appendInteger(UInt64(utf8.count))
                logBuffer.append(contentsOf: utf8)
            }
        }
    }

    private func appendInteger(_ n: UInt64) {
        withUnsafeBytes(of: n.littleEndian) { logBuffer.append(contentsOf: $0) }
    }

    private func flushLog() throws {
        try logBuffer.withUnsafeBytes { try log.write($0) }
        logBuffer.removeAll(keepingCapacity: true)
    }

    /// The records sorted by target path (records at one path in the order they came), for the join.
    func sortedEntries(temporaryDirectory: String?) throws -> ExternalSorter.Reader {
        let sorter = ExternalSorter(temporaryDirectory: temporaryDirectory)
        let reader = BufferedReader(log.stream(from: 0))
        for index in 0..<count {
            let target = try reader.path()
            let source = try reader.path()
            let (start, end) = (try reader.integer(), try reader.integer())
            var key = PathKey.of(target) + PathKey.separator
            withUnsafeBytes(of: UInt64(index).bigEndian) { key.append(contentsOf: $0) }
            var payload: [UInt8] = []
            withUnsafeBytes(of: start.littleEndian) { payload.append(contentsOf: $0) }
            withUnsafeBytes(of: (end - start).littleEndian) { payload.append(contentsOf: $0) }
            PathKey.append(source, to: &payload)
            try sorter.add(key: key, payload: payload)
        }
        return try sorter.sorted()
    }

    /// One entry as read back from `sortedEntries`.
    struct Entry {
        var targetKey: ArraySlice<UInt8>
        var range: Range<Int64>
        var sourceKey: ArraySlice<UInt8>

        init(key: [UInt8], payload: [UInt8]) {
            targetKey = key[..<(key.count - PathKey.separator.count - 8)]
            let (offset, length) = payload.withUnsafeBytes {
                (
                    Int64($0.loadUnaligned(fromByteOffset: 0, as: UInt64.self).littleEndian),
                    Int64($0.loadUnaligned(fromByteOffset: 8, as: UInt64.self).littleEndian)
                )
            }
            range = offset..<(offset + length)
            sourceKey = payload[16...]
        }
    }

    /// Reads the log's integers and paths through a buffer.
    private final class BufferedReader {
        private let source: JSONByteSource
        private var buffer = [UInt8](repeating: 0, count: 1 << 16)
        private var position = 0
        private var filled = 0

        init(_ source: JSONByteSource) { self.source = source }

        func integer() throws -> UInt64 {
            let bytes = try take(8)
            return bytes.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) }
        }

        func path() throws -> [String] {
            let n = Int(try integer())
            var path: [String] = []
            path.reserveCapacity(n)
            for _ in 0..<n { path.append(String(decoding: try take(Int(try integer())), as: UTF8.self)) }
            return path
        }

        private func take(_ n: Int) throws -> ArraySlice<UInt8> {
            if filled - position < n {
                buffer.removeSubrange(0..<position)
                filled -= position
                position = 0
                if buffer.count < max(n, 1 << 16) { buffer += [UInt8](repeating: 0, count: max(n, 1 << 16) - buffer.count) }
                while filled < n {
                    let got = try buffer.withUnsafeMutableBytes {
                        try source.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[filled...]))
                    }
                    guard got > 0 else { throw InputError(file: "moved records", message: "truncated log") }
                    filled += got
                }
            }
            defer { position += n }
            return buffer[position..<(position + n)]
        }
    }

    // MARK: - Reading values

    /// The values file's bytes from `cacheStart` on: placements read values mostly in the order they
    /// were written, so one read serves many small values.
    private var cache: [UInt8] = []
    private var cacheStart: Int64 = 0
    private static let cacheSize = 1 << 20

    /// Writes the value stored at `range` with `writer`: a compact writer copies its bytes, others
    /// rewrite it token by token; never held whole in memory.
    func writeValue(_ range: Range<Int64>, to writer: JSONWriter) throws {
        guard writer.isCompact else { return try reader(range).transfer(to: writer) }
        try writer.value(compactJSON: { piece in
            var offset = range.lowerBound
            while offset < range.upperBound {
                if range.count >= Int64(Self.cacheSize) {
                    // A large value: straight from the file, a cache's worth at a time.
                    try readDirect(offset..<min(range.upperBound, offset + Int64(Self.cacheSize)), piece)
                    offset = min(range.upperBound, offset + Int64(Self.cacheSize))
                    continue
                }
                if offset < cacheStart || offset >= cacheStart + Int64(cache.count) { try fillCache(at: offset) }
                let from = Int(offset - cacheStart)
                let n = min(cache.count - from, Int(range.upperBound - offset))
                try cache.withUnsafeBytes { try piece(UnsafeRawBufferPointer(rebasing: $0[from..<(from + n)])) }
                offset += Int64(n)
            }
        })
    }

    private var direct: [UInt8] = []

    private func readDirect(_ range: Range<Int64>, _ piece: (UnsafeRawBufferPointer) throws -> Void) throws {
        if direct.count < range.count { direct = [UInt8](repeating: 0, count: Int(range.count)) }
        var got = 0
        while got < range.count {
            let n = try direct.withUnsafeMutableBytes {
                try values.read(
                    at: range.lowerBound + Int64(got), into: UnsafeMutableRawBufferPointer(rebasing: $0[got..<Int(range.count)]))
            }
            guard n > 0 else { throw InputError(file: "moved records", message: "truncated value") }
            got += n
        }
        try direct.withUnsafeBytes { try piece(UnsafeRawBufferPointer(rebasing: $0[0..<got])) }
    }

    private func fillCache(at offset: Int64) throws {
        if cache.count != Self.cacheSize { cache = [UInt8](repeating: 0, count: Self.cacheSize) }
        var got = 0
        while got < cache.count {
            let n = try cache.withUnsafeMutableBytes {
                try values.read(at: offset + Int64(got), into: UnsafeMutableRawBufferPointer(rebasing: $0[got...]))
            }
            if n == 0 { break }
            got += n
        }
        guard got > 0 else { throw InputError(file: "moved records", message: "truncated value") }
        cache.removeLast(cache.count - got)
        cacheStart = offset
    }

    /// The value stored at `range`, built in memory (for a record set aside as a reject).
    func value(_ range: Range<Int64>) throws -> JSONValue { try reader(range).readValue() }

    private func reader(_ range: Range<Int64>) -> JSONReader {
        JSONReader(
            source: values.stream(from: range.lowerBound, to: range.upperBound), options: .init(bufferSize: 1 << 16),
            sourceName: "moved records")
    }

    // MARK: - Order and depth

    private enum Order { case above, before, after }

    /// Where path `a` stands against path `b`: at or above it, before it, or after it.
    private static func order(_ a: [String], _ b: [String]) -> Order {
        for i in 0..<min(a.count, b.count) where a[i] != b[i] {
            var x = a[i], y = b[i]
            let less = x.withUTF8 { xb in y.withUTF8 { yb in DatabaseKeyOrder.less(UnsafeRawBufferPointer(xb), UnsafeRawBufferPointer(yb)) }
            }
            return less ? .before : .after
        }
        return a.count <= b.count ? .above : .after
    }

    /// How many containers deep a value is (0 for a scalar, 1 for `{"a":1}`), from its compact JSON.
    static func nesting(compactJSON json: UnsafeRawBufferPointer) -> Int {
        var depth = 0
        var deepest = 0
        var inString = false
        var escaped = false
        for b in json {
            if inString {
                if escaped {
                    escaped = false
                } else if b == UInt8(ascii: "\\") {
                    escaped = true
                } else if b == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch b {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                deepest = max(deepest, depth)
            case UInt8(ascii: "}"), UInt8(ascii: "]"): depth -= 1
            default: break
            }
        }
        return deepest
    }

    /// How many containers deep a value is (0 for a scalar, 1 for `{"a":1}`).
    static func nesting(_ value: JSONValue) -> Int {
        var deepest = 0
        switch value {
        case .object(let o):
            for m in o.members { deepest = max(deepest, nesting(m.value)) }
        case .array(let a):
            for v in a { deepest = max(deepest, nesting(v)) }
        default:
            return 0
        }
        return deepest + 1
    }
}
