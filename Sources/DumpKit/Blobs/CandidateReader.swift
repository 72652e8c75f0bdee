import JSONStream

/// Streams a dump and yields as records only the values a selection picks out, wherever they are:
/// strings (those long enough to hold a file) or small flat objects (blob references); everything
/// else passes through unchanged, token by token.
///
/// This lets `extract-blobs` and `inline-blobs` work on any dump without knowing its schema, with
/// the memory of one value per record: a pattern such as `/*` would make `{"articles": {...}}` a
/// single record the size of the dump. `patterns` limit the search to values whose path matches
/// one of them or lies below one that does (none: the whole dump); a record's captures are those of
/// the pattern that matched its path or an ancestor.
public final class CandidateReader: RecordReader {
    /// What becomes a record.
    public enum Selection {
        /// Strings whose unescaped UTF-8 passes the test.
        case strings((UnsafeRawBufferPointer) -> Bool)
        /// Objects of at most `maxMembers` members, all of them scalars, that pass the test.
        case flatObjects(maxMembers: Int, (JSONObject) -> Bool)
    }

    private struct Level {
        var isObject: Bool
        var index = 0  // next array index
        var active: [Int]  // patterns whose first segments match the path to this container
        var inside: Bool  // a pattern matched this container or an ancestor
        var captures: [String: String]
    }

    public let reader: JSONReader
    public let patterns: [PathPattern]
    private let selection: Selection
    private let replay = ValueReplay()
    private var levels: [Level] = []
    private var path: [String] = []
    private var pendingKey: String?  // a member name already read while looking into an object
    private var started = false
    private var finished = false

    /// Reads `source`, yielding the values `selection` picks out where `patterns` allow.
    public init(source: JSONByteSource, patterns: [PathPattern] = [], selection: Selection, options: JSONReader.Options = .init(), sourceName: String? = nil) {
        reader = JSONReader(source: source, options: options, sourceName: sourceName)
        self.patterns = patterns
        self.selection = selection
    }

    public func next(passThrough sink: PassThroughSink?) throws -> Record? {
        if !started {
            started = true
            let rootInside = patterns.isEmpty || patterns.contains { $0.depth == 0 }
            let root = Level(isObject: false, active: Array(patterns.indices), inside: rootInside, captures: [:])
            if let record = try visit(key: nil, parent: root, sink: sink) { return record }
        }
        while let level = levels.last {
            let key: String
            if let k = pendingKey {
                key = k
                pendingKey = nil
            } else {
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
                    key = reader.stringValue
                } else {
                    key = String(level.index)
                    levels[levels.count - 1].index += 1
                }
            }
            if let record = try visit(key: key, parent: level, sink: sink) { return record }
        }
        if !finished {
            finished = true
            let k = try reader.next()
            guard k == .end else { throw reader.error(.trailingData, "unexpected data after the JSON value") }
        }
        return nil
    }

    /// Handles the value of `key` (the root when `nil`): a record, a container to descend into, or
    /// content passed through.
    private func visit(key: String?, parent: Level, sink: PassThroughSink?) throws -> Record? {
        var inside = parent.inside
        var captures = parent.captures
        var deeper: [Int] = []
        if let key, !inside {
            let depth = path.count
            for i in parent.active where patterns[i].segmentMatches(key, at: depth) {
                if patterns[i].depth == depth + 1 {
                    inside = true
                    captures = patterns[i].match(path + [key]) ?? [:]
                    break
                }
                deeper.append(i)
            }
        }
        let named = key != nil && parent.isObject
        let kind = try reader.peek()
        let isContainer = kind == .beginObject || kind == .beginArray
        guard inside || (isContainer && !deeper.isEmpty) else {
            try passThrough(key: named ? key : nil, sink: sink)
            return nil
        }
        var valuePath: [String] { key.map { path + [$0] } ?? [] }
        switch (selection, kind) {
        case (.strings(let test), .string) where inside:
            try reader.next()
            let bytes = reader.bytes
            if test(bytes) { return Record(path: valuePath, captures: captures, value: .string(reader.stringValue)) }
            if let sink {
                if named { try sink.name(key!) }
                try replay.transferString(bytes, to: sink)
            }
            return nil
        case (.flatObjects(let maxMembers, let test), .beginObject) where inside:
            try reader.next()
            var members: [JSONObject.Member] = []
            while true {
                let k = try reader.peek()
                if k == .endObject {
                    try reader.next()
                    let object = JSONObject(members)
                    if test(object) { return Record(path: valuePath, captures: captures, value: .object(object)) }
                    if let sink {
                        if named { try sink.name(key!) }
                        try replay.transfer(.object(object), to: sink)
                    }
                    return nil
                }
                if members.count == maxMembers { break }
                try reader.next()
                let name = reader.stringValue
                let v = try reader.peek()
                if v == .beginObject || v == .beginArray {
                    pendingKey = name
                    break
                }
                members.append(JSONObject.Member(key: name, value: try reader.readValue()))
            }
            // Not a flat object: continue as structure, after the members read so far.
            try open(key: named ? key : nil, isObject: true, path: valuePath, inside: true, active: [], captures: captures, sink: sink)
            if let sink {
                for m in members {
                    try sink.name(m.key)
                    try replay.transfer(m.value, to: sink)
                }
            }
            return nil
        default:
            guard isContainer else {
                try passThrough(key: named ? key : nil, sink: sink)
                return nil
            }
            try reader.next()
            try open(key: named ? key : nil, isObject: kind == .beginObject, path: valuePath, inside: inside, active: deeper, captures: captures, sink: sink)
            return nil
        }
    }

    /// Enters a container whose opening token has been read.
    private func open(key: String?, isObject: Bool, path valuePath: [String], inside: Bool, active: [Int], captures: [String: String], sink: PassThroughSink?) throws {
        if let key { try sink?.name(key) }
        try sink?.beginContainer(isObject: isObject)
        levels.append(Level(isObject: isObject, active: active, inside: inside, captures: captures))
        if levels.count > 1 { path = valuePath }
    }

    /// Copies the next value to the sink unchanged (or skips it without one).
    private func passThrough(key: String?, sink: PassThroughSink?) throws {
        guard let sink else { return try reader.skipValue() }
        if let key { try sink.name(key) }
        try sink.transferValue(from: reader)
    }
}
