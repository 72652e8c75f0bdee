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
            temporary file and renamed only when complete.

            Examples:
              dumpkit convert backup.json.gz -o backup.json --canonical
              dumpkit convert dump.json -o records.ndjson --records '/v1/todolist/{id}'
              dumpkit convert records.ndjson -o dump.json.zst
              cat dump.json | dumpkit convert - -o - --pretty
            """
    )

    @Argument(help: "Input dump, or - for standard input.")
    var input: String

    @Option(name: .shortAndLong, help: "Output file, or - for standard output.")
    var output: String = "-"

    @Option(help: "Input format: json or ndjson (default: from the file name, else json).")
    var from: DumpFormat?

    @Option(help: "Output format: json or ndjson (default: from the file name, else json).")
    var to: DumpFormat?

    @Option(name: .customLong("records"), help: "Path pattern of the records for NDJSON output, e.g. '/v1/todolist/{id}' (repeatable; default '/*').")
    var records: [String] = []

    @Flag(help: "Indented output.")
    var pretty = false

    @Flag(help: "Members in the Realtime Database's key order, so the same data always gives the same bytes.")
    var canonical = false

    @Option(help: "Compression level for a compressed output.")
    var level: Int?

    @Option(help: "Compression threads for zstd or xz output.")
    var threads: Int?

    @OptionGroup var common: CommonOptions

    func run() throws {
        try reportingErrors {
            var job = ConvertJob(input: input, output: output)
            job.from = from
            job.to = to
            job.records = try records.map { try PathPattern($0) }
            job.writerOptions = JSONWriter.Options(pretty: pretty, sortKeys: canonical)
            job.compressionLevel = level
            job.threads = threads
            let summary = try job.run(progress: common.progress())
            if output != "-" {
                let size = summary.fileBytesOut ?? summary.bytesOut
                let data = size == summary.bytesOut ? "" : " (\(ProgressMeter.format(bytes: summary.bytesOut)) of JSON)"
                common.note("wrote \(output): \(ProgressMeter.format(bytes: size))" + data + (summary.records > 0 ? ", \(summary.records) records" : ""))
            }
        }
    }
}

extension DumpFormat: ExpressibleByArgument {}
