import JSONStream

/// Rebuilds a dump tree around records: content passed through by `DumpReader` is copied as it
/// was, records that kept their path are written in place, and records moved to a new path are
/// placed at the end of the root object, grouped by path.
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

    public let writer: JSONWriter
    private var levels: [Level] = []
    private var pendingName: String?
    private var rootKeys: Set<String> = []
    private var moved: TemporaryFile?
    private var movedWriter: JSONWriter?
    private let temporaryDirectory: String?
    private var placer: PathPlacer?  // for record-only input (no pass-through structure)
    private var sawStructure = false

    public init(writer: JSONWriter, temporaryDirectory: String? = nil) {
        self.writer = writer
        self.temporaryDirectory = temporaryDirectory
    }

    public var passThrough: PassThroughSink? { self }

    // MARK: - Pass-through

    public func beginContainer(isObject: Bool) throws {
        sawStructure = true
        markChild()
        levels.append(Level(isObject: isObject, name: pendingName, opened: false, hadChildren: false))
        pendingName = nil
    }

    public func endContainer() throws {
        if levels.count == 1 { try placeMovedRecords() }
        let level = levels.removeLast()
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
        sawStructure = true
        markChild()
        try openLevels()
        if let name = pendingName {
            if levels.count == 1 { rootKeys.insert(name) }
            try writer.name(name)
            pendingName = nil
        }
        try reader.transfer(to: writer)
    }

    // MARK: - Records

    public func write(_ record: Record, from original: [String]?) throws {
        if let original, original == record.path, original.count == levels.count, !levels.isEmpty {
            markChild()
            guard let value = record.value else { return }
            try openLevels()
            if levels[levels.count - 1].isObject {
                let key = original[original.count - 1]
                if levels.count == 1 { rootKeys.insert(key) }
                try writer.name(key)
            }
            try writer.value(value)
            return
        }
        if original != nil { markChild() }
        guard let value = record.value else { return }
        if !sawStructure {
            // Record-only input: place records directly, in order.
            if record.path.isEmpty {
                guard placer == nil else { throw PlacementError.notBelowBase("") }
                try writer.value(value)
                return
            }
            if placer == nil {
                try writer.beginObject()
                placer = PathPlacer(writer: writer, baseDepth: 0)
            }
            try placer!.place(record.path, value)
            return
        }
        // Moved: spool until the root object closes.
        if movedWriter == nil {
            let file = try TemporaryFile(directory: temporaryDirectory)
            moved = file
            movedWriter = JSONWriter(sink: file)
        }
        try NDJSONWriter.writeLine(Record(path: record.path, value: value), to: movedWriter!)
    }

    public func finish() throws {
        if let placer {
            try placer.closeAll()
            try writer.endObject()
        } else if movedWriter != nil {
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

    /// Places the spooled moved records inside the root object, before it closes.
    private func placeMovedRecords() throws {
        guard let file = moved, let w = movedWriter else { return }
        try w.flush()
        guard levels[0].isObject else { throw PlacementError.conflict("the document root (it is not an object)") }
        try openLevels()
        let placer = PathPlacer(writer: writer, baseDepth: 0)
        let reader = NDJSONReader(source: file)
        while let r = try reader.next(passThrough: nil) {
            if let first = r.path.first, rootKeys.contains(first) {
                throw PlacementError.conflict("/" + JSONPointer.escape(first))
            }
            try placer.place(r.path, r.value!)
        }
        try placer.closeAll()
        moved = nil
        movedWriter = nil
    }
}
