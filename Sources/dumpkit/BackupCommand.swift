import ArgumentParser
import DumpKit

/// `dumpkit backup`: a dump, its rules and its bucket in one archive.
struct BackupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Put a backup set (database dump, rules, bucket) into one archive with a manifest.",
        discussion: """
            The dump and rules files are stored as they are under dump/ and rules/, the bucket's objects under \
            bucket/. `dumpkit restore` puts each part back in the same layout under its destination. The \
            bucket may be a directory or s3://BUCKET/PREFIX or gs://BUCKET/PREFIX, read as `dumpkit archive` \
            reads it, with every object's metadata.

            Examples:
              dumpkit backup --dump backup.json.gz --rules database.rules.json \\
                  --bucket bucket/ -o backup-2024-05-01.tar.zst
              dumpkit backup --dump backup.json.gz --bucket gs://my-app.appspot.com \\
                  -o backup-2024-05-01.tar.zst
            """
    )

    @Option(help: "The database dump (any file, usually .json or .json.gz).")
    var dump: String

    @Option(help: "The security rules file.")
    var rules: String?

    @Option(help: "The bucket: a directory (or DumpKit blob store), s3://BUCKET/PREFIX or gs://BUCKET/PREFIX.")
    var bucket: String?

    @Option(name: .shortAndLong, help: "The archive to write, or - for standard output.")
    var output: String

    @OptionGroup var archive: ArchiveOptions
    @OptionGroup var common: CommonOptions

    func validate() throws {
        try archive.check(output: output)
    }

    func run() throws {
        try reportingErrors {
            var job = ArchiveJob(source: .backup(dump: dump, rules: rules, bucket: bucket), output: output)
            try archive.configure(&job, bucket: bucket)
            let summary = try job.run(progress: archive.dryRun ? nil : common.archiveProgress())
            try archive.report(summary, output: output, noun: "file", common: common)
        }
    }
}
