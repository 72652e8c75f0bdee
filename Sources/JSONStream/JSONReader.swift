import CPlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The kind of the next token in a JSON stream.
public enum JSONToken: UInt8, Sendable {
    case beginObject, endObject, beginArray, endArray
    /// An object member's name; its bytes are in `JSONReader.bytes`.
    case name
    case string, number, `true`, `false`, null
    /// The end of the input (or of the current document in multi-document mode).
    case end
}

/// A strict, streaming pull reader of JSON over a refillable byte buffer.
///
/// Nesting is tracked on an explicit stack (never the call stack). String and number contents of the
/// last token are exposed as bytes that stay valid until the next call that reads. Every error carries
/// its byte offset, line:column and the JSON Pointer of the value being read.
public final class JSONReader {
    /// Reader settings.
    public struct Options: Sendable {
        /// Deepest nesting of objects and arrays accepted.
        public var maxDepth: Int = 512
        /// Largest string, number or `readValue` result, in bytes.
        public var maxValueBytes: Int = 512 << 20
        /// Accept `//` and `/* */` comments and raw line breaks inside strings (rules files only).
        public var relaxed: Bool = false
        /// Accept a sequence of top-level values (NDJSON); `.end` then means the input ended.
        public var multipleDocuments: Bool = false
        /// Size of the read buffer.
        public var bufferSize: Int = 1 << 20

        public init(
            maxDepth: Int = 512, maxValueBytes: Int = 512 << 20, relaxed: Bool = false, multipleDocuments: Bool = false,
            bufferSize: Int = 1 << 20
        ) {
            self.maxDepth = maxDepth
            self.maxValueBytes = maxValueBytes
            self.relaxed = relaxed
            self.multipleDocuments = multipleDocuments
            self.bufferSize = bufferSize
        }
    }

    private enum State: UInt8 {
        case start, objectFirst, objectNext, colon, arrayFirst, arrayNext, afterTop
    }

    /// One open container.
    private struct Level {
        var isObject: Bool
        /// The current element's index (arrays).
        var index: Int
        /// Where this level's part of `keyArena` begins.
        var arenaMark: Int
        /// The current key (objects): where it starts in the read buffer when `keyInBuffer`, else in
        /// `keyArena`.
        var keyStart = 0
        var keyLength = 0
        var keyInBuffer = false
    }

    private let source: JSONByteSource
    public let options: Options
    /// The input's name, copied into errors.
    public var sourceName: String?

    // Buffer: bytes [pos, end) are unread; buf[0] is at absolute offset `base`.
    private var buf: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    private var pos = 0
    private var end = 0
    private var base: Int64 = 0
    private var atEOF = false

    // Position bookkeeping for messages: line breaks only occur in whitespace (and relaxed strings).
    private var line = 1
    private var lineStart: Int64 = 0
    private var tokenOffset: Int64 = 0

    // Structure.
    private var state: State = .start
    private var pending: JSONToken?
    private let levels = PlainStack<Level>()
    /// Copies of the current keys of the open objects, outermost first, that are not (or no longer)
    /// in the read buffer; keys are only needed for `pathSegments`, so most are not copied until the
    /// buffer moves.
    private let keyArena = ByteBuffer(capacity: 256)
    private var documentStarted = false

    // Last token's content.
    private let scratch = ByteBuffer(capacity: 4096)
    private var valueInScratch = false
    private var valueStart = 0
    private var valueEnd = 0
    /// Whether the last string or name contained escape sequences.
    public var lastStringHadEscapes: Bool { hadEscapes }
    private var hadEscapes = false

    /// Called with every token `next()` returns (also inside `readValue`, `skipValue`, `transfer`),
    /// so a checker can see a whole stream that others consume. Not to be changed by the observer.
    public var tokenObserver: ((JSONToken, JSONReader) -> Void)? {
        didSet {
            observerBox = tokenObserver.map(ObserverBox.init)
            observer = observerBox.map { Unmanaged.passUnretained($0) }
        }
    }

    /// The observer, held by `observerBox` and called through `observer` without reference counting
    /// per token.
    private final class ObserverBox {
        let call: (JSONToken, JSONReader) -> Void
        init(_ call: @escaping (JSONToken, JSONReader) -> Void) { self.call = call }
    }
    private var observerBox: ObserverBox?
    private var observer: Unmanaged<ObserverBox>?

    /// Creates a reader over `source`.
    public init(source: JSONByteSource, options: Options = Options(), sourceName: String? = nil) {
        self.source = source
        self.options = options
        self.sourceName = sourceName
        self.capacity = max(64, options.bufferSize)
        self.buf = .allocate(capacity: capacity)
    }

    /// A reader over bytes in memory.
    public convenience init(bytes: [UInt8], options: Options = Options()) {
        self.init(source: MemoryByteSource(bytes), options: options)
    }

    deinit { buf.deallocate() }

    // MARK: - Public state

    /// How many containers enclose the reader's position.
    public var depth: Int { levels.count }

    /// Absolute byte offset of the start of the last token read (or peeked).
    public var offset: Int64 { tokenOffset }

    /// Bytes consumed from the input so far.
    public var bytesConsumed: Int64 { base + Int64(pos) }

    /// 1-based line and column of the last token.
    public var location: (line: Int, column: Int) { (line, Int(max(0, tokenOffset - lineStart)) + 1) }

    /// The unescaped keys and indices from the root to the current position.
    public var pathSegments: [String] {
        var out: [String] = []
        let n = levels.count
        out.reserveCapacity(n)
        for level in 0..<n {
            if levels[level].isObject {
                if level == n - 1 && state == .objectFirst { break }
                out.append(String(decoding: key(of: levels[level]), as: UTF8.self))
            } else {
                if level == n - 1 && state == .arrayFirst { break }
                out.append(String(levels[level].index))
            }
        }
        return out
    }

    /// The current key of an object level.
    private func key(of level: Level) -> UnsafeRawBufferPointer {
        if level.keyInBuffer { return UnsafeRawBufferPointer(start: buf + level.keyStart, count: level.keyLength) }
        return keyArena.bytes(level.keyStart, level.keyLength)
    }

    /// Copies the keys that are still in the read buffer to `keyArena`, before the buffer moves.
    private func copyKeysOutOfBuffer() {
        var first = 0
        while first < levels.count && !levels[first].keyInBuffer { first += 1 }
        guard first < levels.count else { return }
        // Rebuild the arena from that level on, in level order.
        let rebuilt = ByteBuffer(capacity: keyArena.count + 256)
        let mark = levels[first].arenaMark
        for i in first..<levels.count {
            let k = key(of: levels[i])
            levels[i].arenaMark = mark + rebuilt.count
            if levels[i].isObject {
                levels[i].keyStart = mark + rebuilt.count
                levels[i].keyInBuffer = false
                rebuilt.append(k)
            }
        }
        keyArena.count = mark
        keyArena.append(rebuilt.bytes(0, rebuilt.count))
    }

    /// The JSON Pointer of the current position.
    public var pointer: String { JSONPointer.string(pathSegments) }

    /// The content of the last `.name`, `.string` or `.number` token (decoded UTF-8 or number text);
    /// valid until the next call that reads.
    public var bytes: UnsafeRawBufferPointer {
        if valueInScratch {
            return scratch.bytes(0, scratch.count)
        }
        return UnsafeRawBufferPointer(start: buf + valueStart, count: valueEnd - valueStart)
    }

    /// The last `.name`, `.string` or `.number` token as a `String`. Its UTF-8 is not checked again:
    /// scanning the token validated it (and numbers are ASCII).
    public var stringValue: String {
        let b = bytes
        guard b.count > 0 else { return "" }
        let span = unsafe Span<UInt8>(_unsafeElements: b.assumingMemoryBound(to: UInt8.self))
        return String(copying: unsafe UTF8Span(unchecked: span))
    }

    /// `stringValue` for `readValue`: a long string decoded into the scratch buffer is moved out of
    /// it rather than copied (`ByteBuffer.takeString`), so it is held once. `bytes` is empty after.
    private func takeStringValue() -> String {
        guard valueInScratch, scratch.count >= 1 << 20 else { return stringValue }
        let string = scratch.takeString()
        scratch.shrink(to: 4096)
        return string
    }

    // MARK: - Tokens

    /// The kind of the next token, without consuming it.
    public func peek() throws -> JSONToken {
        if let p = pending { return p }
        let k = try advanceToToken()
        pending = k
        return k
    }

    /// Reads the next token; for names, strings and numbers the content is then in `bytes`.
    @discardableResult
    public func next() throws -> JSONToken {
        try nextToken()
    }

    /// `next()`, inlined into the loops of this class.
    @inline(__always)
    private func nextToken() throws -> JSONToken {
        let k: JSONToken
        if let p = pending {
            k = p
            pending = nil
        } else {
            k = try advanceToToken()
        }
        switch k {
        case .beginObject, .beginArray:
            pos += 1
            if levels.count >= options.maxDepth {
                throw error(.depthLimit, "nesting deeper than \(options.maxDepth) levels")
            }
            let isObject = k == .beginObject
            levels.append(Level(isObject: isObject, index: 0, arenaMark: keyArena.count))
            state = isObject ? .objectFirst : .arrayFirst
        case .endObject, .endArray:
            pos += 1
            keyArena.count = levels.removeLast().arenaMark
            afterValue()
        case .name:
            try scanString()
            // The key stays where it is in the read buffer (copied out only if the buffer moves);
            // a decoded one is copied now.
            keyArena.count = levels.last.arenaMark
            if valueInScratch {
                levels.last.keyStart = keyArena.count
                levels.last.keyLength = scratch.count
                levels.last.keyInBuffer = false
                keyArena.append(scratch.bytes(0, scratch.count))
            } else {
                levels.last.keyStart = valueStart
                levels.last.keyLength = valueEnd - valueStart
                levels.last.keyInBuffer = true
            }
            state = .colon
        case .string:
            try scanString()
            afterValue()
        case .number:
            try scanNumber()
            afterValue()
        case .true:
            try expectLiteral("true")
            afterValue()
        case .false:
            try expectLiteral("false")
            afterValue()
        case .null:
            try expectLiteral("null")
            afterValue()
        case .end:
            if options.multipleDocuments { state = .start }
        }
        if let observer { observer._withUnsafeGuaranteedRef { $0.call(k, self) } }
        return k
    }

    /// Fails unless the next token begins a value.
    private func expectValueStart() throws {
        let k = try peek()
        switch k {
        case .endObject, .endArray, .name, .end: throw typeMismatch(expected: "a value", found: k)
        default: return
        }
    }

    /// Skips the next value (a whole subtree), checking it as strictly as reading it would.
    public func skipValue() throws {
        try expectValueStart()
        let start = depth
        repeat {
            let k = try next()
            if k == .name { continue }
            if k == .end { throw error(.unexpectedEnd, "unexpected end of input") }
        } while depth > start
    }

    /// Reads the next value (a whole subtree) into memory; fails past `maxValueBytes`.
    public func readValue() throws -> JSONValue {
        try expectValueStart()
        let startOffset = bytesConsumed
        let limit = Int64(options.maxValueBytes)
        // Explicit stack of open containers: (isObject, key of this container in its parent, members).
        var arrays: [[JSONValue]] = []
        var objects: [JSONObject] = []
        var kinds: [Bool] = []
        var pendingKeys: [String] = []
        var key: String? = nil
        func finish(_ v: JSONValue) -> JSONValue? {
            guard let isObject = kinds.last else { return v }
            if isObject {
                objects[objects.count - 1].members.append(JSONObject.Member(key: key!, value: v))
                key = nil
            } else {
                arrays[arrays.count - 1].append(v)
            }
            return nil
        }
        while true {
            if bytesConsumed - startOffset > limit {
                throw error(.sizeLimit, "value larger than \(options.maxValueBytes) bytes")
            }
            let k = try next()
            var produced: JSONValue? = nil
            switch k {
            case .beginObject:
                if let key { pendingKeys.append(key) }
                key = nil
                kinds.append(true)
                var object = JSONObject()
                // Records' objects are small: one allocation instead of growing 1, 2, 4, 8.
                object.members.reserveCapacity(8)
                objects.append(object)
                continue
            case .beginArray:
                if let key { pendingKeys.append(key) }
                key = nil
                kinds.append(false)
                arrays.append([])
                continue
            case .endObject:
                kinds.removeLast()
                produced = .object(objects.removeLast())
                if kinds.last == true { key = pendingKeys.removeLast() }
            case .endArray:
                kinds.removeLast()
                produced = .array(arrays.removeLast())
                if kinds.last == true { key = pendingKeys.removeLast() }
            case .name:
                key = stringValue
                continue
            case .string: produced = .string(takeStringValue())
            case .number: produced = .number(JSONNumber(text: stringValue))
            case .true: produced = .bool(true)
            case .false: produced = .bool(false)
            case .null: produced = .null
            case .end: throw error(.unexpectedEnd, "unexpected end of input")
            }
            if let v = finish(produced!) { return v }
        }
    }

    /// Reads the next value (a whole subtree) into `tape`, replacing its contents, with each value's
    /// line and column; fails past `maxValueBytes` (and 2 GiB, a tape's limit) as `readValue` does.
    public func readValue(into tape: JSONTape) throws {
        try expectValueStart()
        tape.removeAll()
        let startOffset = bytesConsumed
        let maxBytes = min(options.maxValueBytes, Int(Int32.max))
        let limit = Int64(maxBytes)
        repeat {
            if bytesConsumed - startOffset > limit {
                throw error(.sizeLimit, "value larger than \(maxBytes) bytes")
            }
            let k = try nextToken()
            let column = Int(max(0, tokenOffset - lineStart)) + 1
            switch k {
            case .beginObject: tape.append(.object, line: line, column: column)
            case .beginArray: tape.append(.array, line: line, column: column)
            case .endObject, .endArray: tape.close()
            case .name: tape.appendKey(bytes, line: line, column: column)
            case .string: tape.append(.string, bytes: bytes, line: line, column: column)
            case .number: tape.append(.number, bytes: bytes, line: line, column: column)
            case .true: tape.append(.true, line: line, column: column)
            case .false: tape.append(.false, line: line, column: column)
            case .null: tape.append(.null, line: line, column: column)
            case .end: throw error(.unexpectedEnd, "unexpected end of input")
            }
        } while !tape.isComplete
    }

    /// Copies the next value (a whole subtree) token by token to `writer`, without building it.
    public func transfer(to writer: JSONWriter) throws {
        try expectValueStart()
        let start = depth
        repeat {
            let k = try nextToken()
            switch k {
            case .beginObject: try writer.beginObject()
            case .endObject: try writer.endObject()
            case .beginArray: try writer.beginArray()
            case .endArray: try writer.endArray()
            // Without escapes, strict input cannot have characters to escape (relaxed input can have
            // raw line breaks).
            case .name: try writer.name(utf8: bytes, needsEscaping: lastStringHadEscapes || options.relaxed)
            case .string: try writer.string(utf8: bytes, needsEscaping: lastStringHadEscapes)
            case .number: try writer.number(text: bytes)
            case .true: try writer.bool(true)
            case .false: try writer.bool(false)
            case .null: try writer.null()
            case .end: throw error(.unexpectedEnd, "unexpected end of input")
            }
        } while depth > start
    }

    /// Reads the next string value in decoded pieces of at most about one buffer, so a huge string
    /// never needs to be held whole. The pieces are valid only inside `body`.
    public func readStringChunks(_ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        let k = try peek()
        guard k == .string else { throw typeMismatch(expected: "a string", found: k) }
        pending = nil
        try withoutActuallyEscaping(body) { _ = try scanString(from: pos + 1, chunkHandler: $0) }
        afterValue()
    }

    /// Reads the next string value whole when it ends within the buffer, else in pieces.
    ///
    /// A string closed within the buffer is read as by `next()`: its content is in `bytes` and the
    /// result is `true`. One that runs past the end of the buffer goes to `body` instead, in decoded
    /// pieces of at most about one buffer as they are found, so it is never held whole, and the
    /// result is `false` (`bytes` is then empty). `tokenObserver` is not called.
    public func readString(orChunks body: (UnsafeRawBufferPointer) throws -> Void) throws -> Bool {
        let k = try peek()
        guard k == .string else { throw typeMismatch(expected: "a string", found: k) }
        pending = nil
        let whole = try withoutActuallyEscaping(body) { try scanString(onRefill: $0) }
        afterValue()
        return whole
    }

    /// An error for a token of the wrong kind, at the current position.
    public func typeMismatch(expected: String, found: JSONToken) -> JSONError {
        error(.typeMismatch, "expected \(expected), found \(Self.describe(found))")
    }

    /// Builds an error at the current token's position.
    public func error(_ kind: JSONError.Kind, _ message: String) -> JSONError {
        JSONError(
            kind: kind, message: message, offset: tokenOffset, line: line,
            column: Int(max(0, tokenOffset - lineStart)) + 1, pointer: pointer, sourceName: sourceName)
    }

    static func describe(_ k: JSONToken) -> String {
        switch k {
        case .beginObject: return "an object"
        case .beginArray: return "an array"
        case .endObject: return "'}'"
        case .endArray: return "']'"
        case .name: return "a name"
        case .string: return "a string"
        case .number: return "a number"
        case .true, .false: return "a boolean"
        case .null: return "null"
        case .end: return "the end of input"
        }
    }

    // MARK: - Structure

    @inline(__always)
    private func afterValue() {
        if levels.isEmpty {
            state = .afterTop
        } else {
            state = levels.last.isObject ? .objectNext : .arrayNext
        }
    }

    private func errorAt(_ p: Int, _ kind: JSONError.Kind, _ message: String) -> JSONError {
        tokenOffset = base + Int64(p)
        return error(kind, message)
    }

    /// Skips whitespace (and comments when relaxed) and separators, and classifies the next token.
    @inline(__always)
    private func advanceToToken() throws -> JSONToken {
        if !documentStarted {
            documentStarted = true
            // A UTF-8 byte order mark at the very start is tolerated.
            if try ensure(3), buf[pos] == 0xEF, buf[pos + 1] == 0xBB, buf[pos + 2] == 0xBF { pos += 3 }
        }
        try skipSpace()
        tokenOffset = base + Int64(pos)
        switch state {
        case .start:
            if pos >= end {
                if options.multipleDocuments { return .end }
                throw error(.emptyInput, base + Int64(pos) == 0 ? "empty input" : "no JSON value in the input")
            }
            return try valueKind()
        case .objectFirst:
            guard pos < end else { throw error(.unexpectedEnd, "unexpected end of input inside an object") }
            let c = buf[pos]
            if c == UInt8(ascii: "}") { return .endObject }
            if c == UInt8(ascii: "\"") { return .name }
            throw unexpected(c, expected: "a member name or '}'")
        case .objectNext:
            guard pos < end else { throw error(.unexpectedEnd, "unexpected end of input inside an object") }
            let c = buf[pos]
            if c == UInt8(ascii: "}") { return .endObject }
            guard c == UInt8(ascii: ",") else { throw unexpected(c, expected: "',' or '}'") }
            pos += 1
            try skipSpace()
            tokenOffset = base + Int64(pos)
            guard pos < end else { throw error(.unexpectedEnd, "unexpected end of input inside an object") }
            let d = buf[pos]
            if d == UInt8(ascii: "\"") { return .name }
            if d == UInt8(ascii: "}") { throw error(.trailingComma, "trailing comma before '}'") }
            throw unexpected(d, expected: "a member name")
        case .colon:
            guard pos < end else { throw error(.unexpectedEnd, "unexpected end of input after a member name") }
            let c = buf[pos]
            guard c == UInt8(ascii: ":") else { throw unexpected(c, expected: "':'") }
            pos += 1
            try skipSpace()
            tokenOffset = base + Int64(pos)
            return try valueKind()
        case .arrayFirst:
            guard pos < end else { throw error(.unexpectedEnd, "unexpected end of input inside an array") }
            if buf[pos] == UInt8(ascii: "]") { return .endArray }
            return try valueKind()
        case .arrayNext:
            guard pos < end else { throw error(.unexpectedEnd, "unexpected end of input inside an array") }
            let c = buf[pos]
            if c == UInt8(ascii: "]") { return .endArray }
            guard c == UInt8(ascii: ",") else { throw unexpected(c, expected: "',' or ']'") }
            pos += 1
            levels.last.index += 1
            try skipSpace()
            tokenOffset = base + Int64(pos)
            if pos < end, buf[pos] == UInt8(ascii: "]") { throw error(.trailingComma, "trailing comma before ']'") }
            return try valueKind()
        case .afterTop:
            if pos >= end { return .end }
            if options.multipleDocuments {
                state = .start
                return try valueKind()
            }
            throw error(.trailingData, "unexpected data after the JSON value")
        }
    }

    @inline(__always)
    private func valueKind() throws -> JSONToken {
        guard pos < end else { throw error(.unexpectedEnd, "unexpected end of input, expected a value") }
        switch buf[pos] {
        case UInt8(ascii: "{"): return .beginObject
        case UInt8(ascii: "["): return .beginArray
        case UInt8(ascii: "\""): return .string
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number
        case UInt8(ascii: "t"): return .true
        case UInt8(ascii: "f"): return .false
        case UInt8(ascii: "n"): return .null
        case let c: throw unexpected(c, expected: "a value")
        }
    }

    private func unexpected(_ c: UInt8, expected: String) -> JSONError {
        let shown: String
        if c >= 0x21 && c < 0x7F {
            shown = "'\(Character(Unicode.Scalar(c)))'"
        } else {
            shown = "byte 0x" + String(c, radix: 16, uppercase: true)
        }
        return error(.unexpectedCharacter, "unexpected \(shown), expected \(expected)")
    }

    // MARK: - Buffer

    /// Makes at least `n` bytes available at `pos` if the input has them; returns whether it does.
    /// May move the buffer contents (positions before `pos` are dropped).
    @inline(__always)
    private func ensure(_ n: Int) throws -> Bool {
        if end - pos >= n { return true }
        return try refill(keeping: pos, minimum: n) >= 0 && end - pos >= n
    }

    /// Moves bytes from `keep` to the front, reads more, and returns how far bytes moved (the amount
    /// to subtract from saved positions), or -1 at the end of input with nothing new.
    @discardableResult
    private func refill(keeping keep: Int, minimum: Int = 1) throws -> Int {
        var shift = 0
        while true {
            if atEOF { return shift == 0 && end - pos < minimum ? -1 : shift }
            if keep - shift > 0 {
                copyKeysOutOfBuffer()
                let k = keep - shift
                let live = end - k
                if live > 0 { memmove(buf, buf + k, live) }
                base += Int64(k)
                pos -= k
                end -= k
                valueStart -= k
                valueEnd -= k
                shift += k
            }
            if end == capacity {
                let newCapacity = capacity * 2
                if newCapacity > options.maxValueBytes + (options.bufferSize * 2) {
                    throw errorAt(0, .sizeLimit, "token larger than \(options.maxValueBytes) bytes")
                }
                let nb = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
                nb.update(from: buf, count: end)
                buf.deallocate()
                buf = nb
                capacity = newCapacity
            }
            let n = try source.read(into: UnsafeMutableRawBufferPointer(start: buf + end, count: capacity - end))
            if n == 0 {
                atEOF = true
            } else {
                end += n
            }
            if end - pos >= minimum || atEOF { return shift }
        }
    }

    /// `skipWhitespace`, with the common case of no whitespace checked inline.
    @inline(__always)
    private func skipSpace() throws {
        if pos < end {
            let c = buf[pos]
            if c > 0x20 && c != UInt8(ascii: "/") { return }
        }
        try skipWhitespace()
    }

    private func skipWhitespace() throws {
        while true {
            while pos < end {
                let c = buf[pos]
                if c == 0x20 || c == 0x09 || c == 0x0D {
                    pos += 1
                } else if c == 0x0A {
                    pos += 1
                    line += 1
                    lineStart = base + Int64(pos)
                } else if c == UInt8(ascii: "/") && options.relaxed {
                    try skipComment()
                } else {
                    return
                }
            }
            if atEOF { return }
            try refill(keeping: pos)
            if pos >= end && atEOF { return }
        }
    }

    private func skipComment() throws {
        tokenOffset = base + Int64(pos)
        guard try ensure(2) else { throw unexpected(UInt8(ascii: "/"), expected: "a value") }
        let second = buf[pos + 1]
        if second == UInt8(ascii: "/") {
            pos += 2
            while true {
                while pos < end {
                    if buf[pos] == 0x0A { return }
                    pos += 1
                }
                if atEOF { return }
                try refill(keeping: pos)
            }
        } else if second == UInt8(ascii: "*") {
            pos += 2
            while true {
                guard try ensure(2) else { throw error(.unexpectedEnd, "unterminated comment") }
                if buf[pos] == UInt8(ascii: "*") && buf[pos + 1] == UInt8(ascii: "/") {
                    pos += 2
                    return
                }
                if buf[pos] == 0x0A {
                    line += 1
                    lineStart = base + Int64(pos + 1)
                }
                pos += 1
            }
        } else {
            throw unexpected(UInt8(ascii: "/"), expected: "a value")
        }
    }

    // MARK: - Literals and numbers

    private func expectLiteral(_ word: StaticString) throws {
        let n = word.utf8CodeUnitCount
        let ok = try ensure(n) && memcmp(buf + pos, word.utf8Start, n) == 0
        guard ok else { throw error(.unexpectedCharacter, "invalid literal, expected '\(word)'") }
        pos += n
    }

    /// Scans a number token at `pos`.
    @inline(__always)
    private func scanNumber() throws {
        if !scanPlainNumber() { try scanNumber(from: pos) }
    }

    /// The common case of `scanNumber`: an integer or a decimal fraction without exponent, followed
    /// by another byte in the buffer. Returns false, having changed nothing, for anything else
    /// (exponents, errors, the end of the buffer), which the general path then reads.
    @inline(__always)
    private func scanPlainNumber() -> Bool {
        let b = UnsafePointer(buf)
        let e = end
        let start = pos
        var p = start
        @inline(__always) func isDigit(_ c: UInt8) -> Bool { c &- 0x30 < 10 }
        if p < e && b[p] == UInt8(ascii: "-") { p &+= 1 }
        guard p < e else { return false }
        if b[p] == UInt8(ascii: "0") {
            p &+= 1
        } else if isDigit(b[p]) {
            p &+= 1
            while p < e && isDigit(b[p]) { p &+= 1 }
        } else {
            return false
        }
        guard p < e else { return false }
        if b[p] == UInt8(ascii: ".") {
            p &+= 1
            guard p < e && isDigit(b[p]) else { return false }
            while p < e && isDigit(b[p]) { p &+= 1 }
            guard p < e else { return false }
        }
        let c = b[p]
        // Exponents, and a digit after a leading zero (an error), are for the general path.
        if isDigit(c) || c == UInt8(ascii: "e") || c == UInt8(ascii: "E") { return false }
        if p - start > options.maxValueBytes { return false }
        valueInScratch = false
        valueStart = start
        valueEnd = p
        pos = p
        return true
    }

    private func scanNumber(from numberStart: Int) throws {
        var start = numberStart
        while true {
            var p = start
            // Returns the end of the number, or nil when the buffer ran out before it was certain.
            func scan() throws -> Int? {
                @inline(__always) func at(_ i: Int) -> UInt8? { i < end ? buf[i] : nil }
                @inline(__always) func isDigit(_ c: UInt8?) -> Bool { c.map { $0 &- 0x30 < 10 } ?? false }
                if at(p) == UInt8(ascii: "-") { p += 1 }
                guard let first = at(p) else { return atEOF ? nil : -1 }
                if first == UInt8(ascii: "0") {
                    p += 1
                    if isDigit(at(p)) { throw errorAt(start, .invalidNumber, "invalid number: leading zero") }
                } else if isDigit(first) {
                    p += 1
                    while isDigit(at(p)) { p += 1 }
                } else {
                    throw errorAt(start, .invalidNumber, "invalid number: expected a digit")
                }
                if p >= end && !atEOF { return -1 }
                if at(p) == UInt8(ascii: ".") {
                    p += 1
                    guard isDigit(at(p)) else {
                        if p >= end && !atEOF { return -1 }
                        throw errorAt(start, .invalidNumber, "invalid number: expected a digit after '.'")
                    }
                    while isDigit(at(p)) { p += 1 }
                    if p >= end && !atEOF { return -1 }
                }
                if at(p) == UInt8(ascii: "e") || at(p) == UInt8(ascii: "E") {
                    p += 1
                    if at(p) == UInt8(ascii: "+") || at(p) == UInt8(ascii: "-") { p += 1 }
                    guard isDigit(at(p)) else {
                        if p >= end && !atEOF { return -1 }
                        throw errorAt(start, .invalidNumber, "invalid number: expected a digit in the exponent")
                    }
                    while isDigit(at(p)) { p += 1 }
                    if p >= end && !atEOF { return -1 }
                }
                return p
            }
            let r = try scan()
            if let r, r >= 0 {
                if r - start > options.maxValueBytes { throw errorAt(start, .sizeLimit, "number too long") }
                valueInScratch = false
                valueStart = start
                valueEnd = r
                pos = r
                return
            }
            if r == nil { throw errorAt(start, .invalidNumber, "invalid number: unexpected end of input") }
            // Ran out of buffer mid-number: keep it and read more.
            pos = start
            let shift = try refill(keeping: start, minimum: end - start + 1)
            start -= max(0, shift)
            if shift < 0 { throw errorAt(start, .invalidNumber, "invalid number: unexpected end of input") }
        }
    }

    // MARK: - Strings

    /// Loads 8 bytes at `p` with the first byte in the low bits.
    @inline(__always)
    private static func word(_ p: UnsafePointer<UInt8>) -> UInt64 {
        UInt64(littleEndian: UnsafeRawPointer(p).loadUnaligned(as: UInt64.self))
    }

    /// A mask whose lowest set bit is in the first byte of `w` (from `word`) that is not plain string
    /// ASCII: a quote, a backslash, a control character or a non-ASCII byte; 0 when there is none.
    /// (Bits above the lowest one may be false alarms.)
    @inline(__always)
    private static func specialBytes(_ w: UInt64) -> UInt64 {
        let high: UInt64 = 0x8080_8080_8080_8080
        let ones: UInt64 = 0x0101_0101_0101_0101
        let control = (w &- 0x2020_2020_2020_2020) & ~w & high
        let q = w ^ 0x2222_2222_2222_2222
        let quote = (q &- ones) & ~q & high
        let b = w ^ 0x5C5C_5C5C_5C5C_5C5C
        let backslash = (b &- ones) & ~b & high
        return (w & high) | control | quote | backslash
    }

    /// Loads 16 bytes at `p`.
    @inline(__always)
    private static func vector(_ p: UnsafePointer<UInt8>) -> SIMD16<UInt8> {
        UnsafeRawPointer(p).loadUnaligned(as: SIMD16<UInt8>.self)
    }

    /// The lanes of `m` as two words, first lane in the low bits of the first; a set lane is 0xFF.
    @inline(__always)
    private static func words(_ m: SIMDMask<SIMD16<Int8>>) -> (UInt64, UInt64) {
        let w = unsafeBitCast(m, to: SIMD2<UInt64>.self)
        return (UInt64(littleEndian: w[0]), UInt64(littleEndian: w[1]))
    }

    /// The lanes of `v` that are not plain string ASCII: quotes, backslashes, control characters and
    /// non-ASCII bytes.
    @inline(__always)
    private static func specialLanes(_ v: SIMD16<UInt8>) -> SIMDMask<SIMD16<Int8>> {
        (v .== SIMD16(repeating: 0x22)) .| (v .== SIMD16(repeating: 0x5C))
            .| (v .< SIMD16(repeating: 0x20)) .| (v .>= SIMD16(repeating: 0x80))
    }

    /// The end of the plain run of string content in `b[p..<e]`: the first position that is not the
    /// start of printable ASCII or of a complete, valid multi-byte UTF-8 sequence. That is a quote,
    /// a backslash, a control character, invalid or truncated UTF-8, or `e`.
    @inline(__always)
    private static func plainRunEnd(_ b: UnsafePointer<UInt8>, _ p0: Int, _ e: Int) -> Int {
        var p = p0
        while true {
            if p &+ 16 <= e {
                let (lo, hi) = words(specialLanes(vector(b + p)))
                if lo | hi == 0 {
                    p &+= 16
                    // A long run (base64, text): 64 bytes at a time where the CPU can.
                    if e &- p >= 64 { p &+= dk_plain_ascii_prefix(b + p, e &- p) }
                    continue
                }
                p &+= lo != 0 ? lo.trailingZeroBitCount &>> 3 : 8 &+ hi.trailingZeroBitCount &>> 3
            } else if p &+ 8 <= e {
                let m = specialBytes(word(b + p))
                if m == 0 {
                    p &+= 8
                    continue
                }
                p &+= m.trailingZeroBitCount &>> 3
            } else if p >= e {
                return p
            }
            var c = b[p]
            if c < 0x80 {
                // Plain ASCII near `e` (fewer than 8 bytes left), or the end of the run.
                if c == UInt8(ascii: "\"") || c == UInt8(ascii: "\\") || c < 0x20 { return p }
                p &+= 1
                continue
            }
            // A run of multi-byte sequences (as in CJK text), validated without going back to plain
            // ASCII scanning, two 3-byte ones at a time where possible.
            while true {
                if p &+ 8 <= e {
                    let w = word(b + p)
                    if w & 0xC0C0_F0C0_C0F0 == 0x8080_E080_80E0 && commonLeads(w) {
                        p &+= 6
                        continue
                    }
                    c = UInt8(truncatingIfNeeded: w)
                } else {
                    guard p < e else { return p }
                    c = b[p]
                }
                if c < 0x80 { break }
                if c < 0xE0 {
                    guard c >= 0xC2, p &+ 2 <= e, b[p &+ 1] & 0xC0 == 0x80 else { return p }
                    p &+= 2
                } else if c < 0xF0 {
                    guard p &+ 3 <= e else { return p }
                    let b1 = b[p &+ 1]
                    guard b1 & 0xC0 == 0x80, b[p &+ 2] & 0xC0 == 0x80 else { return p }
                    // No overlong forms (E0 80..9F) and no surrogates (ED A0..BF).
                    if c == 0xE0 && b1 < 0xA0 || c == 0xED && b1 >= 0xA0 { return p }
                    p &+= 3
                } else {
                    guard c <= 0xF4, p &+ 4 <= e else { return p }
                    let b1 = b[p &+ 1]
                    guard b1 & 0xC0 == 0x80, b[p &+ 2] & 0xC0 == 0x80, b[p &+ 3] & 0xC0 == 0x80 else { return p }
                    // Nothing overlong (F0 80..8F) or past U+10FFFF (F4 90..BF).
                    if c == 0xF0 && b1 < 0x90 || c == 0xF4 && b1 >= 0x90 { return p }
                    p &+= 4
                }
            }
        }
    }

    /// Whether the 3-byte sequences starting at bytes 0 and 3 of `w` (from `word`) have leads other
    /// than E0 and ED, which need their second byte range-checked.
    @inline(__always)
    private static func commonLeads(_ w: UInt64) -> Bool {
        // Bit n set for the low nibbles n of E1...EC, EE and EF.
        let ok: UInt64 = 0xDFFE
        return (ok &>> (w & 0xF)) & (ok &>> ((w &>> 24) & 0xF)) & 1 != 0
    }

    /// Scans a string token at `pos` (the opening quote); its decoded content ends up in `bytes`,
    /// unless it runs past the end of the buffer and `onRefill` is given: then it goes there in
    /// pieces. Returns whether the content is in `bytes`.
    @inline(__always) @discardableResult
    private func scanString(onRefill: ((UnsafeRawBufferPointer) throws -> Void)? = nil) throws -> Bool {
        // The common case: no escapes, valid, and closed inside the buffer.
        let p = Self.plainRunEnd(buf, pos + 1, end)
        if p < end && buf[p] == UInt8(ascii: "\"") {
            valueInScratch = false
            valueStart = pos + 1
            valueEnd = p
            pos = p + 1
            hadEscapes = false
            return true
        }
        return try scanString(from: p, chunkHandler: nil, onRefill: onRefill)
    }

    /// Scans a string token at `pos` (the opening quote) whose bytes up to `resume` are known to be
    /// plain (see `plainRunEnd`). Without a handler the decoded content ends up in `bytes`; with one,
    /// decoded pieces are handed to it as they are found. `onRefill` becomes the handler if the
    /// string runs past the end of the buffer. Returns whether the content is in `bytes`.
    @discardableResult
    private func scanString(
        from resume: Int, chunkHandler handler: ((UnsafeRawBufferPointer) throws -> Void)?,
        onRefill: ((UnsafeRawBufferPointer) throws -> Void)? = nil
    ) throws -> Bool {
        var chunkHandler = handler
        pos += 1
        var runStart = pos  // start of the current raw run not yet copied out
        var p = resume
        var inScratch = false
        hadEscapes = false
        scratch.count = 0
        // The memory of an earlier huge string is given back rather than kept for the whole run.
        if scratch.capacity > 1 << 24 { scratch.shrink(to: 4096) }

        // Moves the raw run [runStart, p) to the scratch buffer or the handler.
        func flushRun() throws {
            let n = p - runStart
            guard n > 0 else { return }
            if let chunkHandler {
                try flushScratch()
                try chunkHandler(UnsafeRawBufferPointer(start: buf + runStart, count: n))
            } else {
                scratch.append(UnsafeRawBufferPointer(start: buf + runStart, count: n))
                if scratch.count > options.maxValueBytes {
                    throw errorAt(p, .sizeLimit, "string longer than \(options.maxValueBytes) bytes")
                }
            }
            runStart = p
        }
        func flushScratch() throws {
            if let chunkHandler, scratch.count > 0 {
                try chunkHandler(scratch.bytes(0, scratch.count))
                scratch.count = 0
            }
        }
        // Gets at least `n` bytes at p (or all that remain), after moving pending raw bytes out.
        func need(_ n: Int) throws -> Bool {
            if end - p >= n { return true }
            if chunkHandler == nil, let onRefill {
                // Hand out what was gathered so far, and the rest in pieces.
                chunkHandler = onRefill
                try flushScratch()
            }
            try flushRun()
            inScratch = true
            pos = p
            let shift = try refill(keeping: p, minimum: n)
            if shift > 0 { p -= shift }
            runStart = p
            return end - p >= n
        }
        let relaxed = options.relaxed

        while true {
            p = Self.plainRunEnd(buf, p, end)
            if p >= end {
                if !(try need(1)) { throw errorAt(p, .unexpectedEnd, "unterminated string") }
                continue
            }
            let c = buf[p]
            if c == UInt8(ascii: "\"") {
                if !inScratch && chunkHandler == nil {
                    valueInScratch = false
                    valueStart = runStart
                    valueEnd = p
                } else {
                    try flushRun()
                    try flushScratch()
                    valueInScratch = true
                }
                pos = p + 1
                return chunkHandler == nil
            } else if c == UInt8(ascii: "\\") {
                hadEscapes = true
                try flushRun()
                inScratch = true
                _ = try need(12)
                if p + 1 >= end { throw errorAt(p, .unexpectedEnd, "unterminated string") }
                let e = buf[p + 1]
                var decoded: UInt8 = 0
                switch e {
                case UInt8(ascii: "\""): decoded = 0x22
                case UInt8(ascii: "\\"): decoded = 0x5C
                case UInt8(ascii: "/"): decoded = 0x2F
                case UInt8(ascii: "b"): decoded = 0x08
                case UInt8(ascii: "f"): decoded = 0x0C
                case UInt8(ascii: "n"): decoded = 0x0A
                case UInt8(ascii: "r"): decoded = 0x0D
                case UInt8(ascii: "t"): decoded = 0x09
                case UInt8(ascii: "u"):
                    let scalar = try decodeUnicodeEscape(at: p)
                    p += scalar.length
                    appendUTF8(scalar.value)
                    runStart = p
                    if scratch.count >= 1 << 16 { try flushScratch() }
                    continue
                default:
                    throw errorAt(
                        p, .invalidEscape,
                        "invalid escape sequence '\\\(e >= 0x21 && e < 0x7F ? String(Character(Unicode.Scalar(e))) : "?")'")
                }
                scratch.append(decoded)
                p += 2
                runStart = p
                if scratch.count >= 1 << 16 { try flushScratch() }
            } else if c < 0x20 {
                if relaxed && (c == 0x0A || c == 0x0D || c == 0x09) {
                    if c == 0x0A {
                        line += 1
                        lineStart = base + Int64(p + 1)
                    }
                    p += 1
                } else {
                    throw errorAt(
                        p, .controlCharacter, "control character 0x\(String(c, radix: 16, uppercase: true)) in a string must be escaped")
                }
            } else {
                // Invalid UTF-8, or a valid sequence cut by the end of the buffer (`plainRunEnd` takes
                // the others, and all printable ASCII).
                let n: Int
                if c >= 0xC2 && c <= 0xDF {
                    n = 2
                } else if c >= 0xE0 && c <= 0xEF {
                    n = 3
                } else if c >= 0xF0 && c <= 0xF4 {
                    n = 4
                } else {
                    throw errorAt(p, .invalidUTF8, "invalid UTF-8 byte 0x\(String(c, radix: 16, uppercase: true))")
                }
                if end - p < n {
                    _ = try need(n)
                    if end - p < n { throw errorAt(p, .invalidUTF8, "truncated UTF-8 sequence") }
                }
                let b1 = buf[p + 1]
                var lo: UInt8 = 0x80, hi: UInt8 = 0xBF
                if c == 0xE0 { lo = 0xA0 } else if c == 0xED { hi = 0x9F } else if c == 0xF0 { lo = 0x90 } else if c == 0xF4 { hi = 0x8F }
                guard b1 >= lo && b1 <= hi else { throw errorAt(p, .invalidUTF8, "invalid UTF-8 sequence") }
                if n >= 3 { guard buf[p + 2] & 0xC0 == 0x80 else { throw errorAt(p, .invalidUTF8, "invalid UTF-8 sequence") } }
                if n == 4 { guard buf[p + 3] & 0xC0 == 0x80 else { throw errorAt(p, .invalidUTF8, "invalid UTF-8 sequence") } }
                p += n
            }
            if chunkHandler != nil && p - runStart >= 1 << 16 {
                try flushRun()
            }
        }
    }

    private func hexValue(_ c: UInt8) -> UInt32? {
        switch c {
        case 0x30...0x39: return UInt32(c - 0x30)
        case 0x41...0x46: return UInt32(c - 0x41 + 10)
        case 0x61...0x66: return UInt32(c - 0x61 + 10)
        default: return nil
        }
    }

    private func hex4(at p: Int) throws -> UInt32 {
        guard p + 6 <= end else { throw errorAt(p, .invalidEscape, "incomplete \\u escape") }
        var v: UInt32 = 0
        for i in 2..<6 {
            guard let h = hexValue(buf[p + i]) else { throw errorAt(p, .invalidEscape, "invalid \\u escape: expected 4 hex digits") }
            v = v << 4 | h
        }
        return v
    }

    /// Decodes `\uXXXX` (and a following low surrogate) at `p`; lone surrogates are errors.
    private func decodeUnicodeEscape(at p: Int) throws -> (value: UInt32, length: Int) {
        let u = try hex4(at: p)
        if u >= 0xDC00 && u <= 0xDFFF { throw errorAt(p, .loneSurrogate, "lone low surrogate \\u\(String(u, radix: 16, uppercase: true))") }
        guard u >= 0xD800 && u <= 0xDBFF else { return (u, 6) }
        guard p + 12 <= end, buf[p + 6] == UInt8(ascii: "\\"), buf[p + 7] == UInt8(ascii: "u") else {
            throw errorAt(p, .loneSurrogate, "lone high surrogate \\u\(String(u, radix: 16, uppercase: true))")
        }
        let low = try hex4(at: p + 6)
        guard low >= 0xDC00 && low <= 0xDFFF else {
            throw errorAt(p, .loneSurrogate, "high surrogate \\u\(String(u, radix: 16, uppercase: true)) not followed by a low surrogate")
        }
        return (0x10000 + ((u - 0xD800) << 10) + (low - 0xDC00), 12)
    }

    private func appendUTF8(_ v: UInt32) {
        switch v {
        case 0..<0x80:
            scratch.append(UInt8(v))
        case 0x80..<0x800:
            scratch.append(UInt8(0xC0 | (v >> 6)))
            scratch.append(UInt8(0x80 | (v & 0x3F)))
        case 0x800..<0x10000:
            scratch.append(UInt8(0xE0 | (v >> 12)))
            scratch.append(UInt8(0x80 | ((v >> 6) & 0x3F)))
            scratch.append(UInt8(0x80 | (v & 0x3F)))
        default:
            scratch.append(UInt8(0xF0 | (v >> 18)))
            scratch.append(UInt8(0x80 | ((v >> 12) & 0x3F)))
            scratch.append(UInt8(0x80 | ((v >> 6) & 0x3F)))
            scratch.append(UInt8(0x80 | (v & 0x3F)))
        }
    }
}
