import JSONStream

/// A subtree a `CandidateReader` picked out, with the files it decoded from the subtree's strings
/// while reading (so their base64 text never became a `String`): what `ExtractBlobs` and
/// `InlineBlobs` take from it. Only the blob steps see this type; records carry no files.
public struct BlobCandidate: PipelineUnit {
    /// The subtree as a record. Each string decoded into `files` is `null` in its value.
    public var record: Record
    /// The files decoded from strings of the subtree, by the string's path from the root.
    public var files: [[String]: EmbeddedFile]

    public init(record: Record, files: [[String]: EmbeddedFile] = [:]) {
        self.record = record
        self.files = files
    }

    public var path: [String] { record.path }
}
