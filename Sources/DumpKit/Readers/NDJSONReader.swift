import JSONStream

/// Reads records from NDJSON lines of the form `{"path": "/json/pointer", "value": ...}`.
public final class NDJSONReader: RecordReader {
    public let reader: JSONReader
    public var bytesConsumed: Int64 { reader.bytesConsumed }
    private var line = 0
    /// The keys of the objects on the way to the last record's path (level d: the object at its first
    /// d keys), with the line of the record that made each and whether that record ends there, so that
    /// two records at one path, or one inside another, are refused; only open objects are kept.
    private var open: [[String: (line: Int, isRecord: Bool)]] = []
    private var lastPath: [String] = []

    public init(source: JSONByteSource, options: JSONReader.Options = .init(), sourceName: String? = nil) {
        var o = options
        o.multipleDocuments = true
        reader = JSONReader(source: source, options: o, sourceName: sourceName)
    }

    public func next(passThrough: PassThroughSink?) throws -> Record? {
        let k = try reader.next()
        if k == .end { return nil }
        line += 1
        let startLine = reader.location.line
        guard k == .beginObject else {
            throw reader.error(.typeMismatch, "record \(line): expected an object {\"path\": ..., \"value\": ...}")
        }
        var path: [String]? = nil
        var value: JSONValue? = nil
        while try reader.next() == .name {
            let key = reader.stringValue
            switch key {
            case "path":
                guard try reader.next() == .string, let segments = JSONPointer.segments(reader.stringValue) else {
                    throw reader.error(
                        .typeMismatch, "record \(line): \"path\" must be a JSON Pointer string such as \"/v1/todolist/-Kabc\"")
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
        try checkUnique(path, line: startLine)
        return Record(path: path, value: value)
    }

    private func checkUnique(_ path: [String], line: Int) throws {
        var common = 0
        while common < min(path.count, lastPath.count), path[common] == lastPath[common] { common += 1 }
        if open.count > common + 1 { open.removeLast(open.count - common - 1) }
        for depth in path.indices {
            if depth == open.count { open.append([:]) }
            let isEnd = depth == path.count - 1
            if let earlier = open[depth][path[depth]] {
                if isEnd || earlier.isRecord {
                    throw DuplicatePathError(file: reader.sourceName ?? "<input>", path: path, line: line, earlierLine: earlier.line)
                }
            } else {
                open[depth][path[depth]] = (line, isEnd)
            }
        }
        lastPath = path
    }
}

/// Two NDJSON records at one path, or one inside the other: the database has one value per path, so
/// the dump is ambiguous.
public struct DuplicatePathError: Error, DataError, CustomStringConvertible, Sendable {
    public let file: String
    public let path: [String]
    public let line: Int
    public let earlierLine: Int

    public var description: String {
        "\(file):\(line): record \(JSONPointer.string(path)) is at or inside the path of the record on line \(earlierLine); a path can hold one value"
    }
}
