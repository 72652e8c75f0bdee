import JSONStream

/// Rebuilds a dump tree around records: content passed through by `DumpReader` is copied as it
/// was, records that kept their path are written in place, and records moved to a new path go into
/// the objects on their way that the tree has, wherever those stand (see `MoveMerger`).
///
/// Without move targets the tree goes straight to the output in one pass, keeping every key where
/// it was. With move targets it is written compactly to an anonymous temporary file while the moved
/// records are spooled (`MoveSpool`); `finish()` then merges them in while copying the tree to the
/// output. A moved record that cannot be placed (its path is taken, lies below a value that is not an
/// object, or breaks the database's key and depth limits) is a `MoveConflict`: thrown, or handed to
/// `onMoveConflict`.
///
/// Objects whose every child was removed (deleted or moved records) are left out, as the Realtime
/// Database has no empty objects; objects that were already empty in the input are kept.
public final class DumpWriter: RecordWriter, PassThroughSink {
    private struct Level {
        var isObject: Bool
        var name: String?  // key in the parent object
        var opened: Bool
        var hadChildren: Bool
    }

    /// The output.
    private let output: JSONWriter
    /// Where the tree is written: the output, or the compact tree file when records may move.
    private let writer: JSONWriter
    private let tree: TemporaryFile?
    private let spool: MoveSpool?
    private let moveTargets: [PathPattern]
    private let temporaryDirectory: String?
    private var levels: [Level] = []
    private var pendingName: String?
    private var placer: PathPlacer?  // for record-only input (no pass-through structure)
    private var sawStructure = false
    /// Gets the moved records that cannot be placed; when nil, the first one is thrown.
    public var onMoveConflict: ((MoveConflict) throws -> Void)?

    /// A writer of records that keep their path.
    public init(writer: JSONWriter) {
        output = writer
        self.writer = writer
        tree = nil
        spool = nil
        moveTargets = []
        temporaryDirectory = nil
    }

    /// A writer of records that may move to paths `moveTargets` match; temporary files go to
    /// `temporaryDirectory` (default `$TMPDIR`).
    public init(writer: JSONWriter, moveTargets: [PathPattern], temporaryDirectory: String? = nil) throws {
        output = writer
        self.moveTargets = moveTargets
        self.temporaryDirectory = temporaryDirectory
        if moveTargets.isEmpty {
            self.writer = writer
            tree = nil
            spool = nil
        } else {
            let tree = try TemporaryFile(directory: temporaryDirectory)
            self.tree = tree
            self.writer = JSONWriter(sink: tree)
            spool = try MoveSpool(temporaryDirectory: temporaryDirectory)
        }
    }

    public var passThrough: PassThroughSink? { self }

    // MARK: - Pass-through

    public func beginContainer(isObject: Bool) throws {
        sawStructure = true
        markChild()
        let name = pendingName
        pendingName = nil
        levels.append(Level(isObject: isObject, name: name, opened: false, hadChildren: false))
    }

    public func endContainer() throws {
        let level = levels.removeLast()
        if level.opened {
            if level.isObject { try writer.endObject() } else { try writer.endArray() }
        } else if !level.hadChildren || levels.isEmpty {
            // Empty in the input, or the root: keep it.
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

    /// Writes one value of pass-through content with `body` under the pending name.
    private func passThroughValue(_ body: (JSONWriter) throws -> Void) throws {
        sawStructure = true
        markChild()
        try openLevels()
        if let name = pendingName {
            try writer.name(name)
            pendingName = nil
        }
        try body(writer)
    }

    // MARK: - Records

    public var takesCompactJSON: Bool { writer.isCompact }

    public func write(_ record: Record, from original: [String]?) throws {
        guard let value = record.value else { return try write(path: record.path, from: original, value: nil) }
        if let original, original != record.path {
            return try move(record.path, from: original, nesting: MoveSpool.nesting(value), value: { value }) { try $0.value(value) }
        }
        try write(path: record.path, from: original) { try $0.value(value) }
    }

    public func write(path: [String], compactJSON json: UnsafeRawBufferPointer, from original: [String]?) throws {
        if let original, original != path {
            let value = { try JSONReader(bytes: Array(json)).readValue() }
            return try move(path, from: original, nesting: MoveSpool.nesting(compactJSON: json), value: value) {
                try $0.value(compactJSON: json)
            }
        }
        try write(path: path, from: original) { try $0.value(compactJSON: json) }
    }

    /// Writes the record at `path` whose value `writeValue` writes (`nil`: the record was deleted).
    private func write(path: [String], from original: [String]?, value writeValue: ((JSONWriter) throws -> Void)?) throws {
        if let original, original == path, original.count == levels.count, !levels.isEmpty {
            markChild()
            guard let writeValue else { return }
            try openLevels()
            if levels[levels.count - 1].isObject { try writer.name(original[original.count - 1]) }
            try writeValue(writer)
            return
        }
        if original != nil { markChild() }
        guard let writeValue else { return }
        guard !sawStructure else { throw PlacementError.outOfOrder(JSONPointer.string(path)) }
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
    }

    /// Spools a record moved from `original` to `path`, or hands it over as a conflict when the path
    /// breaks the database's limits.
    private func move(
        _ path: [String], from original: [String], nesting: Int, value: () throws -> JSONValue, writeValue: (JSONWriter) throws -> Void
    ) throws {
        markChild()
        guard let spool else { throw PlacementError.undeclaredMove(from: JSONPointer.string(original), to: JSONPointer.string(path)) }
        if let reason = MoveConflict.limitProblem(target: path, valueDepth: nesting) {
            return try conflict(MoveConflict(source: original, target: path, reason: reason, value: value()))
        }
        if let reason = try spool.add(target: path, source: original, writeValue: writeValue) {
            try conflict(MoveConflict(source: original, target: path, reason: reason, value: value()))
        }
    }

    private func conflict(_ c: MoveConflict) throws {
        guard let onMoveConflict else { throw c }
        try onMoveConflict(c)
    }

    public func finish() throws {
        if let placer {
            try placer.closeAll()
            try writer.endObject()
        }
        if let tree, let spool {
            try writer.flush()
            try MoveMerger(tree: tree, spool: spool, targets: moveTargets, temporaryDirectory: temporaryDirectory)
                .run(into: output, onConflict: conflict)
        }
        try output.raw("\n")
        try output.flush()
    }

    // MARK: - Internals

    private func markChild() {
        if !levels.isEmpty { levels[levels.count - 1].hadChildren = true }
    }

    /// Writes the names and openings of containers that were held back until they got a child.
    private func openLevels() throws {
        guard let first = levels.firstIndex(where: { !$0.opened }) else { return }
        for i in first..<levels.count {
            if let name = levels[i].name { try writer.name(name) }
            if levels[i].isObject { try writer.beginObject() } else { try writer.beginArray() }
            levels[i].opened = true
        }
    }
}
