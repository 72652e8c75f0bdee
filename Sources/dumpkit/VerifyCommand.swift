import ArgumentParser
import DumpKit
import JSONStream

/// `dumpkit verify`: every entry of an archive against its manifest.
struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Read every entry of an archive and check it against the manifest.",
        discussion: """
            Each file's size, SHA-256, MD5 and CRC-32C must match the manifest, every object must be there once \
            and nothing else. Problems (a changed byte, a missing, extra or truncated entry, a path restore would \
            refuse) are printed by name and the exit code is 1. Archives without a manifest (from tar, bsdtar, \
            zip) are read to the end, which checks their compression and zip CRCs.

            Examples:
              dumpkit verify bucket.tar.zst
              dumpkit verify bucket.tar.zst --json | jq '.problems[].path'
            """
    )

    @Argument(help: "The archive: a file, - for standard input, or an object s3://BUCKET/KEY or gs://BUCKET/KEY.")
    var archive: String

    @OptionGroup var json: JSONSummaryOption
    @OptionGroup var common: CommonOptions

    func run() throws {
        try reportingErrors {
            let report = try VerifyJob(archive: archive).run(progress: common.archiveProgress())
            if json.json {
                try printJSON(
                    .object([
                        "archive": .string(archive), "hasManifest": .bool(report.hasManifest),
                        "entries": .number(JSONNumber(report.entries)),
                        "bytes": .number(JSONNumber(report.bytes)), "problems": problemsJSON(report.problems),
                    ]))
            }
            try common.report(report.problems, in: archive, doing: "verifying")
            if json.json { return }
            print(
                report.hasManifest
                    ? "\(archive): OK, \(counted(report.entries, "entry", "entries")) (\(ProgressMeter.format(bytes: report.bytes))) \(report.entries == 1 ? "matches" : "match") the manifest"
                    : "\(archive): OK, \(counted(report.entries, "entry", "entries")) (\(ProgressMeter.format(bytes: report.bytes))) read completely; no manifest, so no hashes to compare"
            )
        }
    }
}
