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

    private struct Position {
        var offset: Int64
        var line: Int32
        var column: Int32
    }
    private var positions: [Position] = []

    /// Takes in the token `reader.next()` just returned.
    func observe(_ token: JSONToken, _ reader: JSONReader) {
        switch token {
        case .name, .endObject, .endArray, .end:
            return
        case .beginObject, .beginArray, .string, .number, .true, .false, .null:
            if positions.count >= Self.limit { positions.removeSubrange(..<(Self.limit / 2)) }
            let location = reader.location
            positions.append(Position(offset: reader.offset, line: Int32(truncatingIfNeeded: location.line),
                                      column: Int32(truncatingIfNeeded: location.column)))
        }
    }

    /// Forgets the values that start before `offset` (those of the records already checked).
    func discard(before offset: Int64) {
        guard let last = positions.last else { return }
        if last.offset < offset {
            positions.removeAll(keepingCapacity: true)
            return
        }
        var keep = positions.count
        while keep > 0 && positions[keep - 1].offset >= offset { keep -= 1 }
        positions.removeSubrange(..<keep)
    }

    /// The line and column of the value at `pointer` (relative to the record) in `record`, which
    /// starts at `start`; nil when the record's positions are gone.
    func location(of pointer: Substring, in record: JSONValue, start: (line: Int, column: Int)) -> (line: Int, column: Int)? {
        guard let first = positions.firstIndex(where: { $0.line == start.line && $0.column == start.column }),
              let segments = JSONPointer.segments(String(pointer)),
              let n = Self.index(of: segments[...], in: record), first + n < positions.count else { return nil }
        let p = positions[first + n]
        return (Int(p.line), Int(p.column))
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
