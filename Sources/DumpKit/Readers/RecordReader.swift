/// A reader of records: a dump tree (`DumpReader`) or NDJSON lines (`NDJSONReader`).
public protocol RecordReader: AnyObject {
    /// The next record, or `nil` at the end. Content outside records goes to `passThrough`; a reader
    /// without one turns such content into records of its own, so nothing is lost.
    func next(passThrough: PassThroughSink?) throws -> Record?
    /// How many bytes of input have been read so far (the pipeline weighs records with it).
    var bytesConsumed: Int64 { get }
}
