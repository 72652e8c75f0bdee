import ArgumentParser
import CloudHTTP
import DumpKit
import Foundation
import JSONStream
import LiveDatabase

/// `dumpkit import`: a dump file into a live database, merged, in bounded chunks.
struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import a dump into a live Realtime Database (or a path in it) in chunks, merging, resumable.",
        discussion: """
            The dump is first read once with the database's limit checks (key characters, 768-byte keys, \
            depth 32, 10 MiB strings, .value beside children, duplicate names): a dump the database would \
            refuse halfway is refused before anything is sent (exit 1, the findings with their JSON Pointers).

            It is then streamed and cut into chunks of at most --chunk-size bytes, written with multi-path \
            PATCH requests (print=silent), --jobs chunks in flight. Memory stays near --chunk-size times \
            --jobs, whatever the size of the dump.

            Never destructive: by default the dump is MERGED into the location: every value is written at \
            its own path, so nothing the dump does not name is deleted or overwritten (nulls and empty \
            objects in the dump are left out: writing them would delete). Into a location without data \
            (checked first) there is nothing to keep, so values are written whole, as --replace writes \
            them. With --replace each top-level \
            child the dump has replaces the one in the database (written whole, or deleted first and then \
            written in pieces when it is larger than a chunk); other top-level children are kept. There is \
            no way to wipe the location.

            A chunk the database refuses as too large is split and sent again; 5xx answers, timeouts and \
            dropped connections are retried with backoff. A refused write (401/403 from credentials or \
            rules, 400 for a value) stops the import: no chunk is started after it (those already in flight, \
            at most --jobs - 1, finish), and the error names the chunk's JSON Pointers and the database's \
            message.

            NDJSON records ({"path": "/a/b", "value": ...} per line, as convert writes them) are imported \
            the same way, each value under its path; with --replace each record replaces the value at its \
            path.

            Resumable: committed chunks are noted in a journal beside the dump \
            (.NAME.dumpkit-import-HASH.journal, or --journal); the same command run again after a kill sends \
            only the chunks not committed. The journal is removed when the import is complete.

            Credentials: --access-token (or GOOGLE_OAUTH_ACCESS_TOKEN), or --auth with a legacy database \
            secret or an ID token. FIREBASE_DATABASE_EMULATOR_HOST=host:port sends every request to \
            http://host:port/PATH.json?ns=NAME without credentials.

            Exit codes: 0 done, 1 the dump breaks the database's limits or the database refused a value, \
            2 usage errors, refused credentials or rules, a missing database, or one that stayed unreachable.

            Examples:
              dumpkit import backup.json.gz https://my-app.firebaseio.com \\
                  --access-token "$(gcloud auth print-access-token)"
              dumpkit import users.json https://my-app.firebaseio.com/users --replace --jobs 16
              dumpkit import big.json.zst https://my-app.firebaseio.com --dry-run
              dumpkit import todolist.ndjson https://my-app.firebaseio.com
              FIREBASE_DATABASE_EMULATOR_HOST=127.0.0.1:9000 \\
                  dumpkit import seed.json https://demo-app.firebaseio.com
            """
    )

    @Argument(help: "The dump file (.json, .json.gz, .json.zst, ...), or NDJSON records (.ndjson, .jsonl).")
    var input: String

    @Option(help: "Input format: json or ndjson (default: from the file name, else json).")
    var from: DumpFormat?

    @Argument(help: "The database URL and path: https://NAME.firebaseio.com[/PATH] or https://NAME.REGION.firebasedatabase.app[/PATH].")
    var database: String

    @Option(help: "Largest PATCH body in bytes (a single value larger than this goes alone).")
    var chunkSize: Int = 1_000_000

    @Flag(help: "Replace the top-level children the dump has (others are kept) instead of merging into them.")
    var replace = false

    @Flag(help: "Print the chunk plan (count, sizes, paths) and send nothing.")
    var dryRun = false

    @Option(help: "The journal of committed chunks (default: beside the dump).")
    var journal: String?

    @OptionGroup var json: JSONSummaryOption

    @OptionGroup var connection: DatabaseOptions
    @OptionGroup var common: CommonOptions

    func validate() throws {
        guard chunkSize >= 1024, chunkSize <= 256_000_000 else { throw ValidationError("--chunk-size must be 1024...256000000 bytes") }
        guard input != "-" else { throw ValidationError("import reads the dump twice (limits first, then chunks): give a file, not -") }
    }

    func run() throws {
        let target = try reportingErrors { try connection.location(database) }
        var job = ImportJob(input: input, target: target)
        job.chunkSize = chunkSize
        job.jobs = connection.jobs
        job.mode = replace ? .replace : .merge
        job.journalPath = journal
        job.format = from
        if dryRun {
            try reportingErrors { try printPlan(job) }
            return
        }
        let client = try reportingErrors { try connection.client(for: target) }
        let progress = common.progress()
        let summary = try reportingDatabaseErrors { [job, progress = UncheckedProgress(progress)] in
            try await client.using { try await job.run(client: $0, progress: progress.meter) }
        }
        if json.json {
            try printJSON(
                .object([
                    "target": .string(target.description), "chunks": .number(JSONNumber(summary.chunks)),
                    "resumedChunks": .number(JSONNumber(summary.chunksSkipped)), "entries": .number(JSONNumber(summary.entries)),
                    "bytesSent": .number(JSONNumber(summary.bytesSent)), "splits": .number(JSONNumber(summary.splits)),
                    "targetWasEmpty": .bool(summary.targetWasEmpty),
                ]))
        } else {
            common.note(
                "imported \(input) into \(target): \(summary.chunks) chunks, \(summary.entries) paths, "
                    + "\(ProgressMeter.format(bytes: summary.bytesSent))"
                    + (summary.splits > 0 ? ", \(summary.splits) split as too large" : "")
                    + (summary.chunksSkipped > 0 ? ", \(summary.chunksSkipped) chunks committed by the interrupted run" : "")
                    + (summary.targetWasEmpty ? " (the location was empty: values written whole)" : ""))
        }
    }

    /// The dry run: limits checked, then every chunk with its size and first and last path.
    private func printPlan(_ job: ImportJob) throws {
        try job.checkLimits()
        var count = 0, bytes = 0, entries = 0, largest = 0
        var lines: [String] = []
        try job.plan { chunk in
            let size = chunk.body.count
            count += 1
            bytes += size
            entries += chunk.count
            largest = max(largest, size)
            let pointers = chunk.pointers
            let span = pointers.count == 1 ? pointers[0] : "\(pointers.first!) ... \(pointers.last!)"
            if !json.json {
                lines.append(
                    "chunk \(chunk.index): \(size) bytes, \(pointers.count) paths\(chunk.isBarrier ? " (deletes first)" : ""): \(span)")
            }
        }
        if json.json {
            try printJSON(
                .object([
                    "target": .string(job.target.description), "dryRun": .bool(true), "chunks": .number(JSONNumber(count)),
                    "entries": .number(JSONNumber(entries)), "bytes": .number(JSONNumber(bytes)),
                    "largestChunk": .number(JSONNumber(largest)),
                ]))
            return
        }
        for line in lines { print(line) }
        print("\(count) chunks, \(entries) paths, \(bytes) bytes (largest chunk \(largest) bytes); nothing was sent")
    }
}

/// The progress meter handed to the import's task: it is only touched by that task, one call at a time.
struct UncheckedProgress: @unchecked Sendable {
    let meter: ProgressMeter?
    init(_ meter: ProgressMeter?) { self.meter = meter }
}
