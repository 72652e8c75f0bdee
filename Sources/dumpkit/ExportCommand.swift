import ArgumentParser
import CloudHTTP
import DumpKit
import Foundation
import JSONStream
import LiveDatabase
import Synchronization

/// `dumpkit export`: a live database's subtree to a dump file.
struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Export a live Realtime Database (or a path in it) to a dump file, past the 256 MB response limit.",
        discussion: """
            The children of the location are listed (shallow=true) and read in key ranges (orderBy="$key", \
            startAt, endAt), --jobs at a time; a range the database refuses as too large is halved, a single \
            child that is too large is listed and read in ranges in turn. A location with too many children \
            to list is read page after page (limitToFirst), in --jobs chains cut between its first and last \
            key, its children too large to read found by key. \
            The output is the JSON one GET of \
            the location would return, members in the database's key order, written to a temporary name and \
            renamed when complete (compressed by its extension: .gz, .zst, .xz, .bz2).

            NOT A SNAPSHOT: the REST API has no point-in-time reads. Ranges are read one after another, so \
            data written while the export runs may or may not be in it, and a child moved between two \
            ranges can be missed or appear twice. Stop the writers (or export a copy) when that matters.

            Resumable: every answer is saved in .NAME.dumpkit-export.d beside the output (for -o s3://... or \
            gs://..., .NAME-HASH.dumpkit-export.d in TMPDIR), with a journal. A \
            run that was killed, started again with the same arguments, fetches only what is missing and \
            writes the same bytes. The folder is removed when the output is complete. Disk: plan for about \
            twice the uncompressed export free there (the saved answers, the sorted keys of large \
            listings, the sorting of the output's members). Memory does not grow with the database: \
            answers are streamed to their files and listings sorted on disk (about 100 MB at 1 GB and 2 GB).

            Credentials: --access-token (or GOOGLE_OAUTH_ACCESS_TOKEN), or --auth with a legacy database \
            secret or an ID token. FIREBASE_DATABASE_EMULATOR_HOST=host:port sends every request to \
            http://host:port/PATH.json?ns=NAME without credentials.

            Exit codes: 0 done, 2 usage errors, refused credentials, a missing database, or a database that \
            stayed unreachable through the retries.

            Examples:
              dumpkit export https://my-app.firebaseio.com -o backup.json.zst \\
                  --access-token "$(gcloud auth print-access-token)"
              dumpkit export https://my-app-default-rtdb.europe-west1.firebasedatabase.app/users \\
                  -o users.json --auth "$DATABASE_SECRET" --jobs 16
              FIREBASE_DATABASE_EMULATOR_HOST=127.0.0.1:9000 \\
                  dumpkit export https://demo-app.firebaseio.com -o emulator.json
              dumpkit export https://my-app.firebaseio.com --shallow -o top-level-keys.json
            """
    )

    @Argument(help: "The database URL and path: https://NAME.firebaseio.com[/PATH] or https://NAME.REGION.firebasedatabase.app[/PATH].")
    var database: String

    @Option(name: .shortAndLong, help: "The dump file to write (.json, .json.gz, .json.zst, ...).")
    var output: String

    @Option(help: "Children per request before any split.")
    var pageSize: Int = 1000

    @Flag(help: "Only the keys of the location's children (each with true), as firebase-tools' --shallow.")
    var shallow = false

    @Option(help: "plain (the default) or export: keep priorities as .priority and .value (format=export).")
    var format: ExportFormat = .plain

    @OptionGroup var json: JSONSummaryOption

    @OptionGroup var connection: DatabaseOptions
    @OptionGroup var common: CommonOptions

    enum ExportFormat: String, ExpressibleByArgument {
        case plain, export
    }

    func validate() throws {
        guard pageSize >= 1 else { throw ValidationError("--page-size must be at least 1") }
        guard output != "-" else { throw ValidationError("export assembles its output from saved pages: give -o FILE, not -") }
    }

    func run() throws {
        let source = try reportingErrors { try connection.location(database) }
        var job = ExportJob(source: source, output: output)
        job.jobs = connection.jobs
        job.pageSize = pageSize
        job.shallow = shallow
        job.exportFormat = format == .export
        let client = try reportingErrors { try connection.client(for: source) }
        let progress = !common.quiet && isatty(STDERR_FILENO) != 0 ? ExportProgressLine() : nil
        let summary = try reportingDatabaseErrors { [job] in
            defer { progress?.finish() }
            return try await client.using { try await job.run(client: $0) { progress?.update($0) } }
        }
        if json.json {
            try printJSON(
                .object([
                    "output": .string(output), "requests": .number(JSONNumber(summary.requests)),
                    "resumed": .number(JSONNumber(summary.resumed)), "splits": .number(JSONNumber(summary.splits)),
                    "bytesFetched": .number(JSONNumber(summary.bytesFetched)), "bytesWritten": .number(JSONNumber(summary.bytesWritten)),
                ]))
        } else {
            common.note(
                "wrote \(output): \(ProgressMeter.format(bytes: summary.bytesWritten)) of JSON from \(summary.requests) requests"
                    + (summary.splits > 0 ? " (\(summary.splits) split as too large)" : "")
                    + (summary.resumed > 0 ? ", \(summary.resumed) ranges from the interrupted run" : ""))
        }
    }
}

/// The export's progress on a terminal: requests, bytes and rate, redrawn in place.
final class ExportProgressLine: Sendable {
    private let start = Date()
    /// When the line was last drawn, and whether it was.
    private let state = Mutex((last: Date.distantPast, drawn: false))

    func update(_ s: ExportJob.Summary) {
        state.withLock { state in
            let now = Date()
            guard now.timeIntervalSince(state.last) >= 0.2, now.timeIntervalSince(start) >= 1 else { return }
            state.last = now
            state.drawn = true
            let rate = Double(s.bytesFetched) / 1e6 / max(now.timeIntervalSince(start), 0.001)
            let line =
                "\r\u{1B}[K\(s.requests) requests  \(ProgressMeter.format(bytes: s.bytesFetched))  "
                + String(format: "%.1f MB/s", rate) + (s.splits > 0 ? "  \(s.splits) split" : "")
            FileHandle.standardError.write(Data(line.utf8))
        }
    }

    func finish() {
        state.withLock { if $0.drawn { FileHandle.standardError.write(Data("\n".utf8)) } }
    }
}
