import ArgumentParser
import Foundation
import DumpKit
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
            """
    )

    @Argument(help: "Input dump, or - for standard input.")
    var input: String

    @Option(name: .shortAndLong, help: "Output file, or - for standard output.")
    var output: String = "-"

    @Option(name: .customLong("plan"), help: "A plan file (repeatable; applied in order).")
    var plans: [String] = []

    @Flag(help: "Write nothing; print what would change per step, with an example record.")
    var dryRun = false

    @Option(help: "Write a JSON report: plans and their sha256, input/output sha256, counts, rejects, duration.")
    var report: String?

    @Option(help: "A value an operation cannot migrate: fail (stop), skip (drop it) or keep (keep it as it was); skip and keep write it to the rejects file.")
    var onError: OnErrorPolicy = .fail

    @Option(help: "NDJSON file for rejected values (default with skip/keep: OUTPUT.rejects.ndjson).")
    var rejects: String?

    @Flag(help: "Run the plans backwards (v2 -> v1); refused when a step loses information and states no inverse.")
    var reverse = false

    @Option(name: .customLong("blobs"), help: "The blob store (a directory mirroring a bucket, or s3://BUCKET/PREFIX, gs://BUCKET/PREFIX) that the plans' extract-blobs steps write to.")
    var blobStore: String?

    @OptionGroup var stores: StoreOptions

    @Option(help: "The bucket of download URLs, for extract-blobs steps with ref-style salada-file.")
    var bucket: String?

    @Flag(help: "Members in the Realtime Database's key order.")
    var canonical = false

    @Flag(help: "Indented output.")
    var pretty = false

    @Option(help: "Records to migrate at once, on worker threads (default: 1; more help when the plan's operations, not reading and writing, take the time).")
    var jobs: Int?

    @OptionGroup var common: CommonOptions

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
            job.writerOptions = JSONWriter.Options(pretty: pretty, sortKeys: canonical)
            if let jobs { job.jobs = try concurrency(jobs) }
            let plans = try job.loadPlans()
            for w in plans.flatMap(\.warnings) { common.note("warning: \(w)") }
            let s = try job.run(plans: plans, progress: common.progress())
            if dryRun {
                print(MigrationSummaryText.dryRun(s), terminator: "")
                if onError == .fail && s.failures > 0 {
                    FileHandle.standardError.write(Data("dumpkit: error: \(s.failures) values would stop the run under --on-error fail (listed above); --on-error skip or keep sets them aside in a rejects file\n".utf8))
                    throw Exit.findings
                }
            } else {
                common.note(MigrationSummaryText.done(s, output: output))
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
