import ArgumentParser
import DumpKit
import Foundation

/// `dumpkit extract-blobs`: base64 files out of the dump, into a blob store.
struct ExtractBlobsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "extract-blobs",
        abstract: "Move files embedded in strings (base64 data URIs, bare base64 images) into a blob store, leaving references.",
        discussion: """
            Every string of the dump (or below the --match patterns) that holds a data URI, or bare base64 \
            of a JPEG, PNG, GIF, WebP, HEIC, AVIF, PDF or MP4, of at least --min-bytes decoded, is written \
            once to the store and replaced by a reference. Strings that are not canonical base64, or whose \
            bytes are no known type, are left exactly as they were and counted in the report. Re-running \
            gives the same output and store; objects already there with the same bytes are not written again. \
            An object already there with other bytes stops the run (exit 1, no output) unless --replace is \
            given. See docs/BLOBS.md.

            Sharded (--index, --shard I/N, -o OUT): each shard extracts the files of its byte ranges into \
            the store and writes OUT.part-I-of-N; dumpkit merge OUT joins them into the unsharded output \
            and prints the unsharded report (--json, --report). See docs/SCALE-OUT.md.

            Examples:
              dumpkit extract-blobs dump.json -o clean.json --blobs bucket/
              dumpkit extract-blobs dump.json -o clean.json --blobs bucket/ \\
                  --match '/v1/todolist/{id}/image1' \\
                  --ref-style salada --bucket my-app.appspot.com \\
                  --name 'v1/todolist/{id}/image1/{field}.{ext}'
              dumpkit extract-blobs dump.json --blobs bucket/ --dry-run --json
              dumpkit extract-blobs dump.json -o clean.json --blobs bucket/ \\
                  --index dump.json.dkindex --shard 3/16
            """
    )

    @Argument(help: "Input dump: a file, - for standard input, or an object s3://BUCKET/KEY or gs://BUCKET/KEY.")
    var input: String

    @Option(
        name: .shortAndLong,
        help: "Output dump, - for standard output, or an object s3://BUCKET/KEY or gs://BUCKET/KEY (uploaded when the command succeeds).")
    var output: String = "-"

    @OptionGroup var blobs: BlobOptions

    @OptionGroup var stores: StoreOptions

    @Option(name: .customLong("min-bytes"), help: "Leave files smaller than this many decoded bytes in the dump.")
    var minBytes: Int = 1024

    @Option(
        name: .customLong("name"),
        help: "Object name template: {path} {record} {field} {ext} {sha256} and pattern captures such as {id} (default '{path}.{ext}').")
    var nameTemplate: String?

    @Flag(name: .customLong("content-addressed"), help: "Name objects 'sha256/<hex>.<ext>': one object per distinct content.")
    var contentAddressed = false

    @Option(help: "Bucket of the download URLs (needed by --ref-style salada and url).")
    var bucket: String?

    @Option(help: "Files to decode, hash and write at once (default: the number of cores; 32 for a bucket).")
    var jobs: Int?

    @Flag(help: "Replace objects the store holds with other content under the same names (otherwise the run fails, listing them).")
    var replace = false

    @Flag(name: .customLong("dry-run"), help: "Report what would be extracted; write neither the output nor the store.")
    var dryRun = false

    @Option(help: "Write a JSON report (counts per type, duplicates, skipped strings with pointers: what --json prints) to this file.")
    var report: String?

    @OptionGroup var dump: DumpOutputOptions
    @OptionGroup var shard: ShardOptions
    @OptionGroup var json: JSONSummaryOption
    @OptionGroup var common: CommonOptions

    func validate() throws {
        if !dryRun { try json.check(output: output) }
        if contentAddressed && nameTemplate != nil { throw ValidationError("--name and --content-addressed do not go together") }
    }

    func run() throws {
        try reportingErrors {
            var job = ExtractBlobsJob(input: input, output: output, store: blobs.store)
            job.openStore = stores.openStore
            job.options.match = try blobs.patterns()
            job.options.minimumBytes = minBytes
            job.options.naming = contentAddressed ? .contentAddressed : try nameTemplate.map { try BlobNameTemplate($0) } ?? .pathBased
            job.options.referenceStyle = blobs.referenceStyle
            job.options.bucket = bucket
            job.options.concurrency = try concurrency(jobs, store: blobs.store)
            job.options.replace = replace
            job.dryRun = dryRun
            job.reportPath = report
            job.writerOptions = dump.writerOptions
            job.compressionLevel = dump.level
            job.seekableZstd = dump.seekable
            dump.warnUnused(output: dryRun ? nil : output)
            if bucket != nil && !blobs.referenceStyle.needsBucket {
                warn("--bucket has no effect with --ref-style \(blobs.referenceStyle.rawValue) (only salada and url references name it)")
            }
            if let spec = try shard.spec() {
                let m = try job.runShard(spec, indexPath: shard.index!, progress: common.progress())
                try shard.report(m, input: input, output: output, json: json.json, common: common)
                return
            }
            let summary = try job.run(progress: common.progress())
            if json.json { try printJSON(summary.report.jsonValue) }
            if dryRun {
                let text = "dry run, nothing written: " + summary.report.text
                if json.json { common.note(text) } else { print(text) }
            } else {
                if summary.staleTemporaryFilesRemoved > 0 {
                    let removed = counted(summary.staleTemporaryFilesRemoved, "temporary file")
                    common.note("removed \(removed) left in the store by an interrupted run")
                }
                common.note(summary.report.text)
            }
        }
    }
}
