import JSONStream

/// Writes one record per line: `{"path":"/json/pointer","value":...}`.
public final class NDJSONWriter: RecordWriter {
    public let writer: JSONWriter

    /// `writer` decides the value's form (compact or canonical); pretty output is not NDJSON.
    public init(writer: JSONWriter) {
        self.writer = writer
    }

    public var passThrough: PassThroughSink? { nil }

    public var takesCompactJSON: Bool { writer.isCompact }

    public func write(_ record: Record, from original: [String]?) throws {
        guard record.value != nil else { return }
        try Self.writeLine(record, to: writer)
    }

    public func write(path: [String], compactJSON json: UnsafeRawBufferPointer, from original: [String]?) throws {
        try Self.writeLine(pointer: JSONPointer.string(path), to: writer) { try $0.value(compactJSON: json) }
    }

    public func finish() throws { try writer.flush() }

    /// Writes `record` as one NDJSON line to `writer`.
    static func writeLine(_ record: Record, to writer: JSONWriter) throws {
        try writeLine(pointer: record.pointer, to: writer) { try $0.value(record.value ?? .null) }
    }

    /// Writes one line for the record at `pointer` whose value `writeValue` writes.
    static func writeLine(pointer: String, to writer: JSONWriter, writeValue: (JSONWriter) throws -> Void) throws {
        try writer.beginObject()
        try writer.name("path")
        try writer.string(pointer)
        try writer.name("value")
        try writeValue(writer)
        try writer.endObject()
        try writer.raw("\n")
    }
}
