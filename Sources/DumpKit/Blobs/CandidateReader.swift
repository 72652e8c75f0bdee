import JSONStream

/// Streams a dump and yields as records the smallest subtrees worth a transformer's look: those
/// holding a value that a selection picks out (a string long enough to hold a file, a flat object
/// shaped like a blob reference), wherever they are; everything else passes through unchanged.
///
/// This lets `extract-blobs` and `inline-blobs` work on any dump without knowing its schema. Each
/// container is read into memory up to `bufferLimit` bytes of input: if it ends within the limit
/// it becomes one record when it holds a candidate, or passes through as one value when it does
/// not. A container larger than the limit is streamed instead: what was read of it is passed
/// through or yielded (its complete children) and its remaining children are read the same way
/// one by one. So `{"articles": {...}}` of 1 GB yields one record per article that has an image,
/// and memory stays about the limit plus the records in flight.
///
/// `patterns` limit the search to values whose path matches one of them or lies below one that
/// does (none: the whole dump); a record's captures are those of the pattern that matched.
public final class CandidateReader: RecordReader {
    /// What a record must contain.
    public struct Selection {
        /// Strings (their unescaped UTF-8) that make a record.
        public var string: ((UnsafeRawBufferPointer) -> Bool)?
        /// Objects whose members are all scalars (at most `flatObjectLimit`) that make a record.
        public var object: ((JSONObject) -> Bool)?
        /// Files the reader decodes itself (with `string`, which a file's text must pass; one read
        /// in pieces is taken as passing): a string that `EmbeddedFile.scan` takes with these
        /// settings is decoded straight from the reader's buffer, or piece by piece as it is read
        /// when it reaches the end of the buffer (`ChunkedFileDecoder`). The record then carries the
        /// file (`Record.files`) and `Record.filePlaceholder` in its place, so the text never
        /// becomes a `String`; other strings are kept as text.
        public var files: FileDecoding?

        /// What `files` decodes.
        public struct FileDecoding: Sendable {
            /// Files smaller than this (decoded) stay text.
            public var minimumBytes: Int
            /// Only `data:` URIs.
            public var dataURIsOnly: Bool

            public init(minimumBytes: Int, dataURIsOnly: Bool) {
                self.minimumBytes = minimumBytes
                self.dataURIsOnly = dataURIsOnly
            }
        }

        public init(string: ((UnsafeRawBufferPointer) -> Bool)? = nil, object: ((JSONObject) -> Bool)? = nil, files: FileDecoding? = nil) {
            self.string = string
            self.object = object
            self.files = files
        }
    }

    private struct Level {
        var isObject: Bool
        var index = 0  // next array index
        var active: [Int]  // patterns whose first segments match the path to this container
        var inside: Bool  // a pattern matched this container or an ancestor
        var captures: [String: String]
    }

    /// A container being read into memory.
    private struct Partial {
        var isObject: Bool
        var key: String?  // its key or index in the enclosing container (nil for the first)
        var members: [JSONObject.Member] = []
        var elements: [JSONValue] = []
        var flags: [Bool] = []  // per child: holds a candidate
        var candidate = false
        var flat = true  // no child is a container
        var start: (line: Int, column: Int)  // where its `{` or `[` is
    }

    /// Work left after a container outgrew the limit, done in order by `next`.
    private enum Action {
        case open(name: String?, isObject: Bool, path: [String], level: Level)
        case value(name: String?, JSONValue)
        case record(Record)
        case pendingKey(String)
    }

    /// Objects with more members than this are never candidates of `Selection.object`.
    public static let flatObjectLimit = 8

    public let reader: JSONReader
    public var bytesConsumed: Int64 { reader.bytesConsumed }
    public let patterns: [PathPattern]
    /// Containers up to this many bytes of input are read whole.
    public let bufferLimit: Int
    private let selection: Selection
    private var levels: [Level] = []
    private var path: [String] = []
    private var pendingKey: String?  // a member name already read while buffering
    private var actions: [Action] = []
    private var nextAction = 0
    private var started = false
    private var finished = false
    /// Where the candidates of the records not yet handed out start (with `locatesCandidates`).
    private var candidateLocations: [[String]: (line: Int, column: Int)] = [:]

    /// Decodes `selection.files` piece by piece (one for all strings).
    private let fileDecoder: ChunkedFileDecoder?

    /// Whether to note where each candidate starts in the input, for `takeLocation(of:)`.
    public var locatesCandidates = false

    /// Reads `source`, yielding the subtrees with values `selection` picks out, where `patterns` allow.
    public init(source: JSONByteSource, patterns: [PathPattern] = [], selection: Selection, bufferLimit: Int = 4 << 20,
                options: JSONReader.Options = .init(), sourceName: String? = nil) {
        reader = JSONReader(source: source, options: options, sourceName: sourceName)
        self.patterns = patterns
        self.selection = selection
        self.bufferLimit = bufferLimit
        fileDecoder = selection.files.map { ChunkedFileDecoder(minimumBytes: $0.minimumBytes, dataURIsOnly: $0.dataURIsOnly) }
    }

    public func next(passThrough sink: PassThroughSink?) throws -> Record? {
        // Every record handed out so far has been dealt with: their locations are no longer asked for.
        if nextAction == actions.count && !candidateLocations.isEmpty { candidateLocations.removeAll(keepingCapacity: true) }
        while true {
            if let record = try runActions(sink) { return record }
            if !started {
                started = true
                let rootInside = patterns.isEmpty || patterns.contains { $0.depth == 0 }
                let root = Level(isObject: false, active: Array(patterns.indices), inside: rootInside, captures: [:])
                if let record = try visit(key: nil, parent: root, sink: sink) { return record }
                continue
            }
            guard let level = levels.last else { break }
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

    /// The 1-based line and column where the candidate at `path` (a string or flat object the
    /// selection picked out) starts, for the records handed out since the reader last read on;
    /// `nil` unless `locatesCandidates` is set.
    public func takeLocation(of path: [String]) -> (line: Int, column: Int)? {
        candidateLocations.removeValue(forKey: path)
    }

    /// Does queued work until it yields a record.
    private func runActions(_ sink: PassThroughSink?) throws -> Record? {
        while nextAction < actions.count {
            let action = actions[nextAction]
            nextAction += 1
            switch action {
            case .open(let name, let isObject, let levelPath, let level):
                if let name { try sink?.name(name) }
                try sink?.beginContainer(isObject: isObject)
                levels.append(level)
                path = levelPath
            case .value(let name, let value):
                if let sink {
                    if let name { try sink.name(name) }
                    try sink.value(value)
                }
            case .record(let record):
                return record
            case .pendingKey(let key):
                pendingKey = key
            }
        }
        actions.removeAll(keepingCapacity: true)
        nextAction = 0
        return nil
    }

    /// Handles the value of `key` (the root when `nil`): a record, a container to read or descend
    /// into, or content passed through.
    private func visit(key: String?, parent: Level, sink: PassThroughSink?) throws -> Record? {
        var inside = parent.inside
        var captures = parent.captures
        var deeper: [Int] = key == nil && !inside ? parent.active : []  // the root: every pattern is deeper
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
        let name = parent.isObject ? key : nil
        let kind = try reader.peek()
        let isContainer = kind == .beginObject || kind == .beginArray
        if inside && isContainer {
            return try read(key: key, name: name, captures: captures, sink: sink)
        }
        if inside && kind == .string, selection.string != nil {
            switch try readString() {
            case .file(let file):
                let recordPath = key.map { path + [$0] } ?? []
                if locatesCandidates { candidateLocations[recordPath] = reader.location }
                return Record(path: recordPath, captures: captures, value: .string(Record.filePlaceholder), files: [recordPath: file])
            case .text(let text, candidate: true):
                let recordPath = key.map { path + [$0] } ?? []
                if locatesCandidates { candidateLocations[recordPath] = reader.location }
                return Record(path: recordPath, captures: captures, value: .string(text))
            case .text(let text, candidate: false):
                if let sink {
                    if let name { try sink.name(name) }
                    try sink.value(.string(text))
                }
                return nil
            }
        }
        if isContainer && !deeper.isEmpty {
            try reader.next()
            if let name { try sink?.name(name) }
            try sink?.beginContainer(isObject: kind == .beginObject)
            levels.append(Level(isObject: kind == .beginObject, active: deeper, inside: false, captures: captures))
            if let key { path.append(key) }
            return nil
        }
        guard let sink else {
            try reader.skipValue()
            return nil
        }
        if let name { try sink.name(name) }
        try sink.transferValue(from: reader)
        return nil
    }

    /// Reads the container at `key` into memory: a record if it holds a candidate, passed through
    /// as one value if not, or, past `bufferLimit`, turned into queued work and streamed.
    private func read(key: String?, name: String?, captures: [String: String], sink: PassThroughSink?) throws -> Record? {
        let start = reader.bytesConsumed
        let basePath = key.map { path + [$0] } ?? []
        var stack: [Partial] = []
        var member: String?
        var files: [[String]: EmbeddedFile] = [:]  // decoded by `selection.files`, by path
        /// The path of the value the reader is at: inside the innermost container, or that container.
        func currentPath(inside: Bool) -> [String] {
            var p = basePath
            for partial in stack.dropFirst() { p.append(partial.key!) }
            if inside, let top = stack.last { p.append(top.isObject ? member! : String(top.elements.count)) }
            return p
        }
        func add(_ value: JSONValue, candidate: Bool, container: Bool, key: String? = nil) {
            let top = stack.count - 1
            if stack[top].isObject {
                stack[top].members.append(JSONObject.Member(key: key ?? member!, value: value))
                member = nil
            } else {
                stack[top].elements.append(value)
            }
            stack[top].flags.append(candidate)
            if candidate { stack[top].candidate = true }
            if container { stack[top].flat = false }
        }
        while true {
            if let top = stack.last, reader.bytesConsumed - start > bufferLimit {
                // A small flat object may still be a candidate: finish it first.
                let mayBeCandidate = selection.object != nil && top.isObject && top.flat && top.members.count < Self.flatObjectLimit
                if !mayBeCandidate {
                    spill(stack, basePath: basePath, member: member, name: name, captures: captures, files: files)
                    return nil
                }
            }
            if try reader.peek() == .string {
                switch try readString() {
                case .file(let file):
                    let at = currentPath(inside: true)
                    if locatesCandidates { candidateLocations[at] = reader.location }
                    // A second file at the same path (a member name repeated) keeps its text: the
                    // worker finds each file by its path.
                    if files[at] != nil {
                        add(.string(file.text), candidate: true, container: false)
                    } else {
                        files[at] = file
                        add(.string(Record.filePlaceholder), candidate: true, container: false)
                    }
                case .text(let text, let candidate):
                    if candidate && locatesCandidates { candidateLocations[currentPath(inside: true)] = reader.location }
                    add(.string(text), candidate: candidate, container: false)
                }
                continue
            }
            let k = try reader.next()
            switch k {
            case .beginObject, .beginArray:
                var childKey: String? = nil
                if let parent = stack.last {
                    childKey = parent.isObject ? member! : String(parent.elements.count)
                    member = nil
                }
                stack.append(Partial(isObject: k == .beginObject, key: childKey, start: reader.location))
                continue
            case .name:
                member = reader.stringValue
                continue
            case .endObject, .endArray:
                let done = stack.removeLast()
                let value: JSONValue
                var candidate = done.candidate
                if done.isObject {
                    let object = JSONObject(done.members)
                    if !candidate && done.flat && object.count <= Self.flatObjectLimit, let test = selection.object, test(object) {
                        candidate = true
                        if locatesCandidates { candidateLocations[currentPath(inside: false) + (stack.isEmpty ? [] : [done.key!])] = done.start }
                    }
                    value = .object(object)
                } else {
                    value = .array(done.elements)
                }
                if !stack.isEmpty {
                    add(value, candidate: candidate, container: true, key: done.key)
                    continue
                }
                if candidate { return Record(path: basePath, captures: captures, value: value, files: files) }
                if let sink {
                    if let name { try sink.name(name) }
                    try sink.value(value)
                }
                return nil
            case .string: preconditionFailure("strings are read above")
            case .number: add(.number(JSONNumber(text: reader.stringValue)), candidate: false, container: false)
            case .true: add(.bool(true), candidate: false, container: false)
            case .false: add(.bool(false), candidate: false, container: false)
            case .null: add(.null, candidate: false, container: false)
            case .end: throw reader.error(.unexpectedEnd, "unexpected end of input")
            }
        }
    }

    /// A string as `readString` read it.
    private enum FileString {
        case file(EmbeddedFile)
        /// Not a file: the string, and whether the selection picks it out.
        case text(String, candidate: Bool)
    }

    /// Reads the string the reader is at: as text, with whether `selection.string` picks it out, or
    /// with `selection.files` as a file when it is one (decoded whole from the buffer when it sits
    /// there, else piece by piece through `fileDecoder`).
    private func readString() throws -> FileString {
        let test = selection.string ?? { _ in false }
        guard let decoder = fileDecoder else {
            try reader.next()
            return .text(reader.stringValue, candidate: test(reader.bytes))
        }
        let whole: Bool
        var size = 0
        let limit = reader.options.maxValueBytes
        do {
            whole = try reader.readString(orChunks: { piece in
                size += piece.count
                if size > limit { throw reader.error(.sizeLimit, "string longer than \(limit) bytes") }
                decoder.append(piece)
            })
        } catch {
            _ = decoder.finish()  // ready for another string
            throw error
        }
        guard whole else {
            switch decoder.finish() {
            case .file(let file): return .file(file)
            case .text(let text): return .text(String(decoding: text, as: UTF8.self), candidate: text.withUnsafeBytes(test))
            }
        }
        let bytes = reader.bytes
        guard test(bytes) else { return .text(reader.stringValue, candidate: false) }
        if case .file(let file) = EmbeddedFile.scan(bytes, minimumBytes: decoder.minimumBytes, dataURIsOnly: decoder.dataURIsOnly) {
            return .file(file)
        }
        return .text(reader.stringValue, candidate: true)
    }

    /// Queues what was read of containers that outgrew the limit: each is opened as structure, its
    /// complete children become records or pass through, and streaming resumes in the innermost.
    private func spill(_ stack: [Partial], basePath: [String], member: String?, name: String?, captures: [String: String],
                       files: [[String]: EmbeddedFile]) {
        var levelPath = basePath
        for (depth, partial) in stack.enumerated() {
            if depth > 0 { levelPath.append(partial.key!) }
            let isInnermost = depth == stack.count - 1
            var level = Level(isObject: partial.isObject, active: [], inside: true, captures: captures)
            // An array's next index: after its complete elements, and after the one still open.
            level.index = partial.elements.count + (isInnermost ? 0 : 1)
            let openName = depth == 0 ? name : (stack[depth - 1].isObject ? partial.key : nil)
            actions.append(.open(name: openName, isObject: partial.isObject, path: levelPath, level: level))
            for i in partial.flags.indices {
                let key = partial.isObject ? partial.members[i].key : String(i)
                let value = partial.isObject ? partial.members[i].value : partial.elements[i]
                if partial.flags[i] {
                    let recordPath = levelPath + [key]
                    let recordFiles = files.filter { $0.key.starts(with: recordPath) }
                    actions.append(.record(Record(path: recordPath, captures: captures, value: value, files: recordFiles)))
                } else {
                    actions.append(.value(name: partial.isObject ? key : nil, value))
                }
            }
        }
        if let member { actions.append(.pendingKey(member)) }
    }
}

extension CandidateReader.Selection {
    /// Strings whose unescaped UTF-8 passes `test`.
    public static func strings(_ test: @escaping (UnsafeRawBufferPointer) -> Bool) -> Self { Self(string: test) }

    /// Objects of scalars that pass `test`.
    public static func flatObjects(_ test: @escaping (JSONObject) -> Bool) -> Self { Self(object: test) }
}
