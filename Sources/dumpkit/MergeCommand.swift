import ArgumentParser
import DumpKit
import Foundation
import JSONStream

/// `dumpkit merge`: the last step of a sharded run.
struct MergeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "merge",
        abstract: "Join the parts of a sharded run (OUT.part-I-of-N) into OUT, byte for byte the unsharded output.",
        discussion: """
            Checks that every shard's manifest is there and agrees with the others and that every part \
            is the one its manifest describes; a missing or stale shard is named (exit 1) and OUT is \
            not touched. The parts are copied with copy_file_range and stay where they are. \
            Parts in a bucket (the shards ran with -o s3://B/K or gs://B/K) are found by listing \
            K.part-, checked with a HEAD each (size, and the ETag or CRC-32C the manifest records), \
            and joined in the store: an S3 multipart upload of UploadPartCopy parts (a part under \
            5 MiB is downloaded and sent with its neighbour), a Cloud Storage compose (in rounds of \
            32, through temporary objects it deletes); the object appears whole or not at all. \
            With --parts, parts in a bucket and a local OUTPUT (or the other way round) go \
            through dumpkit. \
            The parts of a sharded validate are not joined: merge prints the findings report of the \
            unsharded run (--format, or --json) and exits 1 for error findings, as validate does. \
            Of a sharded extract-blobs, merge prints the extraction's report (--json, --report) \
            counted over all shards as the unsharded run counts it, each object once; of a sharded \
            check-blobs, the findings of the unsharded run, with the orphans of one listing of the \
            store (exit 1 when there are findings). The parts of a sharded archive are joined after a \
            manifest of all their objects, into a .tar.zst that list, verify, restore and bsdtar read \
            as an unsharded one (exit 1 when objects changed while a shard read them). \
            See docs/SCALE-OUT.md.

            Examples:
              dumpkit merge out.json
              dumpkit merge s3://bucket/out/v2.json --json
              dumpkit merge v2.json --parts gs://bucket/out/v2.json
              dumpkit merge out.ndjson --shards 16 --json
              dumpkit merge findings --format junit > report.xml
              dumpkit merge clean.json --report extraction.json
            """
    )

    @Argument(help: "The output the shards wrote parts of (their -o).")
    var output: String

    @Option(help: "The number of shards (default: from the parts' names).")
    var shards: Int?

    @Option(
        help: ArgumentHelp(
            "Where the shards wrote their parts (their -o), when not OUTPUT: parts in a bucket into a local OUTPUT, or local parts into a bucket.",
            valueName: "location"))
    var parts: String?

    @Option(help: "Parts of a sharded validate: the report's format, text (the default), json (as --json), junit or github.")
    var format: FindingsReport.Format?

    @Option(help: "Parts of a sharded extract-blobs: write the extraction's report (as extract-blobs --report) to this file.")
    var report: String?

    @OptionGroup var stores: StoreOptions
    @OptionGroup var json: JSONSummaryOption
    @OptionGroup var common: CommonOptions

    func validate() throws {
        try json.check(output: output)
        if json.json, let format, format != .json {
            throw ValidationError("--json and --format \(format.rawValue) ask for two outputs; give one")
        }
    }

    func run() throws {
        try reportingErrors {
            var job = MergeJob(output: output)
            job.shards = shards
            job.parts = parts
            job.openStore = stores.openStore
            let summary = try job.run()
            if let findings = summary.report {
                FileHandle.standardOutput.write(Data(findings.render(format ?? (json.json ? .json : .text)).utf8))
                if findings.errorCount > 0 { throw Exit.findings }
                return
            }
            if format != nil { warn("--format has no effect: these are not the parts of a sharded validate") }
            if report != nil && summary.extraction == nil {
                warn("--report has no effect: these are not the parts of a sharded extract-blobs")
            }
            if let check = summary.blobCheck {
                try CheckBlobsCommand.print(
                    check.findings, references: check.references, source: check.source, json: json.json, common: common)
                return
            }
            if summary.command == "archive" {
                if json.json {
                    try printJSON(
                        .object([
                            "output": .string(output), "command": .string("archive"), "shards": .number(JSONNumber(summary.shards)),
                            "objects": .number(JSONNumber(summary.records)), "bytes": .number(JSONNumber(summary.bytesIn)),
                            "bytesOut": .number(JSONNumber(summary.bytesOut)),
                            "changed": .number(JSONNumber(summary.counts["changed"] ?? 0)),
                            "unmatchedIncludes": .array((summary.unmatchedIncludes?.patterns ?? []).map { .string($0) }),
                            "copiedInStore": summary.copiedInStore.map { .number(JSONNumber($0)) } ?? .null,
                            "streamed": summary.streamed.map { .number(JSONNumber($0)) } ?? .null,
                        ]))
                }
                common.note(
                    "wrote \(output) from \(counted(summary.shards, "shard")): \(counted(summary.records, "object")), "
                        + ProgressMeter.format(bytes: summary.bytesIn))
                if let changed = summary.counts["changed"], changed > 0 {
                    FileHandle.standardError.write(
                        Data(
                            "dumpkit: error: \(counted(changed, "object")) changed while the shards archived them (each shard named its own); run again for a consistent copy\n"
                                .utf8))
                }
                if let unmatched = summary.unmatchedIncludes {
                    FileHandle.standardError.write(Data("dumpkit: warning: \(unmatched)\n".utf8))
                }
                if summary.unmatchedIncludes != nil || (summary.counts["changed"] ?? 0) > 0 { throw Exit.findings }
                return
            }
            if let extraction = summary.extraction {
                if let report { try OutputFile.writeJSON(extraction.jsonValue, to: report) }
                if json.json { try printJSON(extraction.jsonValue) }
                common.note("wrote \(output) from \(counted(summary.shards, "shard")): " + extraction.text)
                return
            }
            if json.json {
                try printJSON(
                    .object([
                        "output": .string(output), "command": .string(summary.command), "shards": .number(JSONNumber(summary.shards)),
                        "units": .number(JSONNumber(summary.units)), "records": .number(JSONNumber(summary.records)),
                        "bytesIn": .number(JSONNumber(summary.bytesIn)), "bytesOut": .number(JSONNumber(summary.bytesOut)),
                        "counts": .object(
                            JSONObject(summary.counts.keys.sorted().map { .init(key: $0, value: .number(JSONNumber(summary.counts[$0]!))) })
                        ),
                        "rejects": summary.rejects.map { .string($0) } ?? .null,
                        "copiedInStore": summary.copiedInStore.map { .number(JSONNumber($0)) } ?? .null,
                        "streamed": summary.streamed.map { .number(JSONNumber($0)) } ?? .null,
                    ]))
            } else {
                common.note(
                    "wrote \(output): \(ProgressMeter.format(bytes: summary.bytesOut)) from \(counted(summary.shards, "shard"))"
                        + (summary.records > 0 ? ", \(summary.records) records" : "")
                        + summary.counts.keys.sorted().map { ", \($0) \(summary.counts[$0]!)" }.joined()
                        + (summary.rejects.map { "; rejects in \($0)" } ?? ""))
            }
        }
    }
}
