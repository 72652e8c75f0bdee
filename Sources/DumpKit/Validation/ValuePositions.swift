import JSONStream

/// Where the values of the records being validated start in the input, so that a schema finding
/// points at the failing value rather than at its record.
///
/// As a token observer it notes the offset, line and column of every value token; `location(of:...)`
/// finds a value of a record by counting the values before it in document order, the order the
/// record's `JSONValue` holds them in. Memory is a few positions per value of the current record:
/// call `discard(before:)` after each record; past `limit` positions (content outside records) the
/// oldest half is dropped, and a record whose start was dropped keeps its own position in findings.
final class ValuePositions {
    static let limit = 1 << 20
    private var offsets: [Int64] = []
    private var lines: [Int32] = []
    private var columns: [Int32] = []

    /// Takes in the token `reader.next()` just returned.
    func observe(_ token: JSONToken, _ reader: JSONReader) {
        switch token {
        case .name, .endObject, .endArray, .end:
            return
        case .beginObject, .beginArray, .string, .number, .true, .false, .null:
            if offsets.count >= Self.limit {
                let half = Self.limit / 2
                offsets.removeSubrange(..<half)
                lines.removeSubrange(..<half)
                columns.removeSubrange(..<half)
            }
            let location = reader.location
            offsets.append(reader.offset)
            lines.append(Int32(truncatingIfNeeded: location.line))
            columns.append(Int32(truncatingIfNeeded: location.column))
        }
    }

    /// Forgets the values that start before `offset` (those of the records already checked).
    func discard(before offset: Int64) {
        var keep = offsets.count
        while keep > 0 && offsets[keep - 1] >= offset { keep -= 1 }
        offsets.removeSubrange(..<keep)
        lines.removeSubrange(..<keep)
        columns.removeSubrange(..<keep)
    }

    /// The line and column of the value at `pointer` (relative to the record) in `record`, which
    /// starts at `start`; nil when the record's positions are gone.
    func location(of pointer: Substring, in record: JSONValue, start: (line: Int, column: Int)) -> (line: Int, column: Int)? {
        guard let first = lines.indices.first(where: { lines[$0] == start.line && columns[$0] == start.column }),
              let segments = JSONPointer.segments(String(pointer)),
              let n = Self.index(of: segments[...], in: record) else { return nil }
        let i = first + n
        guard i < lines.count else { return nil }
        return (Int(lines[i]), Int(columns[i]))
    }

    /// How many values come before the one at `path` in document order, counting `value` itself.
    private static func index(of path: ArraySlice<String>, in value: JSONValue) -> Int? {
        guard let key = path.first else { return 0 }
        var before = 1
        switch value {
        case .object(let o):
            for m in o.members {
                if m.key == key { return index(of: path.dropFirst(), in: m.value).map { before + $0 } }
                before += count(m.value)
            }
            return nil
        case .array(let a):
            guard let n = Int(key), n >= 0, n < a.count, key == String(n) else { return nil }
            for e in a[..<n] { before += count(e) }
            return index(of: path.dropFirst(), in: a[n]).map { before + $0 }
        default:
            return nil
        }
    }

    /// The number of values in `value`, itself included.
    private static func count(_ value: JSONValue) -> Int {
        switch value {
        case .object(let o): return o.members.reduce(1) { $0 + count($1.value) }
        case .array(let a): return a.reduce(1) { $0 + count($1) }
        default: return 1
        }
    }
}
