import ArgumentParser
import DumpKit
import Foundation
import JSONStream

/// `dumpkit index`: the byte ranges sharded runs split a dump by, or the name ranges sharded archives
/// split a bucket by (`--bucket`).
struct IndexCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "index",
        abstract:
            "Index a dump's records by byte range, or a bucket's listing (--bucket), so that sharded runs (--index, --shard I/N) each read only their part.",
        discussion: """
            One streaming pass that skips values without building them. Records (--records) are units \
            whole; without --records, the values at --depth are. A unit that is not a record and is \
            larger than --unit-bytes is split into its children. Consecutive units of one object or \
            array are joined into runs (--run-bytes), so the index has a few thousand units, not \
            millions of small records, and a shard stays within a run of its share of the bytes. The index holds the dump's size and \
            SHA-256 (and a bucket object's version); shards check every byte they read against it. \
            Seekable zstd (convert --seekable) is read as its decompressed bytes; other compressed \
            dumps cannot be read from the middle and are refused. See docs/SCALE-OUT.md.

            With --bucket (implied for a folder), the input is a bucket (a folder, s3://BUCKET/PREFIX or \
            gs://BUCKET/PREFIX): its listing, names and sizes only, is cut into units of consecutive \
            objects (at most --unit-bytes bytes or 1,000 objects each), which `archive --index --shard I/N` \
            splits the bucket by.

            Examples:
              dumpkit index dump.json -o dump.json.dkindex
              dumpkit index dump.json -o dump.dkindex --records '/v1/todolist/{id}'
              dumpkit index dump.json -o dump.dkindex --depth 3 --unit-bytes 4194304 --json
              dumpkit convert backup.json.gz -o dump.json.zst --seekable
              dumpkit index dump.json.zst -o dump.dkindex
              dumpkit index --bucket gs://my-app.appspot.com -o bucket.dkindex
            """
    )

    @Argument(
        help: "Input dump: plain JSON or seekable zstd, a file or an s3:// or gs:// object, not standard input; with --bucket, the bucket.")
    var input: String

    @Flag(help: "Index the listing of a bucket (a folder, s3://BUCKET/PREFIX, gs://BUCKET/PREFIX) for archive --shard.")
    var bucket = false

    @Option(name: .shortAndLong, help: "The index file (default: the input's name plus .dkindex).")
    var output: String?

    @Option(name: .customLong("records"), help: "Path pattern of the records, as convert takes it for NDJSON output (repeatable).")
    var records: [String] = []

    @Option(help: "Without --records: the depth of the units (1: the root's children).")
    var depth: Int = 1

    @Option(
        name: .customLong("unit-bytes"),
        help: "The largest unit that is not a record, in bytes; larger values are split into their children.")
    var unitBytes: Int64 = 1 << 20

    @Option(
        name: .customLong("run-bytes"),
        help:
            "The largest run of consecutive units in bytes, at most --unit-bytes (default: the smaller of --unit-bytes and 1/4,096 of the dump)."
    )
    var runBytes: Int64?

    @OptionGroup var stores: StoreOptions
    @OptionGroup var json: JSONSummaryOption
    @OptionGroup var common: CommonOptions

    func validate() throws {
        try json.check(output: output)
    }

    func run() throws {
        try reportingErrors {
            if bucket || isDirectory(input) { return try indexBucket() }
            let target = output ?? input + ".dkindex"
            var job = DumpIndexJob(input: input, output: target)
            job.records = try records.map { try PathPattern($0) }
            job.depth = depth
            job.unitBytes = unitBytes
            job.runBytes = runBytes
            if !records.isEmpty && depth != 1 { warn("--depth has no effect with --records: the records are the units") }
            let summary = try job.run(progress: common.progress())
            if json.json {
                try printJSON(
                    .object([
                        "input": .string(input), "index": .string(target), "units": .number(JSONNumber(summary.units)),
                        "records": .number(JSONNumber(summary.records)), "bytesIn": .number(JSONNumber(summary.bytesIn)),
                        "indexBytes": .number(JSONNumber(summary.indexBytes)), "sha256": .string(summary.sha256),
                        "pieces": .bool(summary.hasPieces),
                    ]))
            } else {
                common.note("wrote \(target): \(counted(summary.units, "unit")) of \(ProgressMeter.format(bytes: summary.bytesIn))")
            }
        }
    }

    /// `--bucket`: the listing's units, for `archive --shard`.
    private func indexBucket() throws {
        if !records.isEmpty || depth != 1 || runBytes != nil {
            throw UsageError("--records, --depth and --run-bytes index a dump; a bucket's units are runs of objects")
        }
        // Beside a folder; in the working folder for a bucket URL, named by its last segment.
        let trimmed = input.count > 1 && input.hasSuffix("/") ? String(input.dropLast()) : input
        let target = output ?? (input.contains("://") ? String(trimmed.split(separator: "/").last ?? "bucket") : trimmed) + ".dkindex"
        var job = BucketIndexJob(source: input, output: target)
        job.unitBytes = unitBytes
        job.openBucket = stores.objectStores.archiveSourceOpener(jobs: ArchiveOptions.bucketReads)
        let (index, indexBytes) = try job.run(progress: common.progress())
        if json.json {
            try printJSON(
                .object([
                    "input": .string(input), "index": .string(target), "units": .number(JSONNumber(index.units.count)),
                    "objects": .number(JSONNumber(index.objects)), "bytesIn": .number(JSONNumber(index.bytes)),
                    "indexBytes": .number(JSONNumber(indexBytes)), "sha256": .string(index.sha256),
                ]))
        } else {
            common.note(
                "wrote \(target): \(counted(index.units.count, "unit")) of \(counted(index.objects, "object")), "
                    + ProgressMeter.format(bytes: index.bytes))
        }
    }

    private func isDirectory(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFDIR
    }
}

extension IndexCommand: UsesStores {}
