import ArgumentParser
import DumpKit
import Foundation

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

            --dump and --rules may also be a database URL (https://NAME.firebaseio.com[/PATH], \
            https://NAME.REGION.firebasedatabase.app[/PATH]; FIREBASE_DATABASE_EMULATOR_HOST for an emulator): \
            the data is exported as `dumpkit export` does (dump/NAME.json, or NAME_PATH.json; not a \
            snapshot) and the rules are read from /.settings/rules.json as the database keeps them, comments \
            and all (rules/database.rules.json). They are fetched into .OUTPUT.dumpkit-backup.d beside the \
            archive first (an entry's size comes before its bytes); a run that is stopped leaves it, and the \
            next one resumes the export. Credentials: --access-token (or GOOGLE_OAUTH_ACCESS_TOKEN, \
            GOOGLE_APPLICATION_CREDENTIALS), or --auth with a database secret.

            Examples:
              dumpkit backup --dump backup.json.gz --rules database.rules.json \\
                  --bucket bucket/ -o backup-2024-05-01.tar.zst
              dumpkit backup --dump backup.json.gz --bucket gs://my-app.appspot.com \\
                  -o backup-2024-05-01.tar.zst
              dumpkit backup --dump https://my-app.firebaseio.com \\
                  --rules https://my-app.firebaseio.com \\
                  --bucket gs://my-app.appspot.com -o my-app.tar.zst \\
                  --access-token "$(gcloud auth print-access-token)"
            """
    )

    @Option(help: "The database dump: a file (usually .json or .json.gz), or a database URL to export.")
    var dump: String

    @Option(help: "The security rules: a file, or a database URL whose rules are read.")
    var rules: String?

    @Option(help: "The bucket: a directory (or DumpKit blob store), s3://BUCKET/PREFIX or gs://BUCKET/PREFIX.")
    var bucket: String?

    @Option(name: .shortAndLong, help: "The archive to write, or - for standard output.")
    var output: String

    @Option(name: .customLong("auth"), help: "For a database URL: a legacy database secret or a Firebase ID token, sent as auth=.")
    var authSecret: String?

    @OptionGroup var archive: ArchiveOptions
    @OptionGroup var common: CommonOptions

    func validate() throws {
        try archive.check(output: output)
        if authSecret != nil, archive.stores.accessToken != nil {
            throw ValidationError("give --access-token or --auth for the database, not both")
        }
    }

    func run() throws {
        try reportingErrors {
            let fromDatabase = DatabaseBackup.isDatabase(dump) || rules.map(DatabaseBackup.isDatabase) == true
            if authSecret != nil && !fromDatabase { warn("--auth has no effect: neither --dump nor --rules is a database URL") }
            let database = DatabaseBackup(
                workDirectory: DatabaseBackup.workDirectory(for: output, dryRun: archive.dryRun), accessToken: archive.stores.accessToken,
                authSecret: authSecret)
            var dumpFile = dump, rulesFile = rules
            var fetched: [String] = []
            do {
                if DatabaseBackup.isDatabase(dump) {
                    let location = try DatabaseBackup.location(dump)
                    dumpFile = try archive.dryRun ? database.placeholder(DatabaseBackup.dumpName(location)) : database.exportDump(location)
                    fetched.append("dump/\(DatabaseBackup.dumpName(location)): exported from \(location)")
                }
                if let rules, DatabaseBackup.isDatabase(rules) {
                    let location = try DatabaseBackup.location(rules)
                    rulesFile = try archive.dryRun ? database.placeholder("database.rules.json") : database.fetchRules(location)
                    fetched.append("rules/database.rules.json: the rules of \(location.databaseOrigin)")
                }
            } catch {
                // What was fetched stays for the next run (the export resumes); an empty folder goes.
                if archive.dryRun { database.remove() } else { database.removeIfEmpty() }
                throw error
            }
            var job = ArchiveJob(source: .backup(dump: dumpFile, rules: rulesFile, bucket: bucket), output: output)
            try archive.configure(&job, bucket: bucket)
            var summary: ArchiveJob.Summary
            do {
                summary = try job.run(progress: archive.dryRun ? nil : common.archiveProgress())
            } catch {
                if archive.dryRun { database.remove() }
                throw error
            }
            if !fetched.isEmpty {
                database.remove()
                summary.notes +=
                    archive.dryRun ? fetched.map { $0 + " when the archive is written (its size is not known in a dry run)" } : fetched
            }
            try archive.report(summary, output: output, noun: "file", common: common)
        }
    }
}
