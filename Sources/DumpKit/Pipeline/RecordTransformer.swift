/// A per-record step of a pipeline (named with a verb: migrate, extract-blobs).
public protocol RecordTransformer: Sendable {
    /// The step's name, used in error messages.
    var name: String { get }
    /// How many records this step may work on at once; above 1 the pipeline runs it in an ordered
    /// window on worker threads.
    var maxConcurrency: Int { get }
    /// Turns one record into zero (dropped), one or several records.
    func transform(_ record: Record) throws -> [Record]
    /// Transforms consecutive records in one call: one result per record, in their order; a failure
    /// names its record with `BatchRecordError`. The pipeline's worker threads hand over small
    /// batches. By default one record at a time.
    func transform(batch records: [Record]) throws -> [[Record]]
}

extension RecordTransformer {
    public var maxConcurrency: Int { 1 }

    public func transform(batch records: [Record]) throws -> [[Record]] {
        var results: [[Record]] = []
        results.reserveCapacity(records.count)
        for (index, record) in records.enumerated() {
            do {
                results.append(try transform(record))
            } catch {
                throw BatchRecordError(index: index, underlying: error)
            }
        }
        return results
    }
}

/// A failure of `transform(batch:)`, with the position in the batch of the record it failed on.
public struct BatchRecordError: Error {
    public let index: Int
    public let underlying: Error

    public init(index: Int, underlying: Error) {
        self.index = index
        self.underlying = underlying
    }
}

/// A transformer's failure, with the step and the record it failed on.
public struct PipelineError: Error, CustomStringConvertible {
    public let step: String
    public let pointer: String
    public let underlying: Error

    public var description: String { "\(step) at \(pointer.isEmpty ? "/" : pointer): \(underlying)" }
}

/// The first step of a pipeline whose reader yields units other than records: it makes records of
/// them (`ExtractBlobs` and `InlineBlobs` take the `BlobCandidate`s of a `CandidateReader`).
public protocol UnitTransformer<Unit>: Sendable {
    associatedtype Unit: PipelineUnit
    /// The step's name, used in error messages.
    var name: String { get }
    /// How many units this step may work on at once (see `RecordTransformer.maxConcurrency`).
    var maxConcurrency: Int { get }
    /// Makes records of consecutive units: one result per unit, in their order; a failure names
    /// its unit with `BatchRecordError`.
    func transform(units: [Unit]) throws -> [[Record]]
}
