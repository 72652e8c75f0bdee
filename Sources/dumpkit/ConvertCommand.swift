import ArchiveKit
import ArgumentParser
import DumpKit
import JSONStream

/// `dumpkit convert`: tree <-> NDJSON, re-formatting, recompressing.
struct ConvertCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert",
        abstract: "Convert a dump between a JSON tree and NDJSON records, re-format or recompress it.",
        discussion: """
            Formats follow the file names (.json, .ndjson/.jsonl, plus .gz/.zst/.xz/.bz2) unless --from/--to \
            say otherwise. Compressed input is detected from its first bytes. The output is written to a \
            temporary file and renamed only when complete. A name twice in one object is refused \
            unless --duplicate-keys keep-last keeps the last one.

            Examples:
              dumpkit convert backup.json.gz -o backup.json --canonical
              dumpkit convert dump.json -o records.ndjson --records '/v1/todolist/{id}'
              dumpkit convert records.ndjson -o dump.json.zst
              cat dump.json | dumpkit convert - -o - --pretty
              dumpkit convert dump.json -o dump.json.zst --level 19 --jobs 4 --json
              dumpkit convert export.json -o clean.json --duplicate-keys keep-last
              dumpkit convert dump.json -o out.json --index dump.json.dkindex --shard 3/16
            """
    )

    @Argument(help: "Input dump: a file, - for standard input, or an object s3://BUCKET/KEY or gs://BUCKET/KEY.")
    var input: String

    @Option(
        name: .shortAndLong,
        help: "Output file, - for standard output, or an object s3://BUCKET/KEY or gs://BUCKET/KEY (uploaded when the command succeeds).")
    var output: String = "-"

    @Option(help: "Input format: json or ndjson (default: from the file name, else json).")
    var from: DumpFormat?

    @Option(help: "Output format: json or ndjson (default: from the file name, else json).")
    var to: DumpFormat?

    @Option(
        name: .customLong("records"),
        help: "Path pattern of the records for NDJSON output, e.g. '/v1/todolist/{id}' (repeatable; default '/*').")
    var records: [String] = []

    @OptionGroup var dump: DumpOutputOptions
    @OptionGroup var duplicateKeys: DuplicateKeysOption

    @Option(help: "Compression threads for zstd or xz output.")
    var jobs: Int?

    @Option(name: .customLong("threads"), help: .hidden)
    var threads: Int?

    @OptionGroup var shard: ShardOptions
    @OptionGroup var json: JSONSummaryOption
    @OptionGroup var common: CommonOptions

    func validate() throws {
        try json.check(output: output)
    }

    func run() throws {
        try reportingErrors {
            var job = ConvertJob(input: input, output: output)
            job.from = from
            job.to = to
            job.records = try records.map { try PathPattern($0) }
            job.writerOptions = dump.writerOptions
            job.compressionLevel = dump.level
            job.seekableZstd = dump.seekable
            job.threads = try jobsGiven(jobs, alias: threads)
            job.duplicateKeys = duplicateKeys.policy
            warnUnused(job)
            if let spec = try shard.spec() {
                let m = try job.runShard(spec, indexPath: shard.index!, progress: common.progress())
                try reportShard(m)
                return
            }
            let summary = try job.run(progress: common.progress())
            if json.json {
                try printJSON(
                    .object([
                        "input": .string(input), "output": .string(output), "records": .number(JSONNumber(summary.records)),
                        "bytesIn": .number(JSONNumber(summary.bytesIn)), "bytesOut": .number(JSONNumber(summary.bytesOut)),
                        "fileBytes": summary.fileBytesOut.map { .number(JSONNumber($0)) } ?? .null,
                        "duplicatesDropped": .number(JSONNumber(summary.duplicatesDropped)),
                    ]))
            } else if output != "-" {
                let size = summary.fileBytesOut ?? summary.bytesOut
                let data = size == summary.bytesOut ? "" : " (\(ProgressMeter.format(bytes: summary.bytesOut)) of JSON)"
                common.note(
                    "wrote \(output): \(ProgressMeter.format(bytes: size))" + data
                        + (summary.records > 0 ? ", \(summary.records) records" : ""))
            }
            duplicateKeys.note(dropped: summary.duplicatesDropped, common)
        }
    }

    /// Prints what a shard wrote.
    private func reportShard(_ m: ShardManifest) throws {
        let part = ShardManifest.partPath(output: output, shard: m.shard, of: m.shards)
        if json.json {
            try printJSON(
                .object([
                    "input": .string(input), "output": .string(output), "part": .string(part), "shard": .number(JSONNumber(m.shard)),
                    "shards": .number(JSONNumber(m.shards)), "units": .number(JSONNumber(m.units)),
                    "records": .number(JSONNumber(m.records)),
                    "bytesIn": .number(JSONNumber(m.bytesIn)), "bytesOut": .number(JSONNumber(m.partBytes)),
                ]))
        } else {
            common.note(
                "wrote \(part): \(ProgressMeter.format(bytes: m.partBytes)), \(counted(m.units, "unit")); join the parts with dumpkit merge \(output)"
            )
        }
    }

    /// Warns of options that do nothing in this call.
    private func warnUnused(_ job: ConvertJob) {
        dump.warnUnused(output: output)
        if !records.isEmpty && job.outputFormat == .json {
            warn("--records has no effect: it names the records of NDJSON output, and the output is a JSON tree")
        }
        if duplicateKeys.policy == .keepLast && job.inputFormat == .ndjson {
            warn("--duplicate-keys has no effect on NDJSON input: two records at one path are refused")
        }
        if job.threads != nil && ![.zstd, .xz].contains(CompressionFilter.forPath(output)) {
            warn(
                "\(threads != nil ? "--threads" : "--jobs") has no effect: only zstd and xz output (.zst, .xz) compress on several threads")
        }
    }
}

extension DumpFormat: ExpressibleByArgument {}
