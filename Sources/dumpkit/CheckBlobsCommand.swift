import ArgumentParser
import DumpKit

/// `dumpkit check-blobs`: references against the store, both ways.
struct CheckBlobsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-blobs",
        abstract: "Check a dump's blob references against a store: missing or different objects, and orphans.",
        discussion: """
            Reports references whose object is missing or whose size, SHA-256, MD5 or download token \
            differ (errors), and objects that no reference names (warnings), one per line. Exits with 1 \
            when anything is found. Every referenced object is read and hashed once. See docs/BLOBS.md. \
            It is not sharded (--index and --shard are refused): orphans need every reference of the dump \
            against one listing of the store, and an object's metadata is reported at its first reference.

            Examples:
              dumpkit check-blobs clean.json --blobs bucket/
              dumpkit check-blobs clean.json --blobs bucket/ --json | jq .errors
            """
    )

    @Argument(help: "Dump to check: a file, - for standard input, or an object s3://BUCKET/KEY or gs://BUCKET/KEY.")
    var input: String

    @OptionGroup var blobs: BlobOptions

    @OptionGroup var json: JSONSummaryOption
    @OptionGroup var stores: StoreOptions
    @OptionGroup(visibility: .hidden) var shard: ShardOptions
    @OptionGroup var common: CommonOptions

    func run() throws {
        try reportingErrors {
            if shard.index != nil || shard.shard != nil || shard.shardCount != nil {
                throw UsageError(
                    "check-blobs cannot be sharded (--index, --shard): its orphan check needs every shard's references against one "
                        + "listing of the store, and an object's metadata finding goes with its first reference in the dump; "
                        + "run it unsharded: dumpkit check-blobs \(input) --blobs \(blobs.store)")
            }
            var job = CheckBlobsJob(input: input, store: blobs.store)
            job.openStore = stores.openStore
            job.referenceStyle = blobs.referenceStyle
            job.match = try blobs.patterns()
            let (findings, references) = try job.run(progress: common.progress())
            if json.json {
                var report = FindingsReport(source: input, maxFindings: .max)
                findings.forEach { report.add($0) }
                print(report.render(.json), terminator: "")
            } else {
                for f in findings {
                    print(
                        "\(f.severity.rawValue): \(f.pointer.isEmpty ? "-" : f.pointer): \(f.message) [\(f.rule)]".escapingControlCharacters
                    )
                }
            }
            let errors = findings.filter { $0.severity == .error }.count
            common.note(
                "checked \(counted(references, "reference")): \(counted(errors, "error")), \(counted(findings.count - errors, "warning"))")
            if !findings.isEmpty { throw Exit.findings }
        }
    }
}
