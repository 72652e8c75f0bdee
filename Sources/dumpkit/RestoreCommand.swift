import ArchiveKit
import ArgumentParser
import DumpKit
import JSONStream
import ObjectStores

/// `dumpkit restore`: an archive into a directory, never outside it.
struct RestoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Extract an archive into a directory safely, or into a bucket, with its objects' metadata.",
        discussion: """
            Nothing is written outside DEST: leading / and drive prefixes are removed, paths with .. are refused, \
            links in DEST are never followed, symbolic links are created only when they point below themselves, \
            hard links only to files inside DEST, devices and fifos never, and setuid/setgid bits are dropped. \
            Each file is written under a temporary name and renamed when complete (and, with a manifest, only \
            when its size and SHA-256 match), so an interrupted restore can simply be run again. Refused \
            entries are printed and the exit code is 1. To a bucket (s3://, gs://), the objects of the \
            archive's bucket part are written with the metadata of the manifest, each only after its size and \
            SHA-256 are checked; other entries (a backup's dump and rules) are reported. See docs/OBJECT-STORES.md.

            Examples:
              dumpkit restore bucket.tar.zst restored/ --verify
              dumpkit restore backup.tar.zst /srv/restore --include 'bucket/v1/*' \\
                  --overwrite never
              dumpkit restore bucket.tar.zst restored/ --exclude '*.tmp' --dry-run
              dumpkit restore bucket.tar.zst s3://backups/restored --verify
            """
    )

    @Argument(help: "The archive, or - for standard input.")
    var archive: String

    @Argument(
        help:
            "The destination directory (created if missing), or a bucket: s3://BUCKET/PREFIX, gs://BUCKET/PREFIX (the objects with their metadata)."
    )
    var destination: String

    @Flag(
        help:
            "Also check MD5 and CRC-32C (size and SHA-256 are always checked against the manifest), refuse entries it does not list and report missing objects."
    )
    var verify = false

    @Option(help: "When a file exists: never, if-different (default) or always replace it.")
    var overwrite: SafeExtractor.OverwritePolicy = .ifDifferent

    @Option(help: "Restore only entries whose path matches this glob (repeatable; * also matches /).")
    var include: [String] = []

    @Option(help: "Leave out entries whose path matches this glob (repeatable).")
    var exclude: [String] = []

    /// The older name of `--include`.
    @Option(help: .hidden)
    var only: [String] = []

    @Flag(name: .customLong("dry-run"), help: "Read and check every entry and list what would be written and refused; write nothing.")
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

    func run() throws {
        try reportingErrors {
            var job = RestoreJob(archive: archive, destination: destination)
            job.verify = verify
            job.overwrite = overwrite
            job.filter = PathFilter(include: include + only, exclude: exclude)
            job.limits = ExtractionLimits(maxBytes: maxBytes, maxEntries: maxEntries, maxRatio: maxRatio > 0 ? maxRatio : nil)
            job.dryRun = dryRun
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
                    "archive": .string(archive), "destination": .string(destination), "dryRun": .bool(dryRun),
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
                try printJSON(.object(o))
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
            try common.report(report.problems, in: archive, doing: dryRun ? "checking" : "restoring")
        }
    }
}
