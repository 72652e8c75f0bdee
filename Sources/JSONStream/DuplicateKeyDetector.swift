#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Finds members of one object that have the same name, as a reader streams: fed every token
/// (`observe`, e.g. from `JSONReader.tokenObserver`), it keeps the names of the open objects only,
/// so memory is the names of the objects on the way to the current value, never the document.
///
/// Names are kept as bytes in one arena, as a stack: an object's names are dropped when it closes. A
/// small object is searched name by name; one with more names gets a hash table. Names that come in
/// the database's key order (as in every export) need no search; past `ascendingLimit` of them only
/// the last is kept, so such an object costs one name whatever its size. Should such an object's
/// names then leave that order, its remaining names are not checked (its earlier names are gone).
public final class DuplicateKeyDetector {
    /// A name read a second time in one object: the member's JSON Pointer, and the byte offsets of
    /// both names in the input (with the line and column of the second).
    public struct Duplicate: Sendable {
        public var pointer: String
        public var firstOffset: Int64
        public var secondOffset: Int64
        public var line: Int
        public var column: Int
    }

    private struct Entry {
        /// The name's first eight bytes (zero-padded), which tell most names apart.
        var prefix: UInt64
        var start: Int
        var count: Int
        var offset: Int64
    }

    /// An open container: where its names start in `entries` and `arena`, its table, if any, and
    /// whether its names came in increasing byte order so far (as a database export's keys do: then a
    /// name after the last one cannot be a duplicate, and no search is needed).
    private struct Level {
        var firstEntry: Int
        var arenaStart: Int
        var table: [Int32]  // index + 1 into entries; 0 is empty
        var ascending = true
        /// Only the last name is kept (the names were in order past `ascendingLimit`).
        var keepsLastOnly = false
        /// The names left the order after earlier ones were dropped: no more checks here.
        var unchecked = false
    }

    private let report: (Duplicate) -> Void
    @exclusivity(unchecked) private var arena: [UInt8] = []
    @exclusivity(unchecked) private var entries: [Entry] = []
    @exclusivity(unchecked) private var levels: [Level] = []
    private static let linearLimit = 8
    /// Names in order kept whole before only the last one is.
    public static let ascendingLimit = 1 << 16

    /// `report` gets each duplicate as it is read.
    public init(report: @escaping (Duplicate) -> Void) { self.report = report }

    /// Looks at the token `reader.next()` just returned.
    public func observe(_ token: JSONToken, _ reader: JSONReader) {
        switch token {
        case .beginObject, .beginArray:
            levels.append(Level(firstEntry: entries.count, arenaStart: arena.count, table: []))
        case .endObject, .endArray:
            let level = levels.removeLast()
            entries.removeSubrange(level.firstEntry...)
            arena.removeSubrange(level.arenaStart...)
        case .name:
            guard !levels.isEmpty else { return }
            if let first = insert(reader.bytes, offset: reader.offset) {
                let location = reader.location
                report(
                    Duplicate(
                        pointer: reader.pointer, firstOffset: first, secondOffset: reader.offset, line: location.line,
                        column: location.column))
            }
        default:
            break
        }
    }

    /// Adds a name to the innermost object; returns the offset of the same name read before in it.
    @inline(__always)
    private func insert(_ key: UnsafeRawBufferPointer, offset: Int64) -> Int64? {
        let prefix = Self.prefix(key)
        let l = levels.count - 1
        var slot = -1
        if levels[l].unchecked { return nil }
        if levels[l].ascending {
            if entries.count == levels[l].firstEntry || follows(key, entries[entries.count - 1]) {
                if levels[l].keepsLastOnly {
                    entries.removeLast()
                    arena.removeSubrange(levels[l].arenaStart...)
                } else if entries.count - levels[l].firstEntry == Self.ascendingLimit {
                    entries.removeSubrange(levels[l].firstEntry...)
                    arena.removeSubrange(levels[l].arenaStart...)
                    levels[l].keepsLastOnly = true
                }
                entries.append(Entry(prefix: prefix, start: arena.count, count: key.count, offset: offset))
                arena.append(contentsOf: key)
                return nil
            }
            levels[l].ascending = false
            if levels[l].keepsLastOnly {
                let last = entries[entries.count - 1]
                if last.prefix == prefix && equal(last, key) { return last.offset }
                levels[l].unchecked = true
                return nil
            }
            if entries.count - levels[l].firstEntry > Self.linearLimit { rebuild(l) }
        }
        if levels[l].table.isEmpty {
            for i in levels[l].firstEntry..<entries.count where entries[i].prefix == prefix && equal(entries[i], key) {
                return entries[i].offset
            }
        } else {
            let mask = levels[l].table.count - 1
            var i = Int(truncatingIfNeeded: Self.hash(key)) & mask
            while true {
                let n = Int(levels[l].table[i])
                if n == 0 { break }
                if entries[n - 1].prefix == prefix && equal(entries[n - 1], key) { return entries[n - 1].offset }
                i = (i + 1) & mask
            }
            slot = i
        }
        entries.append(Entry(prefix: prefix, start: arena.count, count: key.count, offset: offset))
        arena.append(contentsOf: key)
        let names = entries.count - levels[l].firstEntry
        if names > Self.linearLimit && names * 2 > levels[l].table.count {
            rebuild(l)
        } else if slot >= 0 {
            levels[l].table[slot] = Int32(entries.count)
        }
        return nil
    }

    /// The first eight bytes of `key`, zero-padded.
    @inline(__always)
    private static func prefix(_ key: UnsafeRawBufferPointer) -> UInt64 {
        if key.count >= 8 { return key.loadUnaligned(as: UInt64.self) }
        var p: UInt64 = 0
        for (i, b) in key.enumerated() { p |= UInt64(b) << (8 * UInt64(i)) }
        return p
    }

    /// A hash of `key`, eight bytes at a time.
    private static func hash(_ key: UnsafeRawBufferPointer) -> UInt64 {
        var h: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(key.count)
        var i = 0
        while i + 8 <= key.count {
            h = (h ^ key.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* 0xBF58_476D_1CE4_E5B9
            h ^= h >> 31
            i += 8
        }
        if i < key.count { h = (h ^ prefix(UnsafeRawBufferPointer(rebasing: key[i...]))) &* 0x94D0_49BB_1331_11EB }
        return h ^ (h >> 29)
    }

    /// Whether `key` comes after the name of `e` in the database's key order.
    @inline(__always)
    private func follows(_ key: UnsafeRawBufferPointer, _ e: Entry) -> Bool {
        arena.withUnsafeBytes { DatabaseKeyOrder.less(UnsafeRawBufferPointer(rebasing: $0[e.start..<(e.start + e.count)]), key) }
    }

    /// Whether `e` is `key` (their prefixes are equal).
    @inline(__always)
    private func equal(_ e: Entry, _ key: UnsafeRawBufferPointer) -> Bool {
        guard e.count == key.count else { return false }
        guard e.count > 8 else { return true }
        return arena.withUnsafeBytes { memcmp($0.baseAddress! + e.start, key.baseAddress!, e.count) == 0 }
    }

    /// Gives level `l` a table four times its names.
    private func rebuild(_ l: Int) {
        let first = levels[l].firstEntry
        var size = 16
        while size < (entries.count - first) * 4 { size <<= 1 }
        var table = [Int32](repeating: 0, count: size)
        let mask = size - 1
        for n in first..<entries.count {
            let e = entries[n]
            let hash = arena.withUnsafeBytes { Self.hash(UnsafeRawBufferPointer(rebasing: $0[e.start..<(e.start + e.count)])) }
            var i = Int(truncatingIfNeeded: hash) & mask
            while table[i] != 0 { i = (i + 1) & mask }
            table[i] = Int32(n + 1)
        }
        levels[l].table = table
    }
}
