import JSONStream

/// `dumpkit convert`: a dump tree to NDJSON records and back, re-formatting and recompressing on
/// the way, in one streaming pass.
public struct ConvertJob {
    public var input: String
    public var output: String
    /// Input format; `nil` guesses from the file name (JSON when it says nothing).
    public var from: DumpFormat?
    /// Output format; `nil` guesses from the file name (JSON when it says nothing).
    public var to: DumpFormat?
    /// Patterns of the records written as NDJSON lines (default: the root's children, `/*`).
    public var records: [PathPattern] = []
    public var writerOptions: JSONWriter.Options = .compact
    public var compressionLevel: Int?
    /// A `.zst` output in zstd's seekable format, which sharded runs can read from any offset.
    public var seekableZstd = false
    public var threads: Int?
    /// What to do with a name twice in one object of JSON input.
    public var duplicateKeys: DuplicateKeyPolicy = .refuse

    public init(input: String, output: String) {
        self.input = input
        self.output = output
    }

    /// What a run did.
    public struct Summary: Sendable {
        public var records: Int
        public var bytesIn: Int64
        /// Bytes of JSON written, before compression.
        public var bytesOut: Int64
        /// The output file's size (compressed when it is); nil for standard output.
        public var fileBytesOut: Int64?
        /// Members left out under `duplicateKeys: .keepLast` (a later one had the same name).
        public var duplicatesDropped = 0
    }

    /// The input's format: `from`, else the one its name says, else JSON.
    public var inputFormat: DumpFormat { from ?? DumpFormat.forPath(input) ?? .json }
    /// The output's format: `to`, else the one its name says, else JSON.
    public var outputFormat: DumpFormat { to ?? DumpFormat.forPath(output) ?? .json }

    /// Runs the conversion; the output appears only if it succeeds.
    public func run(progress: ProgressMeter? = nil) throws -> Summary {
        let from = inputFormat
        let to = outputFormat
        if to == .ndjson && writerOptions.pretty {
            throw UsageError("--pretty makes no sense for NDJSON output (one record per line)")
        }
        let duplicates = from == .json && duplicateKeys == .keepLast ? try Self.earlierDuplicates(in: input) : nil
        let inFile = try InputFile(path: input)
        progress?.attach(inFile)
        let outFile = try OutputFile(path: output, level: compressionLevel, threads: threads, seekableZstd: seekableZstd)
        do {
            let reader: any RecordReader
            var watch: DuplicateKeyError.Watch?
            switch from {
            case .json:
                let patterns = records.isEmpty && to == .ndjson ? [try PathPattern("/*")] : records
                let source = duplicates.map { MemberSkippingSource(inFile, skipping: $0.ranges) } ?? inFile as JSONByteSource
                let dumpReader = DumpReader(source: source, patterns: patterns, sourceName: inFile.name)
                watch = DuplicateKeyError.Watch(dumpReader.reader, file: inFile.name)
                reader = dumpReader
            case .ndjson:
                reader = NDJSONReader(source: inFile, sourceName: inFile.name)
            }
            let jsonWriter = JSONWriter(sink: outFile, options: writerOptions)
            let writer: RecordWriter = to == .json ? DumpWriter(writer: jsonWriter) : NDJSONWriter(writer: jsonWriter)
            let pipeline = Pipeline()
            pipeline.onRecord = { progress?.recordDone() }
            try pipeline.run(reader: reader, writer: writer)
            try watch?.check()
            try outFile.commit()
            progress?.finish()
            return Summary(
                records: pipeline.recordsRead, bytesIn: inFile.bytesRead, bytesOut: outFile.bytesWritten, fileBytesOut: outFile.fileSize,
                duplicatesDropped: duplicates?.members ?? 0)
        } catch {
            outFile.abort()
            progress?.finish()
            throw error
        }
    }
}

extension ConvertJob {
    /// The members a later one of the same name replaces (`MemberSkippingSource.earlierDuplicates`),
    /// for `--duplicate-keys keep-last`, which reads the input twice.
    static func earlierDuplicates(in input: String) throws -> (ranges: [Range<Int64>], members: Int) {
        if input == "-" { throw UsageError("--duplicate-keys keep-last reads the input twice: give a file, not standard input") }
        return try MemberSkippingSource.earlierDuplicates(in: input)
    }
}
