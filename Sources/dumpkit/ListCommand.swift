import ArgumentParser
import DumpKit

/// `dumpkit list`: the entries of an archive.
struct ListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the entries of a tar or zip archive, with the metadata of its manifest.",
        discussion: """
            Each line: type (- file, d directory, l symlink, h hard link, ? other), size, modification time, \
            content type (- without a manifest) and path. --json prints one JSON object with the manifest's \
            summary and every entry with its hashes and metadata.

            Examples:
              dumpkit list bucket.tar.zst
              dumpkit list bucket.tar.zst --json \\
                  | jq '.entries[] | select(.contentType == "image/png") | .path'
            """
    )

    @Argument(help: "The archive: a file, - for standard input, or an object s3://BUCKET/KEY or gs://BUCKET/KEY.")
    var archive: String

    @OptionGroup var json: JSONSummaryOption
    @OptionGroup var common: CommonOptions

    func run() throws {
        try reportingErrors {
            var job = ListJob(archive: archive)
            job.json = json.json
            let summary = try job.run(to: StandardOutput())
            if let manifest = summary.manifest {
                common.note(
                    "\(counted(summary.entries, "entry", "entries")); manifest: \(manifest.kind.rawValue), \(counted(manifest.objects.count, "object")), written by dumpkit \(manifest.toolVersion), created \(UTCTime.format(manifest.created))"
                )
            }
        }
    }
}
