import JSONStream

/// Rebuilds a dump tree around records: content passed through by `DumpReader` is copied as it
/// was, records that kept their path are written in place, and records moved to a new path are
/// placed at the end of the root object, grouped by path.
///
/// Moved records may land in objects the input already has (`/v1/user` stays while records move
/// into `/v1/todolist`): objects on the way to a move target (`relocationTargets`) are therefore not
/// written where they stand; their content is spooled, like the moved records, to an anonymous
/// temporary file and placed together with them at the end, so every object appears once.
///
/// Objects whose every child was removed (deleted or moved records) are left out, as the Realtime
/// Database has no empty objects; objects that were already empty in the input are kept.
public final class DumpWriter: RecordWriter, PassThroughSink {
    private struct Level {
        var isObject: Bool
        var name: String?  // key in the parent object
        var opened: Bool
        var hadChildren: Bool
        /// Content below goes to the spool at full paths instead of the output.
        var spooling: Bool
    }

    public let writer: JSONWriter
    private var levels: [Level] = []
    private var path: [String] = []  // keys of the levels below the root (objects only; arrays give "")
    private var pendingName: String?
    private var rootKeys: Set<String> = []
    private var spool: RecordSpool?
    private let temporaryDirectory: String?
    private let deferredPrefixes: [[String]]
    private var placer: PathPlacer?  // for record-only input (no pass-through structure)
    private var sawStructure = false

    /// `relocationTargets` are the patterns records may be moved to (their literal prefixes decide
    /// which input objects are spooled).
    public init(writer: JSONWriter, relocationTargets: [PathPattern] = [], temporaryDirectory: String? = nil) {
        self.writer = writer
        self.temporaryDirectory = temporaryDirectory
        deferredPrefixes = relocationTargets.map { p in
            var prefix: [String] = []
            for s in p.segments.dropLast() {
                guard case .literal(let l) = s else { break }
                prefix.append(l)
            }
            return prefix
        }
    }

    public var passThrough: PassThroughSink? { self }

    // MARK: - Pass-through

    public func beginContainer(isObject: Bool) throws {
        sawStructure = true
        markChild()
        let name = pendingName
        pendingName = nil
        let parentSpooling = levels.last?.spooling ?? false
        var spooling = parentSpooling
        if !spooling, !levels.isEmpty, let name {
            let p = path + [name]
            spooling = deferredPrefixes.contains { $0.count >= p.count && Array($0.prefix(p.count)) == p }
        }
        if !levels.isEmpty { path.append(name ?? "") }
        levels.append(Level(isObject: isObject, name: name, opened: false, hadChildren: false, spooling: spooling))
    }

    public func endContainer() throws {
        if levels.count == 1 { try placeSpooledRecords() }
        let level = levels.removeLast()
        if !levels.isEmpty { path.removeLast() }
        if level.spooling {
            // An object that was empty in the input is kept as an empty value at its path.
            if !level.hadChildren {
                let empty: JSONValue = level.isObject ? .object([:]) : .array([])
                try spoolRecord(path + [level.name ?? ""]) { try $0.value(empty) }
            }
            return
        }
        if level.opened {
            if level.isObject { try writer.endObject() } else { try writer.endArray() }
        } else if !level.hadChildren {
            // Empty in the input: keep it.
            try openLevels()
            if let name = level.name { try writer.name(name) }
            if level.isObject {
                try writer.beginObject()
                try writer.endObject()
            } else {
                try writer.beginArray()
                try writer.endArray()
            }
        }
    }

    public func name(_ key: String) throws {
        pendingName = key
    }

    public func transferValue(from reader: JSONReader) throws {
        try passThroughValue { try reader.transfer(to: $0) }
    }

    public func value(compactJSON json: UnsafeRawBufferPointer) throws {
        try passThroughValue { try $0.value(compactJSON: json) }
    }

    /// Writes one value of pass-through content with `body`: into the spool when its object is held
    /// back for moved records, else into the output under the pending name.
    private func passThroughValue(_ body: (JSONWriter) throws -> Void) throws {
        sawStructure = true
        markChild()
        if levels.last?.spooling == true {
            try body(try beginSpoolFrame(path + [pendingName ?? ""]))
            try spool!.endFrame()
            pendingName = nil
            return
        }
        try openLevels()
        if let name = pendingName {
            if levels.count == 1 { rootKeys.insert(name) }
            try writer.name(name)
            pendingName = nil
        }
        try body(writer)
    }

    // MARK: - Records

    public var takesCompactJSON: Bool { writer.isCompact }

    public func write(_ record: Record, from original: [String]?) throws {
        try write(path: record.path, from: original, value: record.value.map { value in { try $0.value(value) } })
    }

    public func write(path: [String], compactJSON json: UnsafeRawBufferPointer, from original: [String]?) throws {
        try write(path: path, from: original) { try $0.value(compactJSON: json) }
    }

    /// Writes the record at `path` whose value `writeValue` writes (`nil`: the record was deleted).
    private func write(path: [String], from original: [String]?, value writeValue: ((JSONWriter) throws -> Void)?) throws {
        if let original, original == path, original.count == levels.count, !levels.isEmpty {
            markChild()
            guard let writeValue else { return }
            if levels[levels.count - 1].spooling { return try spoolRecord(path, writeValue) }
            try openLevels()
            if levels[levels.count - 1].isObject {
                let key = original[original.count - 1]
                if levels.count == 1 { rootKeys.insert(key) }
                try writer.name(key)
            }
            try writeValue(writer)
            return
        }
        if original != nil { markChild() }
        guard let writeValue else { return }
        if !sawStructure {
            // Record-only input: place records directly, in order.
            if path.isEmpty {
                guard placer == nil else { throw PlacementError.notBelowBase("") }
                try writeValue(writer)
                return
            }
            if placer == nil {
                try writer.beginObject()
                placer = PathPlacer(writer: writer, baseDepth: 0)
            }
            try placer!.place(path, writeValue: writeValue)
            return
        }
        try spoolRecord(path, writeValue)
    }

    public func finish() throws {
        if let placer {
            try placer.closeAll()
            try writer.endObject()
        } else if spool != nil {
            throw PlacementError.conflict("the document root (it is not an object)")
        }
        try writer.raw("\n")
        try writer.flush()
    }

    // MARK: - Internals

    private func markChild() {
        if !levels.isEmpty { levels[levels.count - 1].hadChildren = true }
    }

    /// Writes the names and openings of containers that were held back until they got a child.
    private func openLevels() throws {
        guard let first = levels.firstIndex(where: { !$0.opened }) else { return }
        for i in first..<levels.count {
            if let name = levels[i].name {
                if i == 1 { rootKeys.insert(name) }
                try writer.name(name)
            }
            if levels[i].isObject { try writer.beginObject() } else { try writer.beginArray() }
            levels[i].opened = true
        }
    }

    /// Starts a spool frame at `path`; the caller writes the value with the returned writer.
    private func beginSpoolFrame(_ path: [String]) throws -> JSONWriter {
        if spool == nil { spool = try RecordSpool(temporaryDirectory: temporaryDirectory) }
        try spool!.beginFrame(path)
        return spool!.writer
    }

    private func spoolRecord(_ path: [String], _ writeValue: (JSONWriter) throws -> Void) throws {
        try writeValue(try beginSpoolFrame(path))
        try spool!.endFrame()
    }

    /// Places the spooled content inside the root object, before it closes. A compact output takes
    /// the spooled values' bytes as they are; others rewrite them token by token, never building them.
    private func placeSpooledRecords() throws {
        guard let spool else { return }
        try spool.finishWriting()
        guard levels[0].isObject else { throw PlacementError.conflict("the document root (it is not an object)") }
        try openLevels()
        let placer = PathPlacer(writer: writer, baseDepth: 0)
        let copyBytes = writer.isCompact
        while let path = try spool.nextFrame() {
            if let first = path.first, rootKeys.contains(first) {
                throw PlacementError.conflict("/" + JSONPointer.escape(first))
            }
            try placer.place(path) { w in
                if copyBytes {
                    try w.value(compactJSON: { piece in while try spool.readValuePiece(piece) {} })
                } else {
                    let reader = JSONReader(source: spool.valueSource, options: .init(bufferSize: 1 << 16), sourceName: "spool")
                    try reader.transfer(to: w)
                }
            }
        }
        try placer.closeAll()
        self.spool = nil
    }
}
