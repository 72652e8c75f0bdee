import JSONStream

/// A path pattern such as `/v1/todolist/{id}`: literal keys, `{name}` captures one key, `*` matches
/// one key without capturing.
public struct PathPattern: Hashable, Sendable, CustomStringConvertible {
    /// One segment of a pattern.
    public enum Segment: Hashable, Sendable {
        case literal(String)
        case capture(String)
        case wildcard
    }

    public let segments: [Segment]
    /// The pattern as written.
    public let text: String

    /// Parses a pattern; it must start with `/` (the root alone is `/`).
    public init(_ text: String) throws(PathPatternError) {
        guard text.hasPrefix("/") else { throw PathPatternError(pattern: text, reason: "a pattern starts with '/'") }
        self.text = text
        let body = text.dropFirst()
        if body.isEmpty {
            segments = []
            return
        }
        var parsed: [Segment] = []
        var names = Set<String>()
        for raw in body.split(separator: "/", omittingEmptySubsequences: false) {
            let s = String(raw)
            if s.isEmpty { throw PathPatternError(pattern: text, reason: "empty segment") }
            if s == "*" {
                parsed.append(.wildcard)
            } else if s.hasPrefix("{") && s.hasSuffix("}") && s.count > 2 {
                let name = String(s.dropFirst().dropLast())
                guard !name.contains("{"), !name.contains("}") else {
                    throw PathPatternError(pattern: text, reason: "bad capture '\(s)'")
                }
                guard names.insert(name).inserted else {
                    throw PathPatternError(pattern: text, reason: "capture '{\(name)}' is used twice")
                }
                parsed.append(.capture(name))
            } else {
                if s.contains("{") || s.contains("}") {
                    throw PathPatternError(pattern: text, reason: "a capture must be a whole segment: '\(s)'")
                }
                parsed.append(.literal(JSONPointer.unescape(s)))
            }
        }
        segments = parsed
    }

    private init(segments: [Segment], text: String) {
        self.segments = segments
        self.text = text
    }

    /// This pattern with literal keys after it (`/v2/todolist/{id}` and `images`: `/v2/todolist/{id}/images`).
    public func appending(_ keys: [String]) -> PathPattern {
        PathPattern(
            segments: segments + keys.map { .literal($0) },
            text: (segments.isEmpty ? "" : text) + keys.map { "/" + JSONPointer.escape($0) }.joined())
    }

    public var description: String { text }
    /// How many keys deep a matching path is.
    public var depth: Int { segments.count }
    /// The names of the captures, in order.
    public var captureNames: [String] {
        segments.compactMap { if case .capture(let n) = $0 { return n } else { return nil } }
    }

    /// Whether the key at `depth` (0-based) can match this pattern.
    @inlinable
    public func segmentMatches(_ key: String, at depth: Int) -> Bool {
        guard depth < segments.count else { return false }
        if case .literal(let l) = segments[depth] { return l == key }
        return true
    }

    /// Whether `path` matches exactly (`match(path) != nil`, without building the captures).
    public func matches(_ path: [String]) -> Bool {
        guard path.count == segments.count else { return false }
        for (i, segment) in segments.enumerated() {
            if case .literal(let l) = segment, l != path[i] { return false }
        }
        return true
    }

    /// The captures when `path` matches exactly, else `nil`.
    public func match(_ path: [String]) -> [String: String]? {
        guard path.count == segments.count else { return nil }
        var captures: [String: String] = [:]
        for (seg, key) in zip(segments, path) {
            switch seg {
            case .literal(let l): if l != key { return nil }
            case .capture(let n): captures[n] = key
            case .wildcard: break
            }
        }
        return captures
    }

    /// Whether some path matches both this pattern and `other`.
    public func overlaps(_ other: PathPattern) -> Bool {
        guard depth == other.depth else { return false }
        for (a, b) in zip(segments, other.segments) {
            if case .literal(let x) = a, case .literal(let y) = b, x != y { return false }
        }
        return true
    }

    /// Whether every path `other` matches, this pattern matches too.
    public func covers(_ other: PathPattern) -> Bool {
        guard depth == other.depth else { return false }
        for (a, b) in zip(segments, other.segments) {
            guard case .literal(let x) = a else { continue }
            guard case .literal(let y) = b, x == y else { return false }
        }
        return true
    }

    /// Whether `path` is a proper prefix of some path this pattern matches.
    public func isPrefix(_ path: [String]) -> Bool {
        guard path.count < segments.count else { return false }
        for (i, key) in path.enumerated() where !segmentMatches(key, at: i) { return false }
        return true
    }
}

/// A pattern that does not parse.
public struct PathPatternError: Error, CustomStringConvertible, Sendable {
    public let pattern: String
    public let reason: String
    public var description: String { "invalid path pattern '\(pattern)': \(reason)" }
}
