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
            when anything is found. Every referenced object is read and hashed once. See docs/BLOBS.md.

            Sharded (--index, --shard I/N, -o OUT): each shard checks the references of its byte ranges \
            and writes its findings to OUT.part-I-of-N; dumpkit merge OUT lists the store once for orphans \
            and prints the report of the unsharded run (same findings, order and exit code). See \
            docs/SCALE-OUT.md.

            Examples:
              dumpkit check-blobs clean.json --blobs bucket/
              dumpkit check-blobs clean.json --blobs bucket/ --json | jq .errors
              dumpkit check-blobs clean.json --blobs bucket/ -o findings \\
                  --index clean.json.dkindex --shard 0/8
            """
    )

    @Argument(help: "Dump to check: a file, - for standard input, or an object s3://BUCKET/KEY or gs://BUCKET/KEY.")
    var input: String

    @OptionGroup var blobs: BlobOptions

    @OptionGroup var json: JSONSummaryOption
    @OptionGroup var stores: StoreOptions
    @OptionGroup var shard: ShardOptions

    @Option(name: .shortAndLong, help: "With --index: the findings' name; a shard writes OUT.part-I-of-N for dumpkit merge OUT.")
    var output: String?

    @OptionGroup var common: CommonOptions

    func run() throws {
        try reportingErrors {
            var job = CheckBlobsJob(input: input, store: blobs.store)
            job.openStore = stores.openStore
            job.referenceStyle = blobs.referenceStyle
            job.match = try blobs.patterns()
            if let spec = try shard.spec() {
                guard let output else { throw UsageError("a check-blobs shard writes its findings to OUT.part-I-of-N: pass -o OUT") }
                let m = try job.runShard(spec, indexPath: shard.index!, output: output, progress: common.progress())
                try shard.report(m, input: input, output: output, json: json.json, common: common)
                return
            }
            if output != nil { warn("-o has no effect without --index: check-blobs prints its findings") }
            let (findings, references) = try job.run(progress: common.progress())
            try Self.print(findings, references: references, source: input, json: json.json, common: common)
        }
    }

    /// Prints the findings (one line each, or the JSON report) and the count of references; throws
    /// `Exit.findings` when there are any (also what merge does for a sharded check).
    static func print(_ findings: [Finding], references: Int, source: String, json: Bool, common: CommonOptions) throws {
        if json {
            var report = FindingsReport(source: source, maxFindings: .max)
            findings.forEach { report.add($0) }
            Swift.print(report.render(.json), terminator: "")
        } else {
            for f in findings {
                Swift.print(
                    "\(f.severity.rawValue): \(f.pointer.isEmpty ? "-" : f.pointer): \(f.message) [\(f.rule)]".escapingControlCharacters)
            }
        }
        let errors = findings.filter { $0.severity == .error }.count
        common.note(
            "checked \(counted(references, "reference")): \(counted(errors, "error")), \(counted(findings.count - errors, "warning"))")
        if !findings.isEmpty { throw Exit.findings }
    }
}
