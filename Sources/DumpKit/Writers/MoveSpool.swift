import JSONStream

/// Records moved to a new path, set aside while the rest of the tree is written: their values as
/// compact JSON in an anonymous temporary file, and an entry each (target path, source path, where
/// the value is) in an `ExternalSorter`, so that memory holds neither the values nor the entries.
final class MoveSpool {
    private let values: TemporaryFile
    private let writer: JSONWriter
    /// Entries keyed by the target's `PathKey`, `PathKey.separator` and the record's number in
    /// input order (`u64` big-endian); the payload is the value's offset and length (`u64`
    /// little-endian) and the source's `PathKey`.
    let entries: ExternalSorter

    init(temporaryDirectory: String?) throws {
        values = try TemporaryFile(directory: temporaryDirectory)
        writer = JSONWriter(sink: values)
        entries = ExternalSorter(temporaryDirectory: temporaryDirectory)
    }

    /// Records added.
    var count: Int { entries.count }

    /// Adds the record read at `source` and moved to `target`, whose value `writeValue` writes.
    func add(target: [String], source: [String], writeValue: (JSONWriter) throws -> Void) throws {
        let start = writer.bytesWritten
        try writeValue(writer)
        let end = writer.bytesWritten
        var key = PathKey.of(target)
        key += PathKey.separator
        withUnsafeBytes(of: UInt64(entries.count).bigEndian) { key.append(contentsOf: $0) }
        var payload: [UInt8] = []
        withUnsafeBytes(of: UInt64(start).littleEndian) { payload.append(contentsOf: $0) }
        withUnsafeBytes(of: UInt64(end - start).littleEndian) { payload.append(contentsOf: $0) }
        PathKey.append(source, to: &payload)
        try entries.add(key: key, payload: payload)
    }

    /// Ends adding: the values can then be read back.
    func finishWriting() throws { try writer.flush() }

    /// One entry as read back from `entries`.
    struct Entry {
        var targetKey: ArraySlice<UInt8>
        var range: Range<Int64>
        var sourceKey: ArraySlice<UInt8>

        init(key: [UInt8], payload: [UInt8]) {
            targetKey = key[..<(key.count - PathKey.separator.count - 8)]
            let (offset, length) = payload.withUnsafeBytes {
                (Int64($0.loadUnaligned(fromByteOffset: 0, as: UInt64.self).littleEndian), Int64($0.loadUnaligned(fromByteOffset: 8, as: UInt64.self).littleEndian))
            }
            range = offset..<(offset + length)
            sourceKey = payload[16...]
        }
    }

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
                if offset < cacheStart || offset >= cacheStart + Int64(cache.count) { try fillCache(at: offset) }
                let from = Int(offset - cacheStart)
                let n = min(cache.count - from, Int(range.upperBound - offset))
                try cache.withUnsafeBytes { try piece(UnsafeRawBufferPointer(rebasing: $0[from..<(from + n)])) }
                offset += Int64(n)
            }
        })
    }

    private func fillCache(at offset: Int64) throws {
        if cache.count != Self.cacheSize { cache = [UInt8](repeating: 0, count: Self.cacheSize) }
        var got = 0
        while got < cache.count {
            let n = try cache.withUnsafeMutableBytes { try values.read(at: offset + Int64(got), into: UnsafeMutableRawBufferPointer(rebasing: $0[got...])) }
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
        JSONReader(source: values.stream(from: range.lowerBound, to: range.upperBound), options: .init(bufferSize: 1 << 16), sourceName: "moved records")
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
        switch value {
        case .object(let o): return 1 + (o.members.map { nesting($0.value) }.max() ?? 0)
        case .array(let a): return 1 + (a.map { nesting($0) }.max() ?? 0)
        default: return 0
        }
    }
}
