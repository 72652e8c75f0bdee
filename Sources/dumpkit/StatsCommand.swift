import ArgumentParser
import DumpKit
import Foundation
import JSONStream

/// `dumpkit stats`: what is in a dump, before migrating it.
struct StatsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Show what a dump holds: path patterns with counts, bytes and types, depth, bad keys, base64 images.",
        discussion: """
            Ids are collapsed into named captures, so /users/<uid>/messages/-Kabc.../text is counted \
            under /users/{uid}/messages/{id}/text: {id} push IDs, {uid} Auth UIDs (28 letters and \
            digits), {n} numbers and array positions, {email} e-mail keys, {key} siblings whose values \
            have the same members or more than 64 siblings ({n2}: a name repeated on a path). The \
            record patterns at the end (recordPatterns with --json) are good --records choices. One \
            streaming pass; memory does not grow with the dump.

            With --html FILE, also writes a self-contained page (no network requests): a treemap of \
            bytes per pattern, the suggested record patterns, the inline base64 files extract-blobs \
            would move out per pattern, the largest records, forbidden keys and the pattern table.

            Examples:
              dumpkit stats backup.json.gz
              dumpkit stats dump.json --json | jq '.patterns[] | select(.count > 1000)'
              dumpkit stats backup.json.gz --html report.html
            """
    )

    @Argument(help: "Input dump: a file, - for standard input, or an object s3://BUCKET/KEY or gs://BUCKET/KEY.")
    var input: String

    @Option(
        help: ArgumentHelp(
            "Also write the statistics as a self-contained HTML page (- for standard output, instead of the text).", valueName: "file"))
    var html: String?

    @OptionGroup var json: JSONSummaryOption
    @OptionGroup var common: CommonOptions

    func validate() throws {
        if html == "-" && json.json {
            throw ValidationError("--html - and --json would both write to standard output; give --html a file name")
        }
    }

    func run() throws {
        try reportingErrors {
            let file = try InputFile(path: input)
            let page = try html.map { try OutputFile(path: $0) }  // an unwritable place fails before the pass
            let progress = common.progress()
            progress.map { $0.attach(file) }
            let stats = try DumpStats.gather(from: file, sourceName: file.name)
            progress?.finish()
            if let page {
                try Array(StatsHTMLReport(stats: stats, title: file.name).render().utf8).withUnsafeBytes { try page.write($0) }
                try page.commit()
            }
            if html == "-" { return }
            if json.json {
                try printJSON(stats.jsonValue)
            } else {
                print(stats.text)
            }
        }
    }
}
