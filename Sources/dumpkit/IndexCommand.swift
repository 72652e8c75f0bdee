import ArgumentParser
import DumpKit
import JSONStream

/// `dumpkit index`: the byte ranges sharded runs split a dump by.
struct IndexCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "index",
        abstract: "Index a dump's records by byte range, so that sharded runs (--index, --shard I/N) each read only their part.",
        discussion: """
            One streaming pass that skips values without building them. Records (--records) are units \
            whole; without --records, the values at --depth are. A unit that is not a record and is \
            larger than --unit-bytes is split into its children. The index holds the dump's size and \
            SHA-256 (and a bucket object's version); shards check every byte they read against it. \
            Seekable zstd (convert --seekable) is read as its decompressed bytes; other compressed \
            dumps cannot be read from the middle and are refused. See docs/SCALE-OUT.md.

            Examples:
              dumpkit index dump.json -o dump.json.dkindex
              dumpkit index dump.json -o dump.dkindex --records '/v1/todolist/{id}'
              dumpkit index dump.json -o dump.dkindex --depth 3 --unit-bytes 4194304 --json
              dumpkit convert backup.json.gz -o dump.json.zst --seekable
              dumpkit index dump.json.zst -o dump.dkindex
            """
    )

    @Argument(help: "Input dump: plain JSON or seekable zstd, a file or an s3:// or gs:// object, not standard input.")
    var input: String

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

    @OptionGroup var json: JSONSummaryOption
    @OptionGroup var common: CommonOptions

    func validate() throws {
        try json.check(output: output)
    }

    func run() throws {
        try reportingErrors {
            let target = output ?? input + ".dkindex"
            var job = DumpIndexJob(input: input, output: target)
            job.records = try records.map { try PathPattern($0) }
            job.depth = depth
            job.unitBytes = unitBytes
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
}
