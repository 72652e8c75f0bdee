import JSONStream

/// Checks the Realtime Database's own limits token by token, as a dump streams past: key
/// characters and length, depth, string size, `.value` beside children, `.sv` placeholders,
/// non-finite numbers; and warns about integer-keyed objects that read back as arrays with holes and
/// keys that are not push IDs where a pattern says they are.
public final class DatabaseLimitsChecker {
    /// The database's limits.
    public static let maxKeyBytes = 768
    public static let maxDepth = 32
    public static let maxStringBytes = 10 * 1024 * 1024

    /// Capture names that say a key is a push ID (`/v1/todolist/{pushId}`).
    public static let pushIDCaptureNames: Set<String> = ["pushId", "pushID", "push_id"]

    /// What the checks at a container's end look at: its names so far. A sharded run adds up the
    /// parts of a container that several shards read (`merge`).
    public struct ContainerState: Sendable, Equatable {
        public var isObject: Bool
        public var hasValueKey = false
        public var hasOtherKeys = false
        public var integerKeysOnly = true
        public var count = 0
        public var maxIntegerKey = -1

        public init(isObject: Bool) { self.isObject = isObject }

        /// Adds the names another part of the same container had.
        public mutating func add(_ other: ContainerState) {
            hasValueKey = hasValueKey || other.hasValueKey
            hasOtherKeys = hasOtherKeys || other.hasOtherKeys
            integerKeysOnly = integerKeysOnly && other.integerKeysOnly
            count += other.count
            maxIntegerKey = max(maxIntegerKey, other.maxIntegerKey)
        }
    }

    private enum ServerValueState {
        case none
        case expectValue  // after the name ".sv"
        case expectIncrementName  // inside {".sv": {
        case expectIncrementNumber  // after "increment"
        case expectIncrementEnd
    }

    private let report: (Finding) -> Void
    private let pushIDPatterns: [(pattern: PathPattern, depth: Int)]
    /// Names twice in one object: `json:duplicate-key` errors.
    private let duplicates: DuplicateKeyDetector
    // Only this class's own methods touch these, one at a time: no dynamic exclusivity checks
    // (they cost more than the checks themselves on every token).
    @exclusivity(unchecked) private var stack: [ContainerState] = []
    @exclusivity(unchecked) private var tooDeepAt: Int? = nil  // depth of the first key past the limit, until its subtree ends
    @exclusivity(unchecked) private var sv: ServerValueState = .none
    /// Sharded runs: the containers at the bottom of the stack that were opened before the shard's
    /// bytes, and where their ends go instead of being checked.
    private var spanning = 0
    private var spanningEnded: ((ContainerState, JSONReader) -> Void)?

    /// `patterns` are the record patterns of the run; those with a push-ID capture get their keys
    /// checked. Findings go to `report`.
    public init(patterns: [PathPattern] = [], report: @escaping (Finding) -> Void) {
        self.report = report
        var list: [(PathPattern, Int)] = []
        for p in patterns {
            for (i, s) in p.segments.enumerated() {
                if case .capture(let name) = s, Self.pushIDCaptureNames.contains(name) { list.append((p, i)) }
            }
        }
        pushIDPatterns = list
        duplicates = DuplicateKeyDetector { d in
            report(
                Finding(
                    severity: .error, rule: "json:duplicate-key", pointer: d.pointer,
                    message: "the name is in this object twice (first at byte \(d.firstOffset)): the dump is ambiguous",
                    line: d.line, column: d.column))
        }
    }

    private func finding(_ severity: Finding.Severity, _ rule: String, _ reader: JSONReader, _ message: String) {
        let loc = reader.location
        report(
            Finding(
                severity: severity, rule: "limits:" + rule, pointer: reader.pointer, message: message, line: loc.line, column: loc.column))
    }

    /// Looks at the token `reader.next()` just returned.
    public func observe(_ token: JSONToken, _ reader: JSONReader) {
        duplicates.observe(token, reader)
        if sv != .none { checkServerValue(token, reader) }
        switch token {
        case .beginObject, .beginArray:
            stack.append(ContainerState(isObject: token == .beginObject))
        case .endObject, .endArray:
            let s = stack.removeLast()
            if let d = tooDeepAt, reader.depth < d { tooDeepAt = nil }
            if stack.count < spanning {
                spanning = stack.count
                spanningEnded?(s, reader)
                return
            }
            guard s.isObject else { return }
            for f in Self.endFindings(s, pointer: reader.pointer, line: reader.location.line, column: reader.location.column) { report(f) }
        case .name:
            if reader.depth > Self.maxDepth && tooDeepAt == nil {
                tooDeepAt = reader.depth
                finding(.error, "depth", reader, "path deeper than \(Self.maxDepth) keys")
            }
            checkName(reader)
        case .string:
            if reader.bytes.count > Self.maxStringBytes {
                finding(.error, "string-size", reader, "string of \(reader.bytes.count) bytes is over the 10 MiB limit")
            }
        case .number:
            // Only an exponent or hundreds of digits take a number past the largest finite double.
            let text = reader.bytes
            guard text.count > 300 || text.contains(where: { $0 | 0x20 == UInt8(ascii: "e") }) else { return }
            if let d = Double(String(decoding: text, as: UTF8.self)), !d.isFinite {
                finding(.error, "non-finite", reader, "number \(String(decoding: text, as: UTF8.self)) is not a finite 64-bit float")
            }
        default:
            break
        }
    }

    /// The findings of a container's end, from its names (the location is made only for a finding).
    public static func endFindings(
        _ s: ContainerState, pointer: @autoclosure () -> String, line: @autoclosure () -> Int, column: @autoclosure () -> Int
    ) -> [Finding] {
        guard s.isObject else { return [] }
        var found: [Finding] = []
        let valueBeside = s.hasValueKey && s.hasOtherKeys
        let holes = s.integerKeysOnly && s.count > 0 && s.maxIntegerKey < 2 * s.count && s.count < s.maxIntegerKey + 1
        guard valueBeside || holes else { return found }
        let (pointer, line, column) = (pointer(), line(), column())
        if valueBeside {
            found.append(
                Finding(
                    severity: .error, rule: "limits:value-beside-children", pointer: pointer,
                    message: "\".value\" stands beside other children", line: line, column: column))
        }
        if holes {
            found.append(
                Finding(
                    severity: .warning, rule: "limits:array-with-holes", pointer: pointer,
                    message:
                        "keys are integers 0...\(s.maxIntegerKey) with \(s.maxIntegerKey + 1 - s.count) missing: the database reads this back as an array with null holes",
                    line: line, column: column))
        }
        return found
    }

    /// For a shard that starts inside containers (`validate --shard`), once its synthetic start is
    /// read: the containers open now were opened before the shard's bytes, so their states restart
    /// empty and their ends go to `ended` (to be checked at merge, with the other shards' parts of
    /// them) instead of being checked here.
    public func startSpanning(ended: @escaping (ContainerState, JSONReader) -> Void) {
        for i in stack.indices { stack[i] = ContainerState(isObject: stack[i].isObject) }
        spanning = stack.count
        spanningEnded = ended
    }

    /// The states of the open containers, outermost first.
    public var openContainers: [ContainerState] { stack }

    private func checkName(_ reader: JSONReader) {
        let key = reader.bytes
        guard !stack.isEmpty else { return }
        let top = stack.count - 1
        var s = stack[top]
        defer { stack[top] = s }
        s.count += 1
        // Only `.value`, `.priority` and `.sv` may start with a dot; any other dot is reported below.
        var special = false
        if key.first == UInt8(ascii: ".") {
            if key.elementsEqual(".value".utf8) {
                s.hasValueKey = true
                special = true
            } else if key.elementsEqual(".priority".utf8) {
                special = true
            } else if key.elementsEqual(".sv".utf8) {
                s.hasOtherKeys = true
                sv = .expectValue
                special = true
            }
        }
        if !special { s.hasOtherKeys = true }
        if s.integerKeysOnly {
            if let i = DatabaseKeyOrder.integerValue(key), i >= 0 {
                s.maxIntegerKey = max(s.maxIntegerKey, Int(i))
            } else {
                s.integerKeysOnly = false
            }
        }
        if special { return }
        if key.isEmpty {
            finding(.error, "key-empty", reader, "empty key")
        } else if key.count > Self.maxKeyBytes {
            finding(.error, "key-length", reader, "key of \(key.count) bytes is over the \(Self.maxKeyBytes)-byte limit")
        }
        if let bad = Self.firstForbiddenKeyByte(key) {
            let shown =
                bad < 0x20 || bad == 0x7F
                ? "control character 0x" + String(bad, radix: 16, uppercase: true) : "'\(Character(Unicode.Scalar(bad)))'"
            finding(.error, "key-characters", reader, "key contains \(shown); keys cannot contain . $ # [ ] / or control characters")
        }
        if !pushIDPatterns.isEmpty { checkPushID(key, reader) }
    }

    /// The first byte a key may not hold; eight bytes at a time, with the bit tricks that find a
    /// zero byte (`(v - 0x01...) & ~v & 0x80...`) in the word XORed with each forbidden byte. A key
    /// of 8 bytes or more ends with a word overlapping the one before, so only shorter keys and a
    /// word with a forbidden byte are looked at byte by byte.
    static func firstForbiddenKeyByte(_ key: UnsafeRawBufferPointer) -> UInt8? {
        let n = key.count
        var i = 0
        if n >= 8 {
            while i + 8 <= n && !hasForbiddenByte(key.loadUnaligned(fromByteOffset: i, as: UInt64.self)) { i += 8 }
            if i == n || (i + 8 > n && !hasForbiddenByte(key.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self))) { return nil }
        }
        while i < n {
            if isForbiddenKeyByte(key[i]) { return key[i] }
            i += 1
        }
        return nil
    }

    private func checkPushID(_ key: UnsafeRawBufferPointer, _ reader: JSONReader) {
        let level = reader.depth - 1  // index of this key in the path
        guard pushIDPatterns.contains(where: { $0.depth == level }) else { return }
        let segments = reader.pathSegments
        for (pattern, depth) in pushIDPatterns where depth == level {
            guard pattern.isPrefix(Array(segments.prefix(depth))) else { continue }
            if !PushID.isValid(key) {
                finding(.warning, "push-id", reader, "key is not a push ID (20 characters of -0-9A-Z_a-z), as \(pattern) says")
            }
            return
        }
    }

    /// Whether a word holds a byte `isForbiddenKeyByte` names.
    @inline(__always)
    private static func hasForbiddenByte(_ w: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        @inline(__always) func hasZero(_ v: UInt64) -> Bool { (v &- ones) & ~v & highs != 0 }
        let control = (w &- ones &* 0x20) & ~w & highs != 0
        // `.` and `/` (0x2E, 0x2F) differ only in the lowest bit.
        return control || hasZero(w ^ (ones &* 0x7F)) || hasZero((w | ones) ^ (ones &* 0x2F)) || hasZero(w ^ (ones &* 0x24))
            || hasZero(w ^ (ones &* 0x23)) || hasZero(w ^ (ones &* 0x5B)) || hasZero(w ^ (ones &* 0x5D))
    }

    static func isForbiddenKeyByte(_ c: UInt8) -> Bool {
        c < 0x20 || c == 0x7F || c == UInt8(ascii: ".") || c == UInt8(ascii: "$") || c == UInt8(ascii: "#")
            || c == UInt8(ascii: "[") || c == UInt8(ascii: "]") || c == UInt8(ascii: "/")
    }

    /// Follows `{".sv": "timestamp"}` and `{".sv": {"increment": n}}`.
    private func checkServerValue(_ token: JSONToken, _ reader: JSONReader) {
        let bad = { (what: String) in
            self.finding(
                .error, "server-value", reader, "malformed .sv placeholder: \(what); expected \"timestamp\" or {\"increment\": number}")
            self.sv = .none
        }
        switch sv {
        case .none:
            return
        case .expectValue:
            if token == .string {
                if reader.bytes.elementsEqual("timestamp".utf8) {
                    sv = .none
                } else {
                    bad("unknown server value \"\(reader.stringValue)\"")
                }
            } else if token == .beginObject {
                sv = .expectIncrementName
            } else if token != .name {
                bad("a \(token) value")
            }
        case .expectIncrementName:
            if token == .name && reader.bytes.elementsEqual("increment".utf8) {
                sv = .expectIncrementNumber
            } else {
                bad("an object without \"increment\"")
            }
        case .expectIncrementNumber:
            if token == .number { sv = .expectIncrementEnd } else { bad("\"increment\" is not a number") }
        case .expectIncrementEnd:
            if token == .endObject { sv = .none } else { bad("extra members beside \"increment\"") }
        }
    }
}
