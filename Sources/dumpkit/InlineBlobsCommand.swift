import ArgumentParser
import DumpKit
import JSONStream

/// `dumpkit inline-blobs`: the rollback of extract-blobs.
struct InlineBlobsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inline-blobs",
        abstract: "Turn blob references back into the base64 strings they replaced (the rollback of extract-blobs).",
        discussion: """
            Each reference's object is read from the store and checked against the size and SHA-256 \
            recorded; the string is written back with its original form (data URI header or bare base64), \
            so extract-blobs followed by inline-blobs gives back the original values. Use the same \
            --ref-style as the extraction. See docs/BLOBS.md.

            Sharded (--index, --shard I/N, -o OUT): each shard inlines the references of its byte \
            ranges into OUT.part-I-of-N; dumpkit merge OUT joins them into the unsharded output. See \
            docs/SCALE-OUT.md.

            Examples:
              dumpkit inline-blobs clean.json -o restored.json --blobs bucket/
              dumpkit inline-blobs clean.json --blobs bucket/ --dry-run
              dumpkit inline-blobs clean.json -o restored.json --blobs bucket/ \\
                  --index clean.json.dkindex --shard 0/8
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

    @Option(help: "Objects to read and encode at once (default: the number of cores; 32 for a bucket).")
    var jobs: Int?

    @Flag(name: .customLong("dry-run"), help: "Read and check every referenced object and report what would be inlined; write no output.")
    var dryRun = false

    @OptionGroup var dump: DumpOutputOptions
    @OptionGroup var shard: ShardOptions
    @OptionGroup var json: JSONSummaryOption
    @OptionGroup var common: CommonOptions

    func validate() throws {
        if !dryRun { try json.check(output: output) }
    }

    func run() throws {
        try reportingErrors {
            var job = InlineBlobsJob(input: input, output: output, store: blobs.store)
            job.openStore = stores.openStore
            job.options.match = try blobs.patterns()
            job.options.referenceStyle = blobs.referenceStyle
            job.options.concurrency = try concurrency(jobs, store: blobs.store)
            job.writerOptions = dump.writerOptions
            job.compressionLevel = dump.level
            job.seekableZstd = dump.seekable
            job.dryRun = dryRun
            dump.warnUnused(output: dryRun ? nil : output)
            if let spec = try shard.spec() {
                let m = try job.runShard(spec, indexPath: shard.index!, progress: common.progress())
                try shard.report(m, input: input, output: output, json: json.json, common: common)
                return
            }
            let summary = try job.run(progress: common.progress())
            let tally = summary.tally
            if json.json {
                try printJSON(
                    .object([
                        "input": .string(input), "output": dryRun ? .null : .string(output), "dryRun": .bool(dryRun),
                        "inlined": .number(JSONNumber(tally.inlined)), "bytes": .number(JSONNumber(tally.bytes)),
                        "foreign": .number(JSONNumber(tally.foreign)), "bytesIn": .number(JSONNumber(summary.bytesIn)),
                        "bytesOut": .number(JSONNumber(summary.bytesOut)),
                    ]))
            }
            let text =
                (dryRun ? "dry run, nothing written: would inline " : "inlined ")
                + "\(counted(tally.inlined, "reference")) (\(ProgressMeter.format(bytes: tally.bytes)))"
                + (tally.foreign > 0 ? "; left \(counted(tally.foreign, "reference")) that extract-blobs did not make" : "")
            if dryRun && !json.json { print(text) } else { common.note(text) }
        }
    }
}
