import ArchiveKit
import ArgumentParser
import DumpKit
import Foundation
import JSONStream
import LiveDatabase
import ObjectStores

/// `dumpkit restore`: an archive into a directory, never outside it.
struct RestoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract:
            "Extract an archive into a directory safely, or into a bucket with its objects' metadata; import a backup's dump into a live database.",
        discussion: """
            Nothing is written outside DEST: leading / and drive prefixes are removed, paths with .. are refused, \
            links in DEST are never followed, symbolic links are created only when they point below themselves, \
            hard links only to files inside DEST, devices and fifos never, and setuid/setgid bits are dropped. \
            Each file is written under a temporary name and renamed when complete (and, with a manifest, only \
            when its size and SHA-256 match), so an interrupted restore can simply be run again. Refused \
            entries are printed and the exit code is 1. To a bucket (s3://, gs://), the objects of the \
            archive's bucket part are written with the metadata of the manifest, each only after its size and \
            SHA-256 are checked; other entries (a backup's dump and rules) are reported. See docs/OBJECT-STORES.md.

            --database DATABASE_URL[/PATH] imports a backup set's dump into a live Realtime Database exactly as \
            `dumpkit import` does: MERGED, never deleting what the dump does not name, limits checked \
            first, in chunks, resumable. Only the dump entry is read out of the archive (the rest is not \
            extracted), into .NAME.dumpkit-restore.d beside the archive, still compressed, once its size and \
            SHA-256 match the manifest: the import reads it twice (limits, then chunks), which a stream \
            cannot. The folder holds the import's journal: run the same command again after a kill and \
            only what was not committed is sent; it is removed when the import is complete. With \
            --dry-run the chunk plan is printed and nothing is sent. The rules are written back only with \
            --rules: the database's current rules are read (GET /.settings/rules.json), the lines that \
            change are printed, and the archive's rules file is written as it is (PUT \
            /.settings/rules.json, replacing all rules) when it differs (with --dry-run, only printed). \
            Credentials as for import: --access-token (also used for a gs:// destination), \
            GOOGLE_OAUTH_ACCESS_TOKEN, GOOGLE_APPLICATION_CREDENTIALS, or --auth; \
            FIREBASE_DATABASE_EMULATOR_HOST for an emulator. Exit codes as for import: 1 for a dump the \
            database refuses or an archive that does not match its manifest, 2 for usage, credentials \
            and rules that refuse the writes. --verify-database then exports the location and compares it with \
            the dump as `dumpkit import --verify` does (merged: every value of the dump must be at its path; \
            the database may hold more), exit 1 with the first differing JSON Pointers; --verify is about the \
            archive's checksums, not the database.

            Examples:
              dumpkit restore bucket.tar.zst restored/ --verify
              dumpkit restore backup.tar.zst /srv/restore --include 'bucket/v1/*' \\
                  --overwrite never
              dumpkit restore bucket.tar.zst restored/ --exclude '*.tmp' --dry-run
              dumpkit restore bucket.tar.zst s3://backups/restored --verify
              dumpkit restore backup.tar.zst --dry-run \\
                  --database https://my-app.firebaseio.com
              dumpkit restore backup.tar.zst --rules --verify-database \\
                  --database https://my-app.firebaseio.com \\
                  --access-token "$(gcloud auth print-access-token)"
            """
    )

    @Argument(help: "The archive: a file, - for standard input, or an object s3://BUCKET/KEY or gs://BUCKET/KEY.")
    var archive: String

    @Argument(
        help:
            "The destination directory (created if missing), or a bucket: s3://BUCKET/PREFIX, gs://BUCKET/PREFIX (the objects with their metadata); optional with --database."
    )
    var destination: String?

    @Option(
        help:
            "Import the backup's dump into this live database: https://NAME.firebaseio.com[/PATH] (merged, never deleting, as import does)."
    )
    var database: String?

    @Flag(help: "With --database: write the backup's rules back (PUT /.settings/rules.json), after printing what changes.")
    var rules = false

    @Option(name: .customLong("auth"), help: "With --database: a legacy database secret or a Firebase ID token, sent as auth=.")
    var authSecret: String?

    @Option(help: "With --database: the largest PATCH body in bytes.")
    var chunkSize: Int = 1_000_000

    @Option(help: "Requests in flight at once: objects put into a bucket (default 32), or with --database its PATCHes (default 8).")
    var jobs: Int?

    @Flag(
        help:
            "Also check MD5 and CRC-32C (size and SHA-256 are always checked against the manifest), refuse entries it does not list and report missing objects."
    )
    var verify = false

    @Flag(
        name: .customLong("verify-database"),
        help:
            "With --database: after the import, export the location and compare it with the backup's dump, as import --verify does (exit 1 on differences)."
    )
    var verifyDatabase = false

    @Option(help: "When a file exists: never, if-different (default) or always replace it.")
    var overwrite: SafeExtractor.OverwritePolicy = .ifDifferent

    @Option(help: "Restore only entries whose path matches this glob (repeatable; * also matches /).")
    var include: [String] = []

    @Option(help: "Leave out entries whose path matches this glob (repeatable).")
    var exclude: [String] = []

    /// The older name of `--include`.
    @Option(help: .hidden)
    var only: [String] = []

    @Flag(
        name: .customLong("dry-run"),
        help:
            "Read and check every entry and list what would be written and refused (with --database: the chunk plan, and the rules change with --rules); write nothing."
    )
    var dryRun = false

    @Option(help: "Stop when the archive's data exceeds this many bytes (default: no limit).")
    var maxBytes: Int64?

    @Option(help: "Stop when the archive has more entries than this.")
    var maxEntries: Int = 10_000_000

    @Option(help: "Stop when data expands to more than this many times the archive bytes read (0: no limit).")
    var maxRatio: Double = 1000

    @OptionGroup var json: JSONSummaryOption
    @OptionGroup var stores: StoreOptions
    @OptionGroup var common: CommonOptions

    func validate() throws {
        guard destination != nil || database != nil else { throw ValidationError("give a destination, --database DATABASE_URL, or both") }
        if rules, database == nil { throw ValidationError("--rules writes the backup's rules into a database: give --database") }
        if authSecret != nil, database == nil { throw ValidationError("--auth is for --database") }
        if verifyDatabase, database == nil {
            throw ValidationError("--verify-database compares a database with the backup's dump: give --database")
        }
        if verifyDatabase, dryRun { throw ValidationError("--verify-database checks what a restore wrote: not with --dry-run") }
        if database != nil {
            guard archive != "-" else {
                throw ValidationError("restore --database reads the archive's parts one by one: give a file, not -")
            }
            guard chunkSize >= 1024, chunkSize <= 256_000_000 else { throw ValidationError("--chunk-size must be 1024...256000000 bytes") }
        }
        if let jobs, !(1...256).contains(jobs) { throw ValidationError("--jobs must be 1...256") }
    }

    func run() throws {
        var summary: JSONObject = ["archive": .string(archive), "dryRun": .bool(dryRun)]
        if let destination { try restoreFiles(into: destination, summary: &summary) }
        var verified: (ImportVerification.Report, ImportVerification)?
        if let database {
            let (o, verification) = try restoreDatabase(database)
            summary["database"] = .object(o)
            verified = verification
        }
        if json.json { try printJSON(.object(summary)) }
        if let (check, verification) = verified {
            try reportVerification(check, verification, dump: "the dump of \(archive)", common: common)
        }
    }

    /// The archive into a folder or a bucket.
    private func restoreFiles(into destination: String, summary: inout JSONObject) throws {
        try reportingErrors {
            var job = RestoreJob(archive: archive, destination: destination)
            job.verify = verify
            job.overwrite = overwrite
            job.filter = PathFilter(include: include + only, exclude: exclude)
            job.limits = ExtractionLimits(maxBytes: maxBytes, maxEntries: maxEntries, maxRatio: maxRatio > 0 ? maxRatio : nil)
            job.dryRun = dryRun
            if let jobs { job.jobs = jobs }
            let toBucket = try ObjectStoreURL(destination) != nil
            if toBucket && dryRun {
                throw UsageError("--dry-run restores into a folder only; to a bucket, restore into a folder first to see what it holds")
            }
            let report =
                try toBucket
                ? job.run(into: stores.objectStores.openBlobStore(destination, writable: true), progress: common.archiveProgress())
                : job.run(progress: common.archiveProgress())
            if json.json {
                var o: JSONObject = [
                    "destination": .string(destination),
                    "hasManifest": .bool(report.hasManifest), "written": .number(JSONNumber(report.written)),
                    "unchanged": .number(JSONNumber(report.unchanged)), "kept": .number(JSONNumber(report.kept)),
                    "bytes": .number(JSONNumber(report.bytes)), "sidecars": .number(JSONNumber(report.sidecars)),
                    "problems": problemsJSON(report.problems), "notes": .array(report.notes.map { .string($0) }),
                ]
                if dryRun {
                    o["files"] = .array(
                        report.planned.map {
                            .object(["path": .string($0.path), "size": .number(JSONNumber($0.size)), "exists": .bool($0.exists)])
                        })
                }
                for member in o { summary[member.key] = member.value }
            } else if dryRun {
                for file in report.planned { print("\(file.size)\t\(file.path)" + (file.exists ? " (exists)" : "")) }
            }
            report.notes.forEach(common.note)
            let written = dryRun ? "would write \(report.written)" : "\(report.written) written"
            common.note(
                (dryRun ? "dry run, nothing written: \(archive) to \(destination): " : "restored \(archive) to \(destination): ")
                    + "\(written) (\(ProgressMeter.format(bytes: report.bytes))), "
                    + "\(report.unchanged) unchanged, \(report.kept) kept, \(counted(report.problems.count, "problem"))"
                    + (report.sidecars > 0 ? ", \(counted(report.sidecars, "metadata sidecar"))" : ""))
            if !report.problems.isEmpty, json.json { try printJSON(.object(summary)) }
            try common.report(report.problems, in: archive, doing: dryRun ? "checking" : "restoring")
        }
    }

    /// The folder of the dump and rules read out of the archive: `.NAME.dumpkit-restore.d` beside it
    /// (in `TMPDIR` for an archive in a bucket, `RunFiles`).
    private var workDirectory: String { RunFiles.beside(archive, suffix: "dumpkit-restore.d") }

    /// `--database`: the dump imported as `import` does, then with `--verify-database` compared with
    /// the database, and with `--rules` the rules written back. The summary, and the comparison to report.
    private func restoreDatabase(_ url: String) throws -> (JSONObject, (ImportVerification.Report, ImportVerification)?) {
        let target = try reportingErrors { try DatabaseOptions.location(url) }
        let work = workDirectory
        let (dump, rulesFile) = try reportingErrors {
            if !FileManager.default.fileExists(atPath: work) {
                do {
                    try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: false)
                } catch {
                    throw OutputError(file: work, message: "cannot make the folder for the backup's dump: \(error.localizedDescription)")
                }
            }
            let parts = RestoreJob(archive: archive, destination: work)
            guard let dump = try parts.extractPart(.dump, into: work) else {
                throw InputError(file: archive, message: "the backup set has no dump to import")
            }
            var rulesFile: String?
            if rules {
                rulesFile = try parts.extractPart(.rules, into: work)
                if rulesFile == nil { throw InputError(file: archive, message: "the backup set has no rules file (--rules)") }
            }
            return (dump, rulesFile)
        }
        var job = ImportJob(input: dump, target: target)
        job.chunkSize = chunkSize
        if let jobs { job.jobs = jobs }
        var o: JSONObject = ["target": .string(target.description)]
        if dryRun {
            let plan = try reportingErrors { try importPlan(job, printing: !json.json) }
            for member in plan where member.key != "target" && member.key != "dryRun" { o[member.key] = member.value }
        }
        let client = try reportingErrors {
            try DatabaseOptions.client(for: target, accessToken: stores.accessToken, authSecret: authSecret)
        }
        let progress = dryRun ? nil : common.progress()
        let toStandardError = json.json
        var verification: ImportVerification?
        if verifyDatabase {
            verification = ImportVerification(dump: dump, target: target, mode: job.mode)
            if let jobs { verification?.jobs = jobs }
        }
        let (summary, check, rulesChange) = try reportingDatabaseErrors {
            [job, dryRun, verification, progress = UncheckedProgress(progress)] in
            try await client.using { client in
                let summary = dryRun ? nil : try await job.run(client: client, progress: progress.meter)
                let check = try await verification?.run(client: client)
                guard let rulesFile else { return (summary, check, RulesChange?.none) }
                let new = try Array(Data(contentsOf: URL(fileURLWithPath: rulesFile)))
                let change = RulesChange(old: try await DatabaseRules.read(target, client: client), new: new)
                change.show(to: target, dryRun: dryRun, toStandardError: toStandardError)
                if change.differs, !dryRun { try await DatabaseRules.write(new, to: target, client: client) }
                return (summary, check, change)
            }
        }
        if let summary {
            o["chunks"] = .number(JSONNumber(summary.chunks))
            o["resumedChunks"] = .number(JSONNumber(summary.chunksSkipped))
            o["entries"] = .number(JSONNumber(summary.entries))
            o["bytesSent"] = .number(JSONNumber(summary.bytesSent))
            o["splits"] = .number(JSONNumber(summary.splits))
            o["targetWasEmpty"] = .bool(summary.targetWasEmpty)
            common.note(
                "imported the backup's dump into \(target): \(summary.chunks) chunks, \(summary.entries) paths, "
                    + ProgressMeter.format(bytes: summary.bytesSent)
                    + (summary.chunksSkipped > 0 ? ", \(summary.chunksSkipped) chunks committed by the interrupted run" : ""))
        }
        if let rulesChange {
            o["rules"] = .object([
                "oldBytes": .number(JSONNumber(rulesChange.old.count)), "newBytes": .number(JSONNumber(rulesChange.new.count)),
                "changed": .bool(rulesChange.differs), "written": .bool(rulesChange.differs && !dryRun),
            ])
        }
        var verified: (ImportVerification.Report, ImportVerification)?
        if let check, let verification {
            o["verification"] = verificationJSON(check, verification)
            verified = (check, verification)
        }
        try? FileManager.default.removeItem(atPath: work)
        return (o, verified)
    }
}

/// The database's rules and the backup's, and what `restore --rules` shows of their difference.
struct RulesChange: Sendable {
    let old: [UInt8]
    let new: [UInt8]
    var differs: Bool { old != new }

    /// Prints the sizes and the lines that change (on standard error when standard output is --json's).
    func show(to target: DatabaseURL, dryRun: Bool, toStandardError: Bool) {
        var text = "rules of \(target.root): \(old.count) bytes now, \(new.count) bytes in the backup"
        if !differs {
            text += ", the same: not written\n"
        } else if let lines = DatabaseRules.lineDiff(old: old, new: new) {
            text += "; lines that change (- now, + backup):\n" + lines.map { "  \($0)\n" }.joined()
        } else {
            text += "; they differ (too long to list the lines)\n"
        }
        if differs, dryRun { text += "dry run: the rules are not written\n" }
        if toStandardError {
            FileHandle.standardError.write(Data(text.utf8))
        } else {
            print(text, terminator: "")
        }
    }
}
