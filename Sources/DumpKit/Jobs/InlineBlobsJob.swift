import JSONStream

/// `dumpkit inline-blobs`: the rollback of `extract-blobs`; turns references back into the strings
/// they replaced, reading the objects from the store, in one streaming pass.
public struct InlineBlobsJob {
    public var input: String
    public var output: String
    /// The store's location (only read).
    public var store: String
    /// Opens the store (`DirectoryBlobStore.openDirectory` unless the caller opens buckets too).
    public var openStore: BlobStoreOpener = DirectoryBlobStore.openDirectory
    public var options = InlineBlobs.Options()
    public var writerOptions: JSONWriter.Options = .compact
    public var compressionLevel: Int?
    /// A `.zst` output in zstd's seekable format, which sharded runs can read from any offset.
    public var seekableZstd = false
    /// Read and check every referenced object, but write no output.
    public var dryRun = false

    public init(input: String, output: String, store: String) {
        self.input = input
        self.output = output
        self.store = store
    }

    /// What a run did.
    public struct Summary: Sendable {
        public var tally: InlineBlobs.Tally
        public var bytesIn: Int64
        public var bytesOut: Int64
    }

    /// Runs against the store at `store`.
    public func run(progress: ProgressMeter? = nil) throws -> Summary {
        try ExtractBlobsJob.refuseSameFile(input, output)
        return try run(store: try openStore(store, false), progress: progress)
    }

    /// Runs against any store; the output appears only if everything succeeds (and never in a dry run).
    public func run(store: BlobStore, progress: ProgressMeter? = nil) throws -> Summary {
        let transformer = InlineBlobs(store: store, options: options)
        let inFile = try InputFile(path: input)
        progress?.attach(inFile)
        let outFile = dryRun ? nil : try OutputFile(path: output, level: compressionLevel, seekableZstd: seekableZstd)
        do {
            let reader = CandidateReader(
                source: inFile, patterns: options.match, selection: BlobReference.candidates(style: options.referenceStyle),
                sourceName: inFile.name)
            let pipeline = Pipeline()
            pipeline.onRecord = { progress?.recordDone() }
            let writer: RecordWriter =
                outFile.map { DumpWriter(writer: JSONWriter(sink: $0, options: writerOptions)) } ?? DiscardingWriter()
            try pipeline.run(reader: reader, first: transformer, writer: writer)
            try outFile?.commit()
            progress?.finish()
            return Summary(tally: transformer.tally, bytesIn: inFile.bytesRead, bytesOut: outFile?.bytesWritten ?? 0)
        } catch {
            outFile?.abort()
            progress?.finish()
            throw error
        }
    }
}
