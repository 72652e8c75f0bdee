/// What a pipeline reads and hands its first step: a `Record`, or a unit of another kind that a
/// first `UnitTransformer` makes records of (`BlobCandidate`, which only the blob steps take).
public protocol PipelineUnit: Sendable {
    /// Where it was read: its results are written in its place, and errors name it.
    var path: [String] { get }
}

extension Record: PipelineUnit {}

/// A reader of pipeline units.
public protocol UnitReader<Unit>: AnyObject {
    associatedtype Unit: PipelineUnit
    /// The next unit, or `nil` at the end. Content outside units goes to `passThrough`; a reader
    /// without one turns such content into units of its own, so nothing is lost.
    func next(passThrough: PassThroughSink?) throws -> Unit?
    /// How many bytes of input have been read so far (the pipeline weighs units with it).
    var bytesConsumed: Int64 { get }
}

/// A reader of records: a dump tree (`DumpReader`) or NDJSON lines (`NDJSONReader`).
public protocol RecordReader: UnitReader where Unit == Record {}
