import JSONStream

/// Streams a dump and yields as `BlobCandidate`s the smallest subtrees worth a blob step's look: those
/// holding a value that a selection picks out (a string long enough to hold a file, a flat object
/// shaped like a blob reference), wherever they are; everything else passes through unchanged.
///
/// This lets `extract-blobs` and `inline-blobs` work on any dump without knowing its schema. Each
/// container is read into memory, as compact JSON, up to `bufferLimit` bytes of input: if it ends
/// within the limit it becomes one record (parsed into a tree) when it holds a candidate, or passes
/// through as that JSON when it does not. A container larger than the limit is streamed instead:
/// what was read of it is passed through or yielded (its complete children) and its remaining
/// children are read the same way one by one. So `{"articles": {...}}` of 1 GB yields one record per article that has an image,
/// and memory stays about the limit plus the records in flight.
///
/// `patterns` limit the search to values whose path matches one of them or lies below one that
/// does (none: the whole dump); a record's captures are those of the pattern that matched.
public final class CandidateReader: UnitReader {
    /// What a record must contain.
    public struct Selection {
        /// Strings (their unescaped UTF-8) that make a record.
        public var string: ((UnsafeRawBufferPointer) -> Bool)?
        /// Objects whose members are all scalars (at most `flatObjectLimit`) that make a record.
        public var object: ((JSONObject) -> Bool)?
        /// Files the reader decodes itself (with `string`, which a file's text must pass; one read
        /// in pieces is taken as passing): a string that `EmbeddedFile.scan` takes with these
        /// settings is decoded straight from the reader's buffer, or piece by piece as it is read
        /// when it reaches the end of the buffer (`ChunkedFileDecoder`). The candidate then carries
        /// the file (`BlobCandidate.files`) and `null` in its place, so the text never becomes a
        /// `String`; other strings are kept as text.
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

    /// A container being read into memory, as compact JSON in `scratch`.
    private struct Open {
        var isObject: Bool
        /// Where its member name starts in `scratch`; -1 for an array element or the first container.
        var nameStart: Int
        /// Its index in the enclosing array.
        var index: Int
        /// Where its `{` or `[` is in `scratch`.
        var start: Int
        /// Its first complete child in `children`.
        var firstChild: Int
        var count = 0  // complete children
        var candidate = false
        var flat = true  // no child is a container
        var location: (line: Int, column: Int)  // where its `{` or `[` is in the input
    }

    /// A complete child of an open container, kept for `spill`.
    private struct Child {
        /// Where its member name starts in `scratch`; -1 in an array.
        var nameStart: Int
        /// Its compact JSON in `scratch`.
        var range: Range<Int>
        var candidate: Bool
    }

    /// Work left after a container outgrew the limit, done in order by `next`.
    private enum Action {
        case open(name: String?, isObject: Bool, path: [String], level: PatternWalk.Level)
        /// A value passed through, as compact JSON.
        case json(name: String?, [UInt8])
        case candidate(BlobCandidate)
        case pendingKey(String)
    }

    /// Objects with more members than this are never candidates of `Selection.object`.
    public static let flatObjectLimit = 8

    public let reader: JSONReader
    public var bytesConsumed: Int64 { reader.bytesConsumed }
    public var patterns: [PathPattern] { walk.patterns }
    /// Containers up to this many bytes of input are read whole.
    public let bufferLimit: Int
    private let selection: Selection
    private var walk: PatternWalk
    private var actions: [Action] = []
    private var nextAction = 0
    private var started = false
    private var finished = false
    /// Where the candidates of the records not yet handed out start (with `locatesCandidates`).
    private var candidateLocations: [[String]: (line: Int, column: Int)] = [:]

    /// Decodes `selection.files` piece by piece (one for all strings).
    private let fileDecoder: ChunkedFileDecoder?
    /// The container `read` is reading, as compact JSON; no tree is built unless it holds a candidate.
    private let scratchBytes = MemoryByteSink()
    private let scratch: JSONWriter
    /// The storage of `read`'s lists, kept for the next container (`read` works on them as local
    /// variables, which have no exclusivity checks).
    private var openStorage: [Open] = []
    private var childStorage: [Child] = []
    private var memberStorage: [JSONObject.Member] = []

    /// Whether to note where each candidate starts in the input, for `takeLocation(of:)`.
    public var locatesCandidates = false

    /// Reads `source`, yielding the subtrees with values `selection` picks out, where `patterns` allow.
    public init(
        source: JSONByteSource, patterns: [PathPattern] = [], selection: Selection, bufferLimit: Int = 4 << 20,
        options: JSONReader.Options = .init(), sourceName: String? = nil
    ) {
        reader = JSONReader(source: source, options: options, sourceName: sourceName)
        walk = PatternWalk(patterns: patterns)
        self.selection = selection
        self.bufferLimit = bufferLimit
        fileDecoder = selection.files.map { ChunkedFileDecoder(minimumBytes: $0.minimumBytes, dataURIsOnly: $0.dataURIsOnly) }
        scratch = JSONWriter(sink: scratchBytes)
    }

    public func next(passThrough sink: PassThroughSink?) throws -> BlobCandidate? {
        // Every record handed out so far has been dealt with: their locations are no longer asked for.
        if nextAction == actions.count && !candidateLocations.isEmpty { candidateLocations.removeAll(keepingCapacity: true) }
        while true {
            if let record = try runActions(sink) { return record }
            if !started {
                started = true
                let rootInside = patterns.isEmpty || patterns.contains { $0.depth == 0 }
                let root = PatternWalk.Level(isObject: false, active: Array(patterns.indices), inside: rootInside)
                if let candidate = try visit(key: nil, parent: root, sink: sink) { return candidate }
                continue
            }
            guard let key = try walk.nextKey(reader, sink: sink) else { break }
            if let candidate = try visit(key: key, parent: walk.levels[walk.levels.count - 1], sink: sink) { return candidate }
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
    private func runActions(_ sink: PassThroughSink?) throws -> BlobCandidate? {
        while nextAction < actions.count {
            let action = actions[nextAction]
            nextAction += 1
            switch action {
            case .open(let name, let isObject, let levelPath, let level):
                if let name { try sink?.name(name) }
                try sink?.beginContainer(isObject: isObject)
                walk.resume(in: level, path: levelPath)
            case .json(let name, let json):
                if let sink {
                    if let name { try sink.name(name) }
                    try json.withUnsafeBytes { try sink.value(compactJSON: $0) }
                }
            case .candidate(let candidate):
                return candidate
            case .pendingKey(let key):
                walk.pendingKey = key
            }
        }
        actions.removeAll(keepingCapacity: true)
        nextAction = 0
        return nil
    }

    /// Handles the value of `key` (the root when `nil`): a record, a container to read or descend
    /// into, or content passed through.
    private func visit(key: String?, parent: PatternWalk.Level, sink: PassThroughSink?) throws -> BlobCandidate? {
        let path = walk.path
        var inside = parent.inside
        var captures = parent.captures
        var deeper: [Int] = key == nil && !inside ? parent.active : []  // the root: every pattern is deeper
        if let key, !inside {
            let (exact, further) = walk.match(key, in: parent)
            if let exact {
                inside = true
                captures = patterns[exact].match(path + [key]) ?? [:]
            }
            deeper = further
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
                return BlobCandidate(record: Record(path: recordPath, captures: captures, value: .null), files: [recordPath: file])
            case .text(let text, candidate: true):
                let recordPath = key.map { path + [$0] } ?? []
                if locatesCandidates { candidateLocations[recordPath] = reader.location }
                return BlobCandidate(
                    record: Record(
                        path: recordPath, captures: captures,
                        value: .string(text.map { String(decoding: $0, as: UTF8.self) } ?? reader.stringValue)))
            case .text(let text, candidate: false):
                if let sink {
                    if let name { try sink.name(name) }
                    resetScratch()
                    try writeString(text)
                    try scratch.flush()
                    try scratchBytes.bytes.withUnsafeBytes { try sink.value(compactJSON: $0) }
                }
                return nil
            }
        }
        if isContainer && !deeper.isEmpty {
            try reader.next()
            if let name { try sink?.name(name) }
            try sink?.beginContainer(isObject: kind == .beginObject)
            walk.open(PatternWalk.Level(isObject: kind == .beginObject, active: deeper, captures: captures), key: key)
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

    /// Reads the container at `key` into memory, as compact JSON: a record if it holds a candidate
    /// (then parsed into a tree), passed through as that JSON if not, or, past `bufferLimit`, turned
    /// into queued work and streamed.
    private func read(key: String?, name: String?, captures: [String: String], sink: PassThroughSink?) throws -> BlobCandidate? {
        let start = reader.bytesConsumed
        let basePath = key.map { walk.path + [$0] } ?? []
        resetScratch()
        // The containers open in `scratch`, outermost first, and the complete children of each; the
        // members of the innermost open object while `selection.object` may still pick it out (flat,
        // at most `flatObjectLimit` members).
        var opens = openStorage, children = childStorage, flatMembers = memberStorage
        (openStorage, childStorage, memberStorage) = ([], [], [])
        defer {
            opens.removeAll(keepingCapacity: true)
            children.removeAll(keepingCapacity: true)
            flatMembers.removeAll(keepingCapacity: true)
            (openStorage, childStorage, memberStorage) = (opens, children, flatMembers)
        }
        var memberStart = -1  // where the name of the member being read starts in `scratch`
        var flatKey = ""  // its name, when `flatMembers` is kept
        var files: [[String]: EmbeddedFile] = [:]  // decoded by `selection.files`, by path
        let escapeNames = reader.options.relaxed
        /// Where the next value of the innermost container starts in `scratch` (after its comma).
        func nextValueStart() -> Int {
            guard let top = opens.last, !top.isObject, top.count > 0 else { return scratch.bytesWritten }
            return scratch.bytesWritten + 1
        }
        /// Notes that the innermost container got a complete child written from `valueStart`.
        func added(from valueStart: Int, nameStart: Int, candidate: Bool, container: Bool) {
            let top = opens.count - 1
            children.append(Child(nameStart: nameStart, range: valueStart..<scratch.bytesWritten, candidate: candidate))
            opens[top].count += 1
            if candidate { opens[top].candidate = true }
            if container { opens[top].flat = false }
        }
        /// Whether the innermost container is an object that `selection.object` may still pick out.
        func keepsMembers() -> Bool {
            guard selection.object != nil, let top = opens.last else { return false }
            return top.isObject && top.flat && top.count < Self.flatObjectLimit
        }
        /// The path of the open container at `depth` (0: the one at `basePath`).
        func openPath(_ depth: Int) throws -> [String] {
            var p = basePath
            for d in stride(from: 1, through: depth, by: 1) { p.append(try self.key(of: opens[d].nameStart, index: opens[d].index)) }
            return p
        }
        /// The path of the value about to be read in the innermost container.
        func memberPath() throws -> [String] {
            try openPath(opens.count - 1) + [try self.key(of: memberStart, index: opens[opens.count - 1].count)]
        }
        while true {
            if let top = opens.last, reader.bytesConsumed - start > bufferLimit {
                // A small flat object may still be a candidate: finish it first.
                let mayBeCandidate = selection.object != nil && top.isObject && top.flat && top.count < Self.flatObjectLimit
                if !mayBeCandidate {
                    try spill(opens, children, basePath: basePath, memberStart: memberStart, name: name, captures: captures, files: files)
                    return nil
                }
            }
            let valueStart = nextValueStart()
            if try reader.peek() == .string {
                switch try readString() {
                case .file(let file):
                    let at = try memberPath()
                    if locatesCandidates { candidateLocations[at] = reader.location }
                    // A second file at the same path (a member name repeated) keeps its text: the
                    // worker finds each file by its path.
                    if files[at] != nil {
                        try scratch.string(file.text)
                    } else {
                        files[at] = file
                        try scratch.null()
                    }
                    added(from: valueStart, nameStart: memberStart, candidate: true, container: false)
                case .text(let text, let candidate):
                    if candidate && locatesCandidates { candidateLocations[try memberPath()] = reader.location }
                    if keepsMembers() {
                        let string = text.map { String(decoding: $0, as: UTF8.self) } ?? reader.stringValue
                        flatMembers.append(JSONObject.Member(key: flatKey, value: .string(string)))
                    }
                    try writeString(text)
                    added(from: valueStart, nameStart: memberStart, candidate: candidate, container: false)
                }
                memberStart = -1
                continue
            }
            let k = try reader.next()
            switch k {
            case .beginObject, .beginArray:
                if k == .beginObject { try scratch.beginObject() } else { try scratch.beginArray() }
                opens.append(
                    Open(
                        isObject: k == .beginObject, nameStart: memberStart, index: opens.last?.count ?? 0,
                        start: valueStart, firstChild: children.count, location: reader.location))
                memberStart = -1
                flatMembers.removeAll(keepingCapacity: true)  // the enclosing object is not flat
                continue
            case .name:
                if keepsMembers() { flatKey = reader.stringValue }
                memberStart = scratch.bytesWritten + (opens[opens.count - 1].count > 0 ? 1 : 0)
                try scratch.name(utf8: reader.bytes, needsEscaping: reader.lastStringHadEscapes || escapeNames)
                continue
            case .endObject, .endArray:
                let done = opens.removeLast()
                if done.isObject { try scratch.endObject() } else { try scratch.endArray() }
                children.removeSubrange(done.firstChild...)
                let range = done.start..<scratch.bytesWritten
                var candidate = done.candidate
                if done.isObject, !candidate, done.flat, done.count <= Self.flatObjectLimit, let test = selection.object,
                    test(JSONObject(flatMembers))
                {
                    candidate = true
                    if locatesCandidates {
                        let at =
                            opens.isEmpty ? basePath : try openPath(opens.count - 1) + [try self.key(of: done.nameStart, index: done.index)]
                        candidateLocations[at] = done.location
                    }
                }
                if !opens.isEmpty {
                    added(from: done.start, nameStart: done.nameStart, candidate: candidate, container: true)
                    continue
                }
                if candidate {
                    return BlobCandidate(record: Record(path: basePath, captures: captures, value: try value(range)), files: files)
                }
                if let sink {
                    if let name { try sink.name(name) }
                    try scratch.flush()
                    try scratchBytes.bytes.withUnsafeBytes { try sink.value(compactJSON: UnsafeRawBufferPointer(rebasing: $0[range])) }
                }
                return nil
            case .string: preconditionFailure("strings are read above")
            case .number: try scratch.number(text: reader.bytes)
            case .true: try scratch.bool(true)
            case .false: try scratch.bool(false)
            case .null: try scratch.null()
            case .end: throw reader.error(.unexpectedEnd, "unexpected end of input")
            }
            if keepsMembers() {
                let value: JSONValue = k == .number ? .number(JSONNumber(text: reader.stringValue)) : k == .null ? .null : .bool(k == .true)
                flatMembers.append(JSONObject.Member(key: flatKey, value: value))
            }
            added(from: valueStart, nameStart: memberStart, candidate: false, container: false)
            memberStart = -1
        }
    }

    /// Empties `scratch` for a new value, keeping the memory of a container within the buffer limit.
    private func resetScratch() {
        scratch.reset()
        scratchBytes.removeAll(keepingCapacityUpTo: max(2 * bufferLimit, 1 << 20))
    }

    /// Writes a string `readString` gave as text to `scratch`: `text`, or the reader's string when nil.
    private func writeString(_ text: [UInt8]?) throws {
        if let text {
            try text.withUnsafeBytes { try scratch.string(utf8: $0) }
        } else {
            try scratch.string(utf8: reader.bytes, needsEscaping: reader.lastStringHadEscapes || reader.options.relaxed)
        }
    }

    /// The member name written at `nameStart` in `scratch`, or `index` as text when there is none (-1).
    private func key(of nameStart: Int, index: Int) throws -> String {
        guard nameStart >= 0 else { return String(index) }
        try scratch.flush()
        let bytes = scratchBytes.bytes
        var end = nameStart + 1
        while bytes[end] != UInt8(ascii: "\"") { end += bytes[end] == UInt8(ascii: "\\") ? 2 : 1 }
        let reader = JSONReader(bytes: Array(bytes[nameStart...end]), options: .init(bufferSize: max(end - nameStart + 1, 64)))
        try reader.next()
        return reader.stringValue
    }

    /// The value whose compact JSON is at `range` in `scratch`, as a tree (its strings and numbers
    /// passed the reader's size limit when they were read; the whole has none, as before).
    private func value(_ range: Range<Int>) throws -> JSONValue {
        try scratch.flush()
        // Read in place, through a buffer of at most 1 MiB: a huge string in the value is then
        // gathered once, as the reader moves it into the value, not copied twice before.
        let options = JSONReader.Options(
            maxDepth: reader.options.maxDepth, maxValueBytes: .max, bufferSize: min(max(range.count, 64), 1 << 20))
        return try JSONReader(source: MemoryByteSource(scratchBytes.bytes[range]), options: options).readValue()
    }

    /// A string as `readString` read it.
    private enum FileString {
        case file(EmbeddedFile)
        /// Not a file: its text (`nil`: the reader's `bytes`), and whether the selection picks it out.
        case text([UInt8]?, candidate: Bool)
    }

    /// Reads the string the reader is at: as text, with whether `selection.string` picks it out, or
    /// with `selection.files` as a file when it is one (decoded whole from the buffer when it sits
    /// there, else piece by piece through `fileDecoder`).
    private func readString() throws -> FileString {
        let test = selection.string ?? { _ in false }
        guard let decoder = fileDecoder else {
            try reader.next()
            return .text(nil, candidate: test(reader.bytes))
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
            case .text(let text): return .text(text, candidate: text.withUnsafeBytes(test))
            }
        }
        let bytes = reader.bytes
        guard test(bytes) else { return .text(nil, candidate: false) }
        if case .file(let file) = EmbeddedFile.scan(bytes, minimumBytes: decoder.minimumBytes, dataURIsOnly: decoder.dataURIsOnly) {
            return .file(file)
        }
        return .text(nil, candidate: true)
    }

    /// Queues what was read of containers that outgrew the limit (`read`'s open containers and their
    /// complete children): each is opened as structure, its complete children become records or pass
    /// through, and streaming resumes in the innermost.
    private func spill(
        _ opens: [Open], _ children: [Child], basePath: [String], memberStart: Int, name: String?,
        captures: [String: String], files: [[String]: EmbeddedFile]
    ) throws {
        try scratch.flush()
        var levelPath = basePath
        for (depth, open) in opens.enumerated() {
            let openKey = try key(of: open.nameStart, index: open.index)
            if depth > 0 { levelPath.append(openKey) }
            let isInnermost = depth == opens.count - 1
            var level = PatternWalk.Level(isObject: open.isObject, active: [], inside: true, captures: captures)
            // An array's next index: after its complete elements, and after the one still open.
            level.index = open.count + (isInnermost ? 0 : 1)
            let openName = depth == 0 ? name : (opens[depth - 1].isObject ? openKey : nil)
            actions.append(.open(name: openName, isObject: open.isObject, path: levelPath, level: level))
            let end = isInnermost ? children.count : opens[depth + 1].firstChild
            for (i, child) in children[open.firstChild..<end].enumerated() {
                let childKey = try key(of: child.nameStart, index: i)
                if child.candidate {
                    let recordPath = levelPath + [childKey]
                    let recordFiles = files.filter { $0.key.starts(with: recordPath) }
                    actions.append(
                        .candidate(
                            BlobCandidate(
                                record: Record(path: recordPath, captures: captures, value: try value(child.range)), files: recordFiles)))
                } else {
                    actions.append(.json(name: open.isObject ? childKey : nil, Array(scratchBytes.bytes[child.range])))
                }
            }
        }
        if memberStart >= 0 { actions.append(.pendingKey(try key(of: memberStart, index: 0))) }
    }
}

extension CandidateReader.Selection {
    /// Strings whose unescaped UTF-8 passes `test`.
    public static func strings(_ test: @escaping (UnsafeRawBufferPointer) -> Bool) -> Self { Self(string: test) }

    /// Objects of scalars that pass `test`.
    public static func flatObjects(_ test: @escaping (JSONObject) -> Bool) -> Self { Self(object: test) }
}
