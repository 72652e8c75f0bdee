/// A per-record step of a pipeline (named with a verb: migrate, extract-blobs).
public protocol RecordTransformer: Sendable {
    /// The step's name, used in error messages.
    var name: String { get }
    /// How many records this step may work on at once; above 1 the pipeline runs it in an ordered
    /// window on worker threads.
    var maxConcurrency: Int { get }
    /// Turns one record into zero (dropped), one or several records.
    func transform(_ record: Record) throws -> [Record]
}

extension RecordTransformer {
    public var maxConcurrency: Int { 1 }
}

/// A transformer's failure, with the step and the record it failed on.
public struct PipelineError: Error, CustomStringConvertible {
    public let step: String
    public let pointer: String
    public let underlying: Error

    public var description: String { "\(step) at \(pointer.isEmpty ? "/" : pointer): \(underlying)" }
}
