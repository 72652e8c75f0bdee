import Foundation
import JSONStream

/// `dumpkit extract-blobs`: moves files embedded in a dump's strings into a blob store and writes
/// the dump with references in their place, in one streaming pass.
///
/// Records are the smallest subtrees holding a string long enough for a file of `minimumBytes`
/// (`CandidateReader`), anywhere in the dump or below the `--match` patterns, so memory stays
/// bounded whatever the dump's shape; everything else streams through. The reader decodes each file
/// straight from its buffer (`CandidateReader.Selection.files`), so base64 text never becomes a
/// `String`; the workers hash, store and reference the files.
public struct ExtractBlobsJob {
    public var input: String
    public var output: String
    /// The store's location (a directory, or what `openStore` opens).
    public var store: String
    /// Opens the store (`DirectoryBlobStore.openDirectory` unless the caller opens buckets too).
    public var openStore: BlobStoreOpener = DirectoryBlobStore.openDirectory
    public var options = ExtractBlobs.Options()
    public var writerOptions: JSONWriter.Options = .compact
    public var compressionLevel: Int?
    /// A `.zst` output in zstd's seekable format, which sharded runs can read from any offset.
    public var seekableZstd = false
    /// Count what would be extracted, but write neither the output nor the store.
    public var dryRun = false
    /// Where to write the JSON report, if anywhere.
    public var reportPath: String?

    public init(input: String, output: String, store: String) {
        self.input = input
        self.output = output
        self.store = store
    }

    /// What a run did.
    public struct Summary: Sendable {
        public var report: BlobExtractionReport
        public var bytesIn: Int64
        public var bytesOut: Int64
        /// Temporary files of interrupted runs that were removed from the store.
        public var staleTemporaryFilesRemoved: Int
    }

    /// Fails when options do not fit together (see `ExtractBlobs.check`), or when the name template
    /// uses a capture that some `--match` pattern does not make (records here have no other).
    public static func check(_ options: ExtractBlobs.Options) throws(UsageError) {
        try ExtractBlobs.check(options)
        for capture in options.naming.captureNames {
            if options.match.isEmpty {
                throw UsageError("name template '\(options.naming)' uses {\(capture)}, but no --match pattern captures it")
            }
            for p in options.match where !p.captureNames.contains(capture) {
                throw UsageError("name template '\(options.naming)' uses {\(capture)}, which --match '\(p)' does not capture")
            }
        }
    }

    /// Runs against the store at `store`.
    public func run(progress: ProgressMeter? = nil) throws -> Summary {
        try Self.check(options)
        try Self.refuseSameFile(input, output)
        guard !dryRun else { return try run(store: nil, progress: progress) }
        var (summary, removed) = try withStore { try run(store: $0, progress: progress) }
        summary.staleTemporaryFilesRemoved = removed
        return summary
    }

    /// Opens the store for writing and runs `body` on it; returns what `body` did and how many
    /// temporary files of interrupted runs the store removed. A folder store this run creates is
    /// removed again when `body` fails before writing into it.
    func withStore<T>(_ body: (BlobStore) throws -> T) throws -> (T, staleTemporaryFilesRemoved: Int) {
        var status = stat()
        let storeExisted = lstat(store, &status) == 0
        let controlExisted = lstat(store + "/" + DirectoryBlobStore.controlDirectory, &status) == 0
        let opened = try openStore(store, true)
        let directory = opened as? DirectoryBlobStore
        defer { directory?.close() }
        do {
            return (try body(opened), directory?.staleTemporaryFilesRemoved ?? 0)
        } catch {
            if let directory {
                directory.close()
                if !controlExisted { DirectoryBlobStore.removeUnused(store, directory: !storeExisted) }
            }
            throw error
        }
    }

    /// Runs against any store (`nil`: a dry run); the output appears only if everything succeeds, and
    /// only after the store's objects are on disk (`BlobStore.sync`), so that it never names objects a
    /// power cut could lose.
    /// Objects the store holds with other bytes (without `options.replace`) are all listed in one
    /// `BlobConflictsError` at the end, with no output (the report is still written).
    public func run(store: BlobStore?, progress: ProgressMeter? = nil) throws -> Summary {
        let transformer = try ExtractBlobs(store: store, options: options, listsConflicts: true)
        let inFile = try InputFile(path: input)
        progress?.attach(inFile)
        let outFile = store == nil ? nil : try OutputFile(path: output, level: compressionLevel, seekableZstd: seekableZstd)
        do {
            // A read buffer that stays in the core's cache: the kernel copies into it and the scanner
            // reads it while it is still there (longer strings go to the decoder in pieces).
            let reader = CandidateReader(
                source: inFile, patterns: options.match, selection: transformer.candidates,
                options: .init(bufferSize: 256 << 10), sourceName: inFile.name)
            let writer: RecordWriter =
                outFile.map { DumpWriter(writer: JSONWriter(sink: $0, options: writerOptions)) } ?? DiscardingWriter()
            let pipeline = Pipeline()
            pipeline.onRecord = { progress?.recordDone() }
            try pipeline.run(reader: reader, first: transformer, writer: writer)
            let totals = transformer.report.snapshot
            if totals.conflicts > 0 {
                if let reportPath { try OutputFile.writeJSON(transformer.report.jsonValue, to: reportPath) }
                throw BlobConflictsError(store: store?.description ?? "", count: totals.conflicts, names: totals.conflictNames)
            }
            // The objects the output names reach the disk before the output does.
            try store?.sync()
            try outFile?.commit()
            progress?.finish()
            if let reportPath { try OutputFile.writeJSON(transformer.report.jsonValue, to: reportPath) }
            return Summary(
                report: transformer.report, bytesIn: inFile.bytesRead, bytesOut: outFile?.bytesWritten ?? 0, staleTemporaryFilesRemoved: 0)
        } catch {
            outFile?.abort()
            progress?.finish()
            throw error
        }
    }

    /// Refuses to write the output over the input (which must never change).
    static func refuseSameFile(_ input: String, _ output: String) throws {
        guard input != "-", output != "-" else { return }
        var a = stat(), b = stat()
        if stat(input, &a) == 0, stat(output, &b) == 0, a.st_dev == b.st_dev, a.st_ino == b.st_ino {
            throw UsageError("the output \(output) is the input file; write to another file")
        }
    }
}

/// Objects a store holds with other bytes than an extraction brings, which it did not replace.
public struct BlobConflictsError: DataError, CustomStringConvertible, Sendable {
    public let store: String
    public let count: Int
    /// The first names, sorted.
    public let names: [String]
    /// Whether a shard of a sharded run found them, where another shard may have written them.
    public var sharded = false

    public var description: String {
        let shown = names.prefix(20).map { String(reflecting: $0) }.joined(separator: ", ")
        let more = count > 20 ? " and \(count - 20) more (the first 100 in --report)" : ""
        let objects = count == 1 ? "1 object already exists" : "\(count) objects already exist"
        return "\(objects) in the \(store) with other content, so the output was not written: \(shown)\(more); "
            + "the references would point at other images. Use another --name (e.g. with {sha256}) or another store, or give --replace to replace them"
            + (sharded
                ? " (if another shard of this run wrote them, the dump gives these names two contents, which the unsharded run refuses too, and --replace would only move the error to merge)"
                : "")
    }
}

/// Takes records and drops them (a dry run has no output).
final class DiscardingWriter: RecordWriter {
    var passThrough: PassThroughSink? { nil }
    var takesCompactJSON: Bool { false }
    func write(_ record: Record, from original: [String]?) throws {}
    func write(path: [String], compactJSON json: UnsafeRawBufferPointer, from original: [String]?) throws {}
    func finish() throws {}
}
