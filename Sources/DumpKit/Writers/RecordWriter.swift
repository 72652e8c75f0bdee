/// A writer of records: a dump tree (`DumpWriter`) or NDJSON lines (`NDJSONWriter`).
public protocol RecordWriter: AnyObject {
    /// Where content outside records goes; `nil` when this writer only takes records.
    var passThrough: PassThroughSink? { get }
    /// Whether record values may come already written as compact JSON
    /// (`write(path:compactJSON:from:)`), so that worker threads do that writing.
    var takesCompactJSON: Bool { get }
    /// Writes a record; `original` is the path it was read at (`nil` when it has none), so a record
    /// that kept its path is written in place and a moved one is placed at its new path. A record
    /// the transformers left nothing of comes as a `nil` value at its path, so that the writer knows
    /// its place was emptied.
    func write(_ record: Record, from original: [String]?) throws
    /// Writes a record at `path` whose value is `json`, its compact JSON text; otherwise as
    /// `write(_:from:)`.
    func write(path: [String], compactJSON json: UnsafeRawBufferPointer, from original: [String]?) throws
    /// Ends the output (closing what is open) and flushes it.
    func finish() throws
}
