import ArgumentParser
import DumpKit
import Foundation
import JSONStream
import ObjectStores
import Synchronization

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

    @OptionGroup var json: JSONSummaryOption

    @OptionGroup var stores: StoreOptions

    @OptionGroup var common: CommonOptions

    func run() throws {
        try reportingErrors {
            let jobs = try jobsGiven(jobs, alias: nil) ?? jobs
            var copier = StoreCopier(source: source, destination: destination, options: stores.objectStores)
            copier.filter = PathFilter(include: include, exclude: exclude)
            copier.dryRun = dryRun
            copier.jobs = jobs
            let progress = progressLine()
            let summary = try copier.run(progress: progress)
            if progress != nil { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
            if json.json {
                try printJSON(jsonSummary(summary))
            } else {
                let line =
                    "\(dryRun ? "dry run, would copy" : "copied") \(counted(summary.copied, "object")) (\(ProgressMeter.format(bytes: summary.copiedBytes))), "
                    + "skipped \(summary.skipped) already identical, updated the metadata of \(summary.metadataUpdated), "
                    + "\(summary.conflicts) conflicting, \(summary.refused) refused, of \(summary.listed) listed"
                if dryRun { print(line) } else { common.note(line) }
            }
            if summary.conflicts > 0 {
                FileHandle.standardError.write(
                    Data(
                        ("dumpkit: error: \(counted(summary.conflicts, "object")) at \(destination) with other content were left as they are: "
                            + summary.conflictNames.map { String(reflecting: $0) }.joined(separator: ", ") + "\n").utf8))
            }
            if summary.refused > 0 {
                FileHandle.standardError.write(
                    Data(
                        ("dumpkit: error: \(counted(summary.refused, "object name")) cannot be written to the directory \(destination) "
                            + "(absolute, '..', NUL, segments over 255 bytes...): "
                            + summary.refusedNames.map { String(reflecting: $0) }.joined(separator: ", ") + "\n").utf8))
            }
            if summary.conflicts > 0 || summary.refused > 0 { throw Exit.findings }
        }
    }

    /// A line redrawn on a terminal, at most five times a second.
    private func progressLine() -> (@Sendable (StoreCopier.Summary) -> Void)? {
        guard !common.quiet, !json.json, isatty(STDERR_FILENO) != 0 else { return nil }
        let last = LastReport()
        return { s in
            guard last.due() else { return }
            let line =
                "\r\u{1B}[K\(s.copied + s.skipped + s.metadataUpdated + s.conflicts + s.refused)/\(s.listed) objects, \(ProgressMeter.format(bytes: s.copiedBytes)) copied"
            FileHandle.standardError.write(Data(line.utf8))
        }
    }

    private func jsonSummary(_ s: StoreCopier.Summary) -> JSONValue {
        func tally(_ count: Int, _ bytes: Int64) -> JSONValue {
            .object(["count": .number(JSONNumber(count)), "bytes": .number(JSONNumber(bytes))])
        }
        func names(_ count: Int, _ names: [String]) -> JSONValue {
            .object(["count": .number(JSONNumber(count)), "names": .array(names.map { .string($0) })])
        }
        return .object([
            "source": .string(source), "destination": .string(destination), "dryRun": .bool(dryRun),
            "listed": .number(JSONNumber(s.listed)),
            "copied": tally(s.copied, s.copiedBytes), "skipped": tally(s.skipped, s.skippedBytes),
            "metadataUpdated": .number(JSONNumber(s.metadataUpdated)),
            "conflicts": names(s.conflicts, s.conflictNames), "refused": names(s.refused, s.refusedNames),
        ])
    }
}

/// When the progress line was last drawn.
private final class LastReport: Sendable {
    private let last = Mutex(Date.distantPast)

    func due() -> Bool {
        last.withLock { last in
            let now = Date()
            guard now.timeIntervalSince(last) >= 0.2 else { return false }
            last = now
            return true
        }
    }
}
