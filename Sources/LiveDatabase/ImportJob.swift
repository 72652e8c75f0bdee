import DumpKit
import Foundation
import JSONStream

/// `dumpkit import`: writes a dump into a live database with multi-path PATCHes of bounded size,
/// several in flight, resumable, and never deleting what the dump does not name.
///
/// Before anything is sent the dump is read once with the database's limit checks (key characters
/// and length, depth, string size), so a dump the database would refuse halfway is refused whole.
/// Then `ImportChunker` cuts it into chunks; each is sent with `print=silent`. A chunk refused as too
/// large is split in halves (a single value into its members) and sent again; 5xx answers, timeouts
/// and dropped connections are retried by the client. Any other refusal stops the import: no chunk
/// is started after it, the ones in flight finish, and the error names the chunk's paths.
public struct ImportJob: Sendable {
    public var input: String
    public var target: DatabaseURL
    public var chunkSize: Int = 1_000_000
    public var jobs: Int = 8
    public var mode: ImportChunker.Mode = .merge
    /// The journal's path; by default beside the input, named after the target and options.
    public var journalPath: String?
    /// `json` (a dump) or `ndjson` (records); by default from the file name, else `json`.
    public var format: DumpFormat?

    private var effectiveFormat: DumpFormat { format ?? DumpFormat.forPath(input) ?? .json }

    public init(input: String, target: DatabaseURL) {
        self.input = input
        self.target = target
    }

    /// What an import did.
    public struct Summary: Sendable {
        public var chunks = 0
        public var chunksSkipped = 0
        public var entries = 0
        public var bytesSent: Int64 = 0
        /// Chunks that had to be split after the database refused them as too large.
        public var splits = 0
        /// A merge into a location without data, so values were written whole.
        public var targetWasEmpty = false
    }

    /// The dump breaks the database's limits: nothing was sent.
    public struct LimitsBroken: Error, DataError, CustomStringConvertible, Sendable {
        public let input: String
        public let findings: [Finding]
        public var description: String {
            let shown = findings.prefix(5).map { f in
                "\(input):\(f.line ?? 0)\(f.column.map { ":\($0)" } ?? "") at \(f.pointer): \(f.message) (\(f.rule))"
            }
            let more = findings.count > 5 ? "\n  ... and \(findings.count - 5) more" : ""
            return "the dump breaks the database's limits, nothing was sent:\n  " + shown.joined(separator: "\n  ") + more
        }
    }

    /// A chunk the database refused; nothing was started after it.
    public struct ChunkRefused: Error, CustomStringConvertible, Sendable {
        public let chunk: Int
        public let target: DatabaseURL
        public let pointers: [String]
        public let underlying: DatabaseRequestError
        public var description: String {
            let shown = pointers.prefix(5).joined(separator: ", ") + (pointers.count > 5 ? ", ... (\(pointers.count) paths)" : "")
            return
                "chunk \(chunk) refused, import stopped (chunks before it are written; run again to resume after fixing): \(target) at \(shown): \(underlying)"
        }
    }

    /// The default journal: `.NAME.dumpkit-import-HASH.journal` beside the input (in `TMPDIR` for a
    /// dump in a bucket, `RunFiles`).
    public var effectiveJournalPath: String {
        journalPath ?? RunFiles.beside(input, suffix: "dumpkit-import-\(RunJournal.hash(identity)).journal")
    }

    private var identity: String {
        "dumpkit import v1 \(target) mode=\(mode.rawValue) chunk-size=\(chunkSize) format=\(effectiveFormat.rawValue) input=\(input)"
    }

    /// The journal's first line: the run, how its chunks are cut, and the input's size and time.
    private func journalHeader(cutting: ImportChunker.Mode) -> String {
        identity + " cut=\(cutting.rawValue) " + Self.fileStamp(input)
    }

    /// Checks the dump's limits, without sending anything.
    public func checkLimits() throws {
        if effectiveFormat == .ndjson { return try checkRecordLimits() }
        let file = try InputFile(path: input)
        let reader = JSONReader(source: file, sourceName: input)
        var errors: [Finding] = []
        let checker = DatabaseLimitsChecker { f in if f.severity == .error { errors.append(f) } }
        // The depth limit counts from the database's root: the target's own keys come first.
        let base = target.path.count, maxDepth = DatabaseLimitsChecker.maxDepth
        var tooDeepBelowTarget = false
        reader.tokenObserver = { token, reader in
            checker.observe(token, reader)
            if token == .name, !tooDeepBelowTarget, reader.depth + base > maxDepth, reader.depth <= maxDepth {
                tooDeepBelowTarget = true
                let at = reader.location
                errors.append(
                    Finding(
                        severity: .error, rule: "limits:depth", pointer: reader.pointer,
                        message: "path deeper than \(maxDepth) keys under the target \(target), which is \(base) keys deep",
                        line: at.line, column: at.column))
            }
        }
        try reader.skipValue()
        guard try reader.next() == .end else { throw reader.error(.trailingData, "unexpected content after the dump's value") }
        if !errors.isEmpty { throw LimitsBroken(input: input, findings: errors) }
    }

    /// Checks each NDJSON record's path and value as the value placed at its path under the target in
    /// a tree, so keys of the path, depth and the value's own limits are all checked; findings carry
    /// the record's line and pointers relative to the target.
    private func checkRecordLimits() throws {
        let records = NDJSONReader(source: try InputFile(path: input), sourceName: input)
        var errors: [Finding] = []
        let sink = MemoryByteSink()
        let writer = JSONWriter(sink: sink)
        while let record = try records.next(passThrough: nil) {
            let line = records.reader.location.line
            sink.removeAll(keepingCapacityUpTo: 1 << 20)
            writer.reset()
            let placed = target.path + record.path
            for key in placed {
                try writer.beginObject()
                try writer.name(key)
            }
            try writer.value(record.value ?? .null)
            for _ in placed { try writer.endObject() }
            try writer.flush()
            let reader = JSONReader(bytes: sink.bytes)
            let targetPointer = JSONPointer.string(target.path)
            let checker = DatabaseLimitsChecker { f in
                guard f.severity == .error else { return }
                var f = f
                f.line = line
                f.column = nil
                if f.pointer.hasPrefix(targetPointer) { f.pointer.removeFirst(targetPointer.count) }
                errors.append(f)
            }
            reader.tokenObserver = { checker.observe($0, $1) }
            try reader.skipValue()
        }
        if !errors.isEmpty { throw LimitsBroken(input: input, findings: errors) }
    }

    /// The chunk planner over the input, as its format says.
    private func chunker(cutting: ImportChunker.Mode) throws -> (ImportChunker, InputFile) {
        let file = try InputFile(path: input)
        if effectiveFormat == .ndjson {
            return (ImportChunker(records: NDJSONReader(source: file, sourceName: input), chunkSize: chunkSize, mode: cutting), file)
        }
        return (ImportChunker(reader: JSONReader(source: file, sourceName: input), chunkSize: chunkSize, mode: cutting), file)
    }

    /// The chunks, in order, as a dry run lists them (cut as for a target that holds data).
    public func plan(_ each: (ImportChunk) throws -> Void) throws {
        let (chunker, _) = try chunker(cutting: mode)
        while let chunk = try chunker.next() { try each(chunk) }
    }

    /// Runs the import.
    public func run(client: DatabaseClient, progress: ProgressMeter? = nil) async throws -> Summary {
        guard input != "-" else { throw UsageError("import reads the dump twice (limits first): give a file, not -") }
        try checkLimits()
        // A merge into a location without data has nothing to keep: values are written whole, as
        // --replace writes them (far fewer paths). A run resuming such an import goes on cutting so.
        var cutting = mode
        if mode == .merge {
            if RunJournal.header(at: effectiveJournalPath) == journalHeader(cutting: .replace) {
                cutting = .replace
            } else if try await client.get(target, query: [("shallow", "true")]) == Array("null".utf8) {
                cutting = .replace
            }
        }
        let journal: RunJournal
        do {
            journal = try RunJournal(path: effectiveJournalPath, identity: journalHeader(cutting: cutting))
        } catch let error as JournalError where journalPath == nil {
            throw JournalError(path: error.path, message: error.message + "; give --journal FILE in a writable folder")
        }
        let (chunker, file) = try chunker(cutting: cutting)
        progress?.attach(file)
        let sender = ChunkSender(client: client, target: target)
        var summary = Summary()
        summary.targetWasEmpty = mode == .merge && cutting == .replace
        try await withThrowingTaskGroup(of: (Int, ChunkSender.Outcome).self) { group in
            var inFlight = 0
            var failure: (any Error)?
            func collect(_ result: Result<(Int, ChunkSender.Outcome), any Error>?) throws {
                inFlight -= 1
                switch result {
                case .success(let (index, outcome))?:
                    try journal.record(String(index))
                    summary.splits += outcome.splits
                    summary.bytesSent += outcome.bytes
                    progress?.recordDone()
                case .failure(let error)?:
                    if failure == nil { failure = error }
                case nil: break
                }
            }
            while failure == nil, let chunk = try chunker.next() {
                if journal.contains(String(chunk.index)) {
                    summary.chunksSkipped += 1
                    continue
                }
                summary.chunks += 1
                summary.entries += chunk.count
                // A barrier waits for everything before it; everything after waits for it.
                let limit = chunk.isBarrier ? 1 : max(1, jobs)
                while inFlight >= limit || (chunk.isBarrier && inFlight > 0) {
                    try collect(await group.nextResult())
                }
                guard failure == nil else { break }
                inFlight += 1
                group.addTask { (chunk.index, try await sender.send(chunk)) }
                if chunk.isBarrier { try collect(await group.nextResult()) }
            }
            while inFlight > 0 { try collect(await group.nextResult()) }
            if let failure { throw failure }
        }
        progress?.finish()
        journal.remove()
        return summary
    }

    /// Size and modification time of the input, so a changed dump starts a new journal.
    static func fileStamp(_ path: String) -> String {
        let attributes = try? FileManager.default.attributesOfItem(atPath: path)
        let size = (attributes?[.size] as? NSNumber)?.int64Value ?? -1
        let date = (attributes?[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
        return "size=\(size) mtime=\(Int64(date * 1000))"
    }
}

/// Sends one chunk, splitting it when the database refuses it as too large.
struct ChunkSender: Sendable {
    let client: DatabaseClient
    let target: DatabaseURL

    struct Outcome: Sendable {
        var splits = 0
        /// Bytes of the PATCH bodies sent (split parts included).
        var bytes: Int64 = 0
    }

    func send(_ chunk: ImportChunk) async throws -> Outcome {
        var outcome = Outcome()
        do {
            outcome.bytes += Int64(chunk.body.count)
            try await client.patch(target, body: chunk.body)
        } catch let error as DatabaseRequestError where error.kind == .writeTooLarge {
            // Only a refused chunk is read back into its values, to be sent in parts.
            try await split(chunk.entries, error, &outcome, chunk: chunk)
        } catch let error as DatabaseRequestError {
            throw ImportJob.ChunkRefused(chunk: chunk.index, target: target, pointers: chunk.pointers, underlying: error)
        }
        return outcome
    }

    private func split(_ entries: [ImportEntry], _ error: DatabaseRequestError, _ outcome: inout Outcome, chunk: ImportChunk) async throws {
        do {
            try await send(entries, error, &outcome)
        } catch let error as DatabaseRequestError {
            throw ImportJob.ChunkRefused(chunk: chunk.index, target: target, pointers: chunk.pointers, underlying: error)
        }
    }

    /// Sends `entries`, which the database refused as too large together, in halves (a single
    /// object value as its members), as deep as needed.
    private func send(_ entries: [ImportEntry], _ refusal: DatabaseRequestError, _ outcome: inout Outcome) async throws {
        let parts: [[ImportEntry]]
        if entries.count > 1 {
            parts = [Array(entries[..<(entries.count / 2)]), Array(entries[(entries.count / 2)...])]
        } else if let first = entries.first, let members = Self.members(of: first), !members.isEmpty {
            parts = members.map { [$0] }
        } else {
            throw refusal
        }
        outcome.splits += 1
        for part in parts {
            do {
                let body = ImportChunk.body(part)
                outcome.bytes += Int64(body.count)
                try await client.patch(target, body: body)
            } catch let error as DatabaseRequestError where error.kind == .writeTooLarge {
                try await send(part, error, &outcome)
            }
        }
    }

    /// The members of an entry whose value is an object, as entries of their own.
    static func members(of entry: ImportEntry) -> [ImportEntry]? {
        let reader = JSONReader(bytes: entry.json)
        guard (try? reader.next()) == .beginObject else { return nil }
        var result: [ImportEntry] = []
        while (try? reader.next()) == .name {
            let key = reader.stringValue
            let sink = MemoryByteSink()
            let writer = JSONWriter(sink: sink)
            guard (try? reader.transfer(to: writer)) != nil, (try? writer.flush()) != nil else { return nil }
            result.append(ImportEntry(path: entry.path + [key], json: sink.bytes))
        }
        return result
    }
}
