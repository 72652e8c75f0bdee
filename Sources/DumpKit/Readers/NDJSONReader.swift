import JSONStream

/// Reads records from NDJSON lines of the form `{"path": "/json/pointer", "value": ...}`.
public final class NDJSONReader: RecordReader {
    public let reader: JSONReader
    public var bytesConsumed: Int64 { reader.bytesConsumed }
    private var line = 0

    public init(source: JSONByteSource, options: JSONReader.Options = .init(), sourceName: String? = nil) {
        var o = options
        o.multipleDocuments = true
        reader = JSONReader(source: source, options: o, sourceName: sourceName)
    }

    public func next(passThrough: PassThroughSink?) throws -> Record? {
        let k = try reader.next()
        if k == .end { return nil }
        line += 1
        guard k == .beginObject else { throw reader.error(.typeMismatch, "record \(line): expected an object {\"path\": ..., \"value\": ...}") }
        var path: [String]? = nil
        var value: JSONValue? = nil
        while try reader.next() == .name {
            let key = reader.stringValue
            switch key {
            case "path":
                guard try reader.next() == .string, let segments = JSONPointer.segments(reader.stringValue) else {
                    throw reader.error(.typeMismatch, "record \(line): \"path\" must be a JSON Pointer string such as \"/v1/todolist/-Kabc\"")
                }
                path = segments
            case "value":
                value = try reader.readValue()
            default:
                throw reader.error(.typeMismatch, "record \(line): unexpected member \"\(key)\" (expected \"path\" and \"value\")")
            }
        }
        guard let path else { throw reader.error(.typeMismatch, "record \(line): missing \"path\"") }
        guard let value else { throw reader.error(.typeMismatch, "record \(line): missing \"value\"") }
        return Record(path: path, value: value)
    }
}
