import ArgumentParser
import DumpKit

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

            Example:
              dumpkit inline-blobs clean.json -o restored.json --blobs bucket/
            """
    )

    @Argument(help: "Input dump, or - for standard input.")
    var input: String

    @Option(name: .shortAndLong, help: "Output dump, or - for standard output.")
    var output: String = "-"

    @OptionGroup var blobs: BlobOptions

    @OptionGroup var stores: StoreOptions

    @Option(help: "Objects to read and encode at once (default: the number of cores).")
    var jobs: Int?

    @OptionGroup var common: CommonOptions

    func run() throws {
        try reportingErrors {
            var job = InlineBlobsJob(input: input, output: output, store: blobs.store)
            job.openStore = stores.openStore
            job.options.match = try blobs.patterns()
            job.options.referenceStyle = blobs.referenceStyle
            job.options.concurrency = try concurrency(jobs)
            let summary = try job.run(progress: common.progress())
            common.note("inlined \(counted(summary.tally.inlined, "reference")) (\(ProgressMeter.format(bytes: summary.tally.bytes)))"
                + (summary.tally.foreign > 0
                    ? "; left \(counted(summary.tally.foreign, "reference")) that extract-blobs did not make" : ""))
        }
    }
}
