import JSONStream

/// The walk through a dump tree towards path patterns that `DumpReader` and `CandidateReader`
/// share: the containers open on the way (with the patterns each can still lead to), the path to
/// the innermost, and the key of each next member. The readers decide what a key's value becomes.
struct PatternWalk {
    /// An open container.
    struct Level {
        var isObject: Bool
        /// Patterns whose first segments match the path to this container.
        var active: [Int]
        /// The next array index.
        var index = 0
        /// A pattern matched this container or an ancestor (`CandidateReader`).
        var inside = false
        /// The captures of that pattern.
        var captures: [String: String] = [:]
    }

    let patterns: [PathPattern]
    private(set) var levels: [Level] = []
    /// The keys from the root to the innermost open container.
    private(set) var path: [String] = []
    /// A member name already read (by a reader that buffered ahead), returned by the next `nextKey`.
    var pendingKey: String?

    init(patterns: [PathPattern]) {
        self.patterns = patterns
    }

    /// Reads up to the next member of the innermost open container and returns its key (an array's
    /// index as text), closing the containers that end on the way (and ending them in `sink`);
    /// `nil` when no container is open.
    mutating func nextKey(_ reader: JSONReader, sink: PassThroughSink?) throws -> String? {
        if let key = pendingKey {
            pendingKey = nil
            return key
        }
        while let level = levels.last {
            let k = try reader.peek()
            if k == .endObject || k == .endArray {
                try reader.next()
                levels.removeLast()
                if !levels.isEmpty { path.removeLast() }
                try sink?.endContainer()
                continue
            }
            if level.isObject {
                try reader.next()
                return reader.stringValue
            }
            levels[levels.count - 1].index += 1
            return String(level.index)
        }
        return nil
    }

    /// Which pattern of `level.active` ends at `key` (the first; then nothing else is looked at),
    /// or else which go on below it.
    func match(_ key: String, in level: Level) -> (exact: Int?, deeper: [Int]) {
        let depth = path.count
        var deeper: [Int] = []
        for i in level.active where patterns[i].segmentMatches(key, at: depth) {
            if patterns[i].depth == depth + 1 { return (i, []) }
            deeper.append(i)
        }
        return (nil, deeper)
    }

    /// Opens a container, `level`, as the innermost: the root (`key` nil) or the member `key` of
    /// the innermost.
    mutating func open(_ level: Level, key: String?) {
        levels.append(level)
        if let key { path.append(key) }
    }

    /// Opens a container whose path is `path` (a reader that read ahead resumes streaming in it).
    mutating func resume(in level: Level, path: [String]) {
        levels.append(level)
        self.path = path
    }
}
