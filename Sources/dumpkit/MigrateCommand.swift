import ArgumentParser
import DumpKit
import Foundation
import JSONStream

/// `dumpkit migrate`: apply migration plans to a dump.
struct MigrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Migrate a dump from one schema version to the next with declarative plan files.",
        discussion: """
            Plans are YAML or JSON files (see docs/PLANS.md). Several --plan options chain (v1 -> v2 -> v3) \
            in one pass. Everything the plans do not match passes through unchanged. The output, the \
            rejects file and the report appear only when the run succeeds.

            Examples:
              dumpkit migrate samples/todolist/v1.json -o v2.json \\
                  --plan schemas/todolist/plan.yaml
              dumpkit migrate backup.json.gz -o v2.json.zst --plan a.yaml --plan b.yaml \\
                  --report report.json
              dumpkit migrate v1.json --plan plan.yaml --dry-run
              dumpkit migrate v1.json -o v2.json --plan plan.yaml --on-error keep \\
                  --rejects rejects.ndjson
              dumpkit migrate v2.json -o v1.json --plan plan.yaml --reverse
              dumpkit migrate v1.json -o v2.json --plan plan.yaml --plan images.yaml \\
                  --blobs bucket/
              dumpkit migrate v1.json -o v2.json --plan plan.yaml --json | jq .stats
              dumpkit migrate v1.json -o v2.json --plan plan.yaml --index v1.idx --shard 0/8
            """
    )

    @Argument(help: "Input dump: a file, - for standard input, or an object s3://BUCKET/KEY or gs://BUCKET/KEY.")
    var input: String

    @Option(
        name: .shortAndLong,
        help: "Output file, - for standard output, or an object s3://BUCKET/KEY or gs://BUCKET/KEY (uploaded when the command succeeds).")
    var output: String = "-"

    @Option(name: .customLong("plan"), help: "A plan file (repeatable; applied in order).")
    var plans: [String] = []

    @Flag(help: "Write nothing; print what would change per step, with an example record.")
    var dryRun = false

    @Option(
        help:
            "Write a JSON report (plans and their sha256, input/output sha256, counts, rejects, duration: what --json prints) to this file."
    )
    var report: String?

    @Option(
        help:
            "A value an operation cannot migrate: fail (stop), skip (drop it) or keep (keep it as it was); skip and keep write it to the rejects file."
    )
    var onError: OnErrorPolicy = .fail

    @Option(help: "NDJSON file for rejected values (default with skip/keep: OUTPUT.rejects.ndjson).")
    var rejects: String?

    @Flag(help: "Run the plans backwards (v2 -> v1); refused when a step loses information and states no inverse.")
    var reverse = false

    @Option(
        name: .customLong("blobs"),
        help:
            "The blob store (a directory mirroring a bucket, or s3://BUCKET/PREFIX, gs://BUCKET/PREFIX) that the plans' extract-blobs steps write to."
    )
    var blobStore: String?

    @OptionGroup var stores: StoreOptions

    @Option(help: "The bucket of download URLs, for extract-blobs steps with ref-style salada-file.")
    var bucket: String?

    @Flag(
        help:
            "Let extract-blobs steps replace objects the store holds with other content under the same names (otherwise the first one stops the run)."
    )
    var replace = false

    @OptionGroup var dump: DumpOutputOptions
    @OptionGroup var duplicateKeys: DuplicateKeysOption

    @Option(
        help:
            "Records to migrate at once, on worker threads (default: 1; more help when the plan's operations, not reading and writing, take the time)."
    )
    var jobs: Int?

    @OptionGroup var shard: ShardOptions
    @OptionGroup var json: JSONSummaryOption
    @OptionGroup var common: CommonOptions

    func validate() throws {
        if !dryRun { try json.check(output: output) }
    }

    func run() throws {
        try reportingErrors {
            var job = MigrateJob(input: input, output: output, planPaths: plans)
            job.onError = onError
            job.rejectsPath = rejects
            job.reportPath = report
            job.dryRun = dryRun
            job.reverse = reverse
            job.blobStore = blobStore
            job.openStore = stores.openStore
            job.bucket = bucket
            job.replaceBlobs = replace
            job.writerOptions = dump.writerOptions
            job.compressionLevel = dump.level
            job.seekableZstd = dump.seekable
            job.computesDigests = json.json
            job.duplicateKeys = duplicateKeys.policy
            if let jobs { job.jobs = try concurrency(jobs) }
            dump.warnUnused(output: dryRun ? nil : output)
            if dryRun && rejects != nil { warn("--rejects has no effect with --dry-run (nothing is written)") }
            let plans = try job.loadPlans()
            if !plans.contains(where: { $0.steps.contains { $0.extractBlobs != nil } }) {
                for (given, name) in [(blobStore != nil, "--blobs"), (bucket != nil, "--bucket")] where given {
                    warn("\(name) has no effect: the plans have no extract-blobs steps")
                }
            }
            for w in plans.flatMap(\.warnings) { common.note("warning: \(w)") }
            if let spec = try shard.spec() {
                let m = try job.runShard(spec, indexPath: shard.index!, plans: plans, progress: common.progress())
                let part = ShardManifest.partPath(output: output, shard: m.shard, of: m.shards)
                if json.json {
                    try printJSON(
                        .object([
                            "input": .string(input), "output": .string(output), "part": .string(part),
                            "shard": .number(JSONNumber(m.shard)),
                            "shards": .number(JSONNumber(m.shards)), "records": .number(JSONNumber(m.records)),
                            "changed": .number(JSONNumber(m.counts["changed"] ?? 0)),
                            "rejects": .number(JSONNumber(m.counts["rejects"] ?? 0)),
                            "bytesIn": .number(JSONNumber(m.bytesIn)), "bytesOut": .number(JSONNumber(m.partBytes)),
                        ]))
                } else {
                    common.note(
                        "wrote \(part): \(counted(m.records, "record")), \(m.counts["changed"] ?? 0) changed, \(counted(m.counts["rejects"] ?? 0, "reject")); join the parts with dumpkit merge \(output)"
                    )
                }
                return
            }
            let s = try job.run(plans: plans, progress: common.progress())
            if json.json { try printJSON(job.report(s)) }
            if dryRun {
                let text = MigrationSummaryText.dryRun(s)
                if json.json { common.note(String(text.dropLast(text.hasSuffix("\n") ? 1 : 0))) } else { print(text, terminator: "") }
                if onError == .fail && s.failures > 0 {
                    FileHandle.standardError.write(
                        Data(
                            "dumpkit: error: \(s.failures) values would stop the run under --on-error fail (listed above); --on-error skip or keep sets them aside in a rejects file\n"
                                .utf8))
                    throw Exit.findings
                }
            } else {
                common.note(MigrationSummaryText.done(s, output: output))
                duplicateKeys.note(dropped: s.duplicatesDropped, common)
                if let blobs = s.blobs { common.note("extract-blobs steps: " + blobs.text) }
                if s.staleBlobFilesRemoved > 0 {
                    common.note(
                        "removed \(counted(s.staleBlobFilesRemoved, "temporary file")) left in the blob store by an interrupted run")
                }
            }
        }
    }
}

extension OnErrorPolicy: ExpressibleByArgument {}
