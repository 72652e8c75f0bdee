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

            --verify: after the import, the location is exported as `export` reads it (ranges streamed to \
            .NAME.dumpkit-verify.d beside the dump, removed afterwards) and compared with the dump by value. \
            After a merge, every value the dump names must be at its path (the database may hold more); \
            after --replace, each top-level child of the dump must be equal as a whole. Compared as the \
            database keeps data: numbers by value (doubles), strings by code points, null and empty \
            objects as no data, arrays as objects keyed by index, .priority left out. Differences: exit 1 \
            and the first JSON Pointers (in the dump) that differ. Another writer changing the data \
            meanwhile shows as a difference too. JSON dumps only (not NDJSON records).

            Credentials: --access-token (or GOOGLE_OAUTH_ACCESS_TOKEN), or --auth with a legacy database \
            secret or an ID token. FIREBASE_DATABASE_EMULATOR_HOST=host:port sends every request to \
            http://host:port/PATH.json?ns=NAME without credentials.

            Exit codes: 0 done, 1 the dump breaks the database's limits, the database refused a value or \
            --verify found differences, \
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

    @Flag(
        help:
            "Afterwards, export the location and compare it with the dump by value (merge: the dump is contained; --replace: its top-level children are equal); differences: exit 1."
    )
    var verify = false

    @Option(help: "The journal of committed chunks (default: beside the dump).")
    var journal: String?

    @OptionGroup var json: JSONSummaryOption

    @OptionGroup var connection: DatabaseOptions
    @OptionGroup var common: CommonOptions

    func validate() throws {
        guard chunkSize >= 1024, chunkSize <= 256_000_000 else { throw ValidationError("--chunk-size must be 1024...256000000 bytes") }
        guard input != "-" else { throw ValidationError("import reads the dump twice (limits first, then chunks): give a file, not -") }
        if verify, (from ?? DumpFormat.forPath(input) ?? .json) == .ndjson {
            throw ValidationError("--verify compares a JSON dump, not NDJSON records")
        }
        if verify, dryRun { throw ValidationError("--verify checks what an import wrote: not with --dry-run") }
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
            try reportingErrors {
                let plan = try importPlan(job, printing: !json.json)
                if json.json { try printJSON(.object(plan)) }
            }
            return
        }
        let client = try reportingErrors { try connection.client(for: target) }
        let progress = common.progress()
        var verification: ImportVerification?
        if verify {
            verification = ImportVerification(dump: input, target: target, mode: job.mode)
            verification?.jobs = connection.jobs
        }
        let (summary, check) = try reportingDatabaseErrors { [job, verification, progress = UncheckedProgress(progress)] in
            try await client.using { client in
                let summary = try await job.run(client: client, progress: progress.meter)
                return (summary, try await verification?.run(client: client))
            }
        }
        if json.json {
            var o: JSONObject = [
                "target": .string(target.description), "chunks": .number(JSONNumber(summary.chunks)),
                "resumedChunks": .number(JSONNumber(summary.chunksSkipped)), "entries": .number(JSONNumber(summary.entries)),
                "bytesSent": .number(JSONNumber(summary.bytesSent)), "splits": .number(JSONNumber(summary.splits)),
                "targetWasEmpty": .bool(summary.targetWasEmpty),
            ]
            if let check, let verification { o["verification"] = verificationJSON(check, verification) }
            try printJSON(.object(o))
        } else {
            common.note(
                "imported \(input) into \(target): \(summary.chunks) chunks, \(summary.entries) paths, "
                    + "\(ProgressMeter.format(bytes: summary.bytesSent))"
                    + (summary.splits > 0 ? ", \(summary.splits) split as too large" : "")
                    + (summary.chunksSkipped > 0 ? ", \(summary.chunksSkipped) chunks committed by the interrupted run" : "")
                    + (summary.targetWasEmpty ? " (the location was empty: values written whole)" : ""))
        }
        if let check, let verification { try reportVerification(check, verification, dump: input, common: common) }
    }
}

/// A verification's outcome (`import --verify`, `restore --verify-database`): a note, or the first
/// differing pointers on standard error and exit 1.
func reportVerification(_ check: ImportVerification.Report, _ verification: ImportVerification, dump: String, common: CommonOptions) throws
{
    let what = verification.mode == .replace ? "its top-level children are equal" : "every value of the dump is there"
    guard check.differences > 0 else {
        common.note("verified \(verification.target) against \(dump): \(what) (\(check.requests) requests)")
        return
    }
    let lines = check.first.map { "  \($0.pointer.isEmpty ? "(the whole dump)" : $0.pointer): \($0.detail)" }
    let more = check.differences > check.first.count ? "\n  ... and \(check.differences - check.first.count) more" : ""
    FileHandle.standardError.write(
        Data(
            ("dumpkit: error: verification failed: \(verification.target) differs from \(dump) at \(counted(check.differences, "path")) "
                + "(\(verification.mode == .replace ? "replace" : "merge"): \(what) should hold):\n" + lines.joined(separator: "\n")
                + more
                + "\n").utf8))
    throw Exit.findings
}

/// A verification's outcome in a --json summary.
func verificationJSON(_ check: ImportVerification.Report, _ verification: ImportVerification) -> JSONValue {
    .object([
        "compared": .string(verification.mode == .replace ? "top-level children equal" : "dump contained"),
        "differences": .number(JSONNumber(check.differences)),
        "firstDifferences": .array(check.first.map { .object(["pointer": .string($0.pointer), "detail": .string($0.detail)]) }),
        "requests": .number(JSONNumber(check.requests)),
    ])
}

/// An import's dry run (`import` and `restore --database`): limits checked, then every chunk with
/// its size and first and last path printed (when `printing`); the totals as the --json summary has them.
func importPlan(_ job: ImportJob, printing: Bool) throws -> JSONObject {
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
        if printing {
            lines.append(
                "chunk \(chunk.index): \(size) bytes, \(pointers.count) paths\(chunk.isBarrier ? " (deletes first)" : ""): \(span)")
        }
    }
    if printing {
        for line in lines { print(line) }
        print("\(count) chunks, \(entries) paths, \(bytes) bytes (largest chunk \(largest) bytes); nothing was sent")
    }
    return [
        "target": .string(job.target.description), "dryRun": .bool(true), "chunks": .number(JSONNumber(count)),
        "entries": .number(JSONNumber(entries)), "bytes": .number(JSONNumber(bytes)), "largestChunk": .number(JSONNumber(largest)),
    ]
}

/// The progress meter handed to the import's task: it is only touched by that task, one call at a time.
struct UncheckedProgress: @unchecked Sendable {
    let meter: ProgressMeter?
    init(_ meter: ProgressMeter?) { self.meter = meter }
}
