import JSONStream

/// Where the members of a dump's large containers are in the input, for `OnDiskRulesSource`.
///
/// Built from the tokens of one streaming pass (`observe` as a `JSONReader` token observer): every
/// value gets an entry (its key, parent, the offset and length of its value in the input) while it
/// is read, and when a container ends at `expandBytes` bytes or fewer the entries of its members are
/// dropped again, so only the members of larger containers (and the root) stay. A value without
/// member entries is parsed whole from the input when rules look into it; so memory is the entries of
/// the large containers' members (about 70 bytes plus the key each), not the dump.
package final class RulesDumpIndex {
    enum Kind: UInt8 { case primitive, object, array }

    struct Entry {
        /// Where the value starts in the input.
        var offset: Int64
        /// Its length in bytes; a primitive's runs up to the next token (separators included).
        var length: Int64 = 0
        /// The unescaped key (an array index in decimal) in `keys`.
        var keyStart: Int
        var keyLength: Int32
        /// The container's entry; -1 for the root.
        var parent: Int32
        var kind: Kind
        /// Not `null`, `{}` or `[]`: a child the database would hold.
        var present: Bool
        /// The members have entries (the container is larger than `expandBytes`, or the root).
        var expanded = false
        /// The members' range in `ordered` and `byHash`, once `finish` has run.
        var firstChild: Int32 = 0
        var childCount: Int32 = 0
    }

    /// A member's key hash and entry, for lookups by key.
    struct HashedChild {
        var hash: UInt64
        var entry: Int32
    }

    let expandBytes: Int64
    private(set) var entries: [Entry] = []
    private(set) var keys: [UInt8] = []
    /// Members of expanded containers, grouped by container, in input order.
    private(set) var ordered: [Int32] = []
    /// The same groups sorted by key hash (then input order).
    private(set) var byHash: [HashedChild] = []

    private struct Open {
        var entry: Int32
        var count = 0
        var entriesMark: Int
        var keysMark: Int
    }
    private var stack: [Open] = []
    private var pendingKey: (start: Int, length: Int32)?
    private var pendingPrimitive: Int?

    package init(expandBytes: Int64) {
        self.expandBytes = expandBytes
    }

    /// Takes in the token `reader.next()` just returned.
    package func observe(_ token: JSONToken, _ reader: JSONReader) {
        if let p = pendingPrimitive {
            entries[p].length = reader.offset - entries[p].offset
            pendingPrimitive = nil
        }
        switch token {
        case .name:
            let start = keys.count
            keys.append(contentsOf: reader.bytes)
            pendingKey = (start, Int32(keys.count - start))
        case .beginObject, .beginArray:
            let e = addEntry(reader, kind: token == .beginObject ? .object : .array, present: false)
            stack.append(Open(entry: Int32(e), entriesMark: entries.count, keysMark: keys.count))
        case .endObject, .endArray:
            let open = stack.removeLast()
            let e = Int(open.entry)
            entries[e].length = reader.offset + 1 - entries[e].offset
            entries[e].present = open.count > 0
            if entries[e].length > expandBytes || stack.isEmpty {
                entries[e].expanded = true
            } else {
                entries.removeSubrange(open.entriesMark...)
                keys.removeSubrange(open.keysMark...)
            }
        case .string, .number, .true, .false:
            pendingPrimitive = addEntry(reader, kind: .primitive, present: true)
        case .null:
            pendingPrimitive = addEntry(reader, kind: .primitive, present: false)
        case .end:
            break
        }
    }

    private func addEntry(_ reader: JSONReader, kind: Kind, present: Bool) -> Int {
        var keyStart = keys.count
        var keyLength: Int32 = 0
        var parent: Int32 = -1
        if !stack.isEmpty {
            let top = stack.count - 1
            parent = stack[top].entry
            if entries[Int(parent)].kind == .array {
                keys.append(contentsOf: String(stack[top].count).utf8)
                keyLength = Int32(keys.count - keyStart)
            } else if let key = pendingKey {
                (keyStart, keyLength) = key
            }
            stack[top].count += 1
        }
        pendingKey = nil
        entries.append(Entry(offset: reader.offset, keyStart: keyStart, keyLength: keyLength, parent: parent, kind: kind, present: present))
        return entries.count - 1
    }

    /// Groups the members by container, for `children(of:)` and `child(of:named:)`; call once the
    /// input has been read.
    func finish() {
        for e in entries.indices where entries[e].parent >= 0 {
            entries[Int(entries[e].parent)].childCount += 1
        }
        var next: Int32 = 0
        for e in entries.indices {
            entries[e].firstChild = next
            next += entries[e].childCount
        }
        ordered = [Int32](repeating: 0, count: Int(next))
        var filled = [Int32](repeating: 0, count: entries.count)
        for e in entries.indices where entries[e].parent >= 0 {
            let p = Int(entries[e].parent)
            ordered[Int(entries[p].firstChild + filled[p])] = Int32(e)
            filled[p] += 1
        }
        byHash = ordered.map { HashedChild(hash: hash(of: $0), entry: $0) }
        for e in entries where e.childCount > 1 {
            let range = Int(e.firstChild)..<Int(e.firstChild + e.childCount)
            byHash[range].sort { ($0.hash, $0.entry) < ($1.hash, $1.entry) }
        }
    }

    /// The members of an expanded container, in input order.
    func children(of e: Int32) -> ArraySlice<Int32> {
        let entry = entries[Int(e)]
        return ordered[Int(entry.firstChild)..<Int(entry.firstChild + entry.childCount)]
    }

    /// The first member of an expanded container with this key.
    func child(of e: Int32, named key: String) -> Int32? {
        var key = key
        return key.withUTF8 { bytes -> Int32? in
            let h = Self.hash(UnsafeRawBufferPointer(bytes))
            let entry = entries[Int(e)]
            var low = Int(entry.firstChild)
            var high = low + Int(entry.childCount)
            while low < high {
                let mid = (low + high) / 2
                if byHash[mid].hash < h { low = mid + 1 } else { high = mid }
            }
            while low < byHash.count, low < Int(entry.firstChild + entry.childCount), byHash[low].hash == h {
                let c = byHash[low].entry
                if keyBytes(of: c).elementsEqual(UnsafeRawBufferPointer(bytes)) { return c }
                low += 1
            }
            return nil
        }
    }

    /// The member's key as stored: unescaped UTF-8.
    func keyBytes(of e: Int32) -> ArraySlice<UInt8> {
        let entry = entries[Int(e)]
        return keys[entry.keyStart..<entry.keyStart + Int(entry.keyLength)]
    }

    func key(of e: Int32) -> String {
        String(decoding: keyBytes(of: e), as: UTF8.self)
    }

    private func hash(of e: Int32) -> UInt64 {
        keyBytes(of: e).withUnsafeBytes { Self.hash($0) }
    }

    /// FNV-1a, 64 bits.
    private static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in bytes {
            h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01b3
        }
        return h
    }
}
