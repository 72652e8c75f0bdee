import ArgumentParser
import DumpKit
import Foundation
import ObjectStores

/// `dumpkit copy`: objects and their metadata from one store to another.
struct CopyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "copy",
        abstract: "Copy objects with their metadata between stores: a blob-store directory, s3://BUCKET/PREFIX, gs://BUCKET/PREFIX.",
        discussion: """
            Every object of SRC (or those --include/--exclude select) is copied to DST with its content \
            type, cache control, content disposition/encoding/language and custom metadata \
            (firebaseStorageDownloadTokens included). Objects already at DST with the same content (size and \
            MD5, CRC-32C or SHA-256) are skipped, their metadata updated when it differs. Nothing at DST is \
            deleted or replaced: an object there with other content is listed as a conflict (exit 1). See \
            docs/OBJECT-STORES.md for credentials and endpoints.

            Examples:
              dumpkit copy blobs/ gs://my-app.appspot.com
              dumpkit copy gs://my-app.appspot.com s3://backups/my-app --jobs 128
              dumpkit copy s3://backups/my-app restored/ --include 'v1/*' --dry-run --json
            """
    )

    @Argument(help: "The source: a blob-store directory, s3://BUCKET/PREFIX or gs://BUCKET/PREFIX.")
    var source: String

    @Argument(help: "The destination, of the same kinds (a directory is created if needed).")
    var destination: String

    @Option(help: "Copy only objects whose names match this glob (repeatable; '*' also matches '/').")
    var include: [String] = []

    @Option(help: "Leave out objects whose names match this glob (repeatable).")
    var exclude: [String] = []

    @Option(help: "Objects in flight at once.")
    var jobs: Int = 64

    @Flag(name: .customLong("dry-run"), help: "Count what would be copied; write nothing.")
    var dryRun = false

    @Flag(help: "Print the summary as one JSON object on standard output.")
    var json = false

    @OptionGroup var stores: StoreOptions

    @OptionGroup var common: CommonOptions

    func run() throws {
        try reportingErrors {
            guard jobs >= 1 else { throw UsageError("--jobs must be at least 1") }
            var copier = StoreCopier(source: source, destination: destination, options: stores.objectStores)
            copier.filter = PathFilter(include: include, exclude: exclude)
            copier.dryRun = dryRun
            copier.jobs = jobs
            let summary = try copier.run(progress: progressLine())
            if json {
                print(jsonSummary(summary))
            } else {
                let line = "\(dryRun ? "dry run, would copy" : "copied") \(counted(summary.copied, "object")) (\(ProgressMeter.format(bytes: summary.copiedBytes))), "
                    + "skipped \(summary.skipped) already identical, updated the metadata of \(summary.metadataUpdated), "
                    + "\(summary.conflicts) conflicting, \(summary.refused) refused, of \(summary.listed) listed"
                if dryRun { print(line) } else { common.note(line) }
            }
            if summary.conflicts > 0 {
                FileHandle.standardError.write(Data(("dumpkit: error: \(counted(summary.conflicts, "object")) at \(destination) with other content were left as they are: "
                    + summary.conflictNames.map { String(reflecting: $0) }.joined(separator: ", ") + "\n").utf8))
            }
            if summary.refused > 0 {
                FileHandle.standardError.write(Data(("dumpkit: error: \(counted(summary.refused, "object name")) cannot be written to the directory \(destination) "
                    + "(absolute, '..', NUL, segments over 255 bytes...): " + summary.refusedNames.map { String(reflecting: $0) }.joined(separator: ", ") + "\n").utf8))
            }
            if summary.conflicts > 0 || summary.refused > 0 { throw Exit.findings }
        }
    }

    /// A line redrawn on a terminal, at most five times a second.
    private func progressLine() -> (@Sendable (StoreCopier.Summary) -> Void)? {
        guard !common.quiet, !json, isatty(STDERR_FILENO) != 0 else { return nil }
        let last = LastReport()
        return { s in
            guard last.due() else { return }
            let line = "\r\u{1B}[K\(s.copied + s.skipped + s.metadataUpdated + s.conflicts + s.refused)/\(s.listed) objects, \(ProgressMeter.format(bytes: s.copiedBytes)) copied"
            FileHandle.standardError.write(Data(line.utf8))
        }
    }

    private func jsonSummary(_ s: StoreCopier.Summary) -> String {
        let object: [String: Any] = [
            "source": source, "destination": destination, "dryRun": dryRun, "listed": s.listed,
            "copied": ["count": s.copied, "bytes": s.copiedBytes], "skipped": ["count": s.skipped, "bytes": s.skippedBytes],
            "metadataUpdated": s.metadataUpdated,
            "conflicts": ["count": s.conflicts, "names": s.conflictNames], "refused": ["count": s.refused, "names": s.refusedNames],
        ]
        let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }
}

/// When the progress line was last drawn.
private final class LastReport: @unchecked Sendable {
    private let lock = NSLock()
    private var last = Date.distantPast

    func due() -> Bool {
        lock.withLock {
            let now = Date()
            guard now.timeIntervalSince(last) >= 0.2 else { return false }
            last = now
            return true
        }
    }
}
