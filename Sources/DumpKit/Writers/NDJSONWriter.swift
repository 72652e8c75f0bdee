import JSONStream

/// Writes one record per line: `{"path":"/json/pointer","value":...}`.
public final class NDJSONWriter: RecordWriter {
    public let writer: JSONWriter

    /// `writer` decides the value's form (compact or canonical); pretty output is not NDJSON.
    public init(writer: JSONWriter) {
        self.writer = writer
    }

    public var passThrough: PassThroughSink? { nil }

    public func write(_ record: Record, from original: [String]?) throws {
        guard record.value != nil else { return }
        try Self.writeLine(record, to: writer)
    }

    public func finish() throws { try writer.flush() }

    /// Writes `record` as one NDJSON line to `writer`.
    static func writeLine(_ record: Record, to writer: JSONWriter) throws {
        try writer.beginObject()
        try writer.name("path")
        try writer.string(record.pointer)
        try writer.name("value")
        try writer.value(record.value ?? .null)
        try writer.endObject()
        try writer.raw("\n")
    }
}
