#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// One JSON value laid out flat, to be read many times without a `JSONValue` tree: an array of
/// fixed-size entries in document order plus one arena of string and number bytes.
///
/// A container's entry is followed by its contents (an object's as key, value, key, value, ...; keys
/// are `.string` entries) and knows the index just past them (`next`), so a member is skipped in
/// one step. `JSONReader.readValue(into:)` fills a tape without allocating per value, and a tape is
/// reused: each fill replaces the previous value, keeping the memory. A tape holds values of up to
/// 2 GiB (offsets and indices are 32-bit).
public final class JSONTape {
    /// The kind of a tape entry.
    public enum Kind: UInt8, Sendable, BitwiseCopyable {
        case null, `false`, `true`, number, string, array, object
    }

    /// One value (or object key): 28 bytes.
    public struct Entry: BitwiseCopyable, Sendable {
        /// Where the string's UTF-8 or the number's text starts in the arena.
        public var start: Int32
        /// Its length in bytes.
        public var length: Int32
        /// The index just past this value and its contents.
        public var next: Int32
        /// Members (objects) or elements (arrays).
        public var count: Int32
        /// Where the value starts in the input (1-based; 0 when it was not read from text).
        public var line: Int32
        public var column: Int32
        public var kind: Kind
        /// Whether an object key is all ASCII (its bytes then compare like Swift `String`s); true for
        /// other entries.
        public var isASCII: Bool
    }

    // Small to start with: a batch of records holds many tapes; each grows to its largest record.
    private let list = PlainStack<Entry>(capacity: 32)
    private let arena = ByteBuffer(capacity: 512)
    /// The open containers while filling.
    private let open = PlainStack<Int32>()

    public init() {}

    /// The number of entries; 0 for an empty tape, else the first entry is the value.
    public var count: Int { list.count }

    /// The entry at `i`.
    public subscript(i: Int) -> Entry {
        @inline(__always) get { list[i] }
    }

    /// The memory the value takes on the tape (entries and arena bytes).
    public var byteCount: Int { list.count * MemoryLayout<Entry>.stride + arena.count }

    /// The entries, valid until the tape is filled again.
    public var entries: UnsafeBufferPointer<Entry> { list.elements }

    /// The arena's start, valid until the tape is filled again.
    public var arenaBase: UnsafePointer<UInt8> { UnsafePointer(arena.base) }

    /// The bytes of a string or number entry, valid until the tape is filled again.
    @inline(__always)
    public func bytes(_ i: Int) -> UnsafeRawBufferPointer {
        let e = list[i]
        return arena.bytes(Int(e.start), Int(e.length))
    }

    /// The string or number text at `i` as a `String`.
    public func string(_ i: Int) -> String {
        let b = bytes(i)
        guard b.count > 0 else { return "" }
        // The bytes are valid UTF-8: the reader checked them, or they came from a `String`.
        let span = unsafe Span<UInt8>(_unsafeElements: b.assumingMemoryBound(to: UInt8.self))
        return String(copying: unsafe UTF8Span(unchecked: span))
    }

    // MARK: - Filling

    /// Empties the tape, keeping its memory up to a few KiB (what a large record needed is given
    /// back: many tapes wait in `validate`'s batches).
    public func removeAll() {
        list.removeAll()
        list.shrink(to: 512)
        open.removeAll()
        arena.count = 0
        arena.shrink(to: 16 << 10)
    }

    /// Appends a scalar, or opens a container (closed by `close()`).
    @inline(__always)
    func append(_ kind: Kind, bytes: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0), line: Int, column: Int) {
        let index = Int32(truncatingIfNeeded: list.count)
        let start = Int32(truncatingIfNeeded: arena.count)
        if bytes.count > 0 { arena.append(bytes) }
        if !open.isEmpty { list[Int(open.last)].count += 1 }
        list.append(
            Entry(
                start: start, length: Int32(truncatingIfNeeded: bytes.count), next: index + 1, count: 0,
                line: Int32(truncatingIfNeeded: line), column: Int32(truncatingIfNeeded: column), kind: kind, isASCII: true))
        if kind == .array || kind == .object { open.append(index) }
    }

    /// Appends an object key (the member is counted when its value is appended).
    @inline(__always)
    func appendKey(_ bytes: UnsafeRawBufferPointer, line: Int, column: Int) {
        let index = Int32(truncatingIfNeeded: list.count)
        let start = Int32(truncatingIfNeeded: arena.count)
        if bytes.count > 0 { arena.append(bytes) }
        list.append(
            Entry(
                start: start, length: Int32(truncatingIfNeeded: bytes.count), next: index + 1, count: 0,
                line: Int32(truncatingIfNeeded: line), column: Int32(truncatingIfNeeded: column),
                kind: .string, isASCII: Self.isASCII(bytes)))
    }

    /// Closes the innermost open container.
    @inline(__always)
    func close() {
        let i = Int(open.removeLast())
        list[i].next = Int32(truncatingIfNeeded: list.count)
    }

    /// Whether the containers opened so far are all closed.
    var isComplete: Bool { open.isEmpty && list.count > 0 }

    /// Replaces the tape's contents with `value` (without positions).
    public func fill(_ value: JSONValue) {
        removeAll()
        append(value)
    }

    private func append(_ value: JSONValue) {
        switch value {
        case .null: append(.null, line: 0, column: 0)
        case .bool(let b): append(b ? .true : .false, line: 0, column: 0)
        case .number(let n): withBytes(n.text) { append(.number, bytes: $0, line: 0, column: 0) }
        case .string(let s): withBytes(s) { append(.string, bytes: $0, line: 0, column: 0) }
        case .array(let a):
            append(.array, line: 0, column: 0)
            for e in a { append(e) }
            close()
        case .object(let o):
            append(.object, line: 0, column: 0)
            for m in o.members {
                withBytes(m.key) { appendKey($0, line: 0, column: 0) }
                append(m.value)
            }
            close()
        }
    }

    private func withBytes(_ s: String, _ body: (UnsafeRawBufferPointer) -> Void) {
        var s = s
        s.withUTF8 { body(UnsafeRawBufferPointer($0)) }
    }

    /// Whether `bytes` are all ASCII, a word at a time.
    @inline(__always)
    static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let p = bytes.baseAddress else { return true }
        let n = bytes.count
        var i = 0
        var or: UInt64 = 0
        while i + 8 <= n {
            or |= p.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            i += 8
        }
        while i < n {
            or |= UInt64(p.load(fromByteOffset: i, as: UInt8.self))
            i += 1
        }
        return or & 0x8080_8080_8080_8080 == 0
    }

    // MARK: - Reading

    /// The value at `i` as a `JSONValue`.
    public func value(at i: Int) -> JSONValue {
        let e = list[i]
        switch e.kind {
        case .null: return .null
        case .false: return .bool(false)
        case .true: return .bool(true)
        case .number: return .number(JSONNumber(text: string(i)))
        case .string: return .string(string(i))
        case .array:
            var elements: [JSONValue] = []
            elements.reserveCapacity(Int(e.count))
            var j = i + 1
            for _ in 0..<e.count {
                elements.append(value(at: j))
                j = Int(list[j].next)
            }
            return .array(elements)
        case .object:
            var members: [JSONObject.Member] = []
            members.reserveCapacity(Int(e.count))
            var j = i + 1
            for _ in 0..<e.count {
                members.append(JSONObject.Member(key: string(j), value: value(at: j + 1)))
                j = Int(list[j + 1].next)
            }
            return .object(JSONObject(members))
        }
    }

    /// Whether the key at `i` equals `key` as Swift compares strings (canonical equivalence), which
    /// is how `JSONObject` finds members; `keyIsASCII` says whether `key` is all ASCII.
    @inline(__always)
    public func key(_ i: Int, equals key: String, keyIsASCII: Bool) -> Bool {
        let b = bytes(i)
        var k = key
        let same = k.withUTF8 { u in u.count == b.count && (u.count == 0 || memcmp(u.baseAddress!, b.baseAddress!, u.count) == 0) }
        if same { return true }
        if keyIsASCII && list[i].isASCII { return false }
        return string(i) == key
    }

    /// The index of the first member of the object at `object` whose key equals `key` (as
    /// `key(_:equals:keyIsASCII:)` compares), of the member's value.
    public func member(_ key: String, keyIsASCII: Bool, in object: Int) -> Int? {
        var j = object + 1
        for _ in 0..<list[object].count {
            if self.key(j, equals: key, keyIsASCII: keyIsASCII) { return j + 1 }
            j = Int(list[j + 1].next)
        }
        return nil
    }

    /// The value at a pointer's `segments` below the value at `i`, resolved as `JSONValue`'s
    /// `value(at:)` does (first member with the key; array indices in canonical form).
    public func index(at segments: some Sequence<String>, from i: Int = 0) -> Int? {
        var current = i
        for s in segments {
            let e = list[current]
            switch e.kind {
            case .object:
                guard let m = member(s, keyIsASCII: s.utf8.allSatisfy { $0 < 0x80 }, in: current) else { return nil }
                current = m
            case .array:
                guard let n = Int(s), n >= 0, n < e.count, s == String(n) else { return nil }
                var j = current + 1
                for _ in 0..<n { j = Int(list[j].next) }
                current = j
            default:
                return nil
            }
        }
        return current
    }
}
