import Crypto
import Foundation
import JSONStream
import Synchronization

/// `dumpkit migrate`: runs a chain of plans over a dump in one streaming pass, with a dry run, a
/// report, rejects and the reverse direction.
public struct MigrateJob {
    public var input: String
    public var output: String
    public var planPaths: [String]
    public var onError: OnErrorPolicy = .fail
    /// Where rejected values go (NDJSON); defaults to `<output>.rejects.ndjson` under skip/keep.
    public var rejectsPath: String?
    public var reportPath: String?
    /// Computes the input's and output's SHA-256 for `report(_:)` without a `reportPath` too.
    public var computesDigests = false
    public var dryRun = false
    public var reverse = false
    public var writerOptions: JSONWriter.Options = .compact
    public var compressionLevel: Int?
    /// A `.zst` output in zstd's seekable format, which sharded runs can read from any offset.
    public var seekableZstd = false
    public var threads: Int?
    /// What to do with a name twice in one object of the input.
    public var duplicateKeys: DuplicateKeyPolicy = .refuse
    /// Records migrated at once, on worker threads (1: on the reading thread, the default: on the
    /// todolist plan two threads took the same wall time and 40% more CPU, since building and
    /// writing each record's value costs as much as migrating it).
    public var jobs = 1
    /// The blob store the plans' `extract-blobs` steps write to (a directory); needed when they have any.
    public var blobStore: String?
    /// Opens the blob store (`DirectoryBlobStore.openDirectory` unless the caller opens buckets too).
    public var openStore: BlobStoreOpener = DirectoryBlobStore.openDirectory
    /// The bucket of download URLs, for `extract-blobs` steps with `ref-style: salada-file`.
    public var bucket: String?
    /// Whether `extract-blobs` steps replace objects the store holds with other bytes (`--replace`);
    /// without it the first such object stops the run.
    public var replaceBlobs = false

    public init(input: String, output: String, planPaths: [String]) {
        self.input = input
        self.output = output
        self.planPaths = planPaths
    }

    /// What a run did.
    public struct Summary: Sendable {
        public var plans: [MigrationPlan]
        public var stats: MigrationStats
        /// Moved records set aside because they could not be placed (`MoveConflict`), under skip and
        /// keep (and counted by a dry run).
        public var moveConflicts: Int
        /// The first rejected values (in the rejects file's order), as people read them.
        public var rejectExamples: [String] = []
        /// Values that would stop a real run under `--on-error fail` (a dry run counts them all).
        public var failures: Int { stats.rejects + moveConflicts }
        public var warnings: [String]
        /// Records read at the plans' output patterns (already migrated data) or only for extract-blobs steps.
        public var alreadyMigrated: Int
        /// Digests of the input and output, computed only for a report.
        public var inputSHA256: String?
        public var outputSHA256: String?
        public var rejectsPath: String?
        /// What the `extract-blobs` steps found and wrote; `nil` when the plans have none.
        public var blobs: BlobExtractionReport?
        /// Temporary files of an interrupted earlier run removed from the blob store.
        public var staleBlobFilesRemoved = 0
        /// Members left out under `duplicateKeys: .keepLast` (a later one had the same name).
        public var duplicatesDropped = 0
        public var seconds: Double

        /// Whether the run changed nothing because the dump is already in the target shape.
        public var nothingToDo: Bool {
            stats.changed == 0 && stats.rejects == 0 && moveConflicts == 0 && (blobs?.snapshot.extracted.count ?? 0) == 0
        }
    }

    /// Loads the plans (reversed and in reverse order for `reverse`).
    public func loadPlans() throws -> [MigrationPlan] {
        guard !planPaths.isEmpty else { throw UsageError("give at least one --plan") }
        if input == "-" && planPaths.contains("-") { throw UsageError("the dump and a plan cannot both come from standard input") }
        let plans = try planPaths.map { try MigrationPlan.load(path: $0) }
        return reverse ? try plans.reversed().map { try $0.reversed() } : plans
    }

    /// Runs the migration with `plans` as `loadPlans()` gives them (loaded now when nil, so a plan
    /// from a FIFO or standard input is read once); outputs (dump, rejects, report) appear only if it
    /// succeeds.
    public func run(plans loaded: [MigrationPlan]? = nil, progress: ProgressMeter? = nil) throws -> Summary {
        let started = Date()
        let plans = try loaded ?? loadPlans()
        // A dry run goes through the whole dump: values that would stop a real run are counted.
        let runner = PlanRunner(plans: plans, onError: dryRun && onError == .fail ? .keep : onError)
        try Self.checkBlobExtractions(plans)
        if !runner.blobExtractions.isEmpty && blobStore == nil && !dryRun {
            throw UsageError("the plans have extract-blobs steps: give --blobs DIR, the blob store their images go to")
        }
        if replaceBlobs && runner.blobExtractions.isEmpty {
            throw UsageError("--replace is for the plans' extract-blobs steps, and they have none")
        }
        let extractionOptions = try runner.blobExtractions.map { extraction in
            var options = try ExtractStepBlobs.options(extraction, bucket: bucket)
            options.replace = replaceBlobs
            return options
        }
        var rejectsPath = self.rejectsPath
        if rejectsPath == nil && onError != .fail && !dryRun {
            guard output != "-" else {
                throw UsageError("--on-error \(onError.rawValue) writes rejected values to a file: give --rejects FILE")
            }
            rejectsPath = output + ".rejects.ndjson"
        }

        let probes = Self.probes(plans, runner)
        let earlier = duplicateKeys == .keepLast ? try ConvertJob.earlierDuplicates(in: input) : nil
        let inFile = try InputFile(path: input)
        progress?.attach(inFile)
        // Hashing is only for the report.
        let hashing = reportPath != nil || computesDigests
        let hashedInput = hashing ? HashingByteSource(inFile) : nil
        // A folder store this run creates is removed again when the run fails before writing into it.
        var status = stat()
        let storeExisted = blobStore.map { lstat($0, &status) == 0 } ?? true
        let controlExisted = blobStore.map { lstat($0 + "/" + DirectoryBlobStore.controlDirectory, &status) == 0 } ?? true
        let store = dryRun || runner.blobExtractions.isEmpty ? nil : try blobStore.map { try openStore($0, true) }
        defer { (store as? DirectoryBlobStore)?.close() }
        let outFile = dryRun ? nil : try OutputFile(path: output, level: compressionLevel, threads: threads, seekableZstd: seekableZstd)
        let rejectsFile = try rejectsPath.map { try OutputFile(path: $0) }
        let blobs = runner.blobExtractions.isEmpty ? nil : BlobExtractionReport()
        do {
            let sink: JSONByteSink = outFile.map { hashing ? HashingByteSink($0) : $0 as JSONByteSink } ?? DiscardingByteSink()
            let read = hashedInput ?? inFile as JSONByteSource
            let source = earlier.map { MemberSkippingSource(read, skipping: $0.ranges) } ?? read
            let reader = DumpReader(source: source, patterns: runner.patterns + probes, sourceName: inFile.name)
            let duplicates = DuplicateKeyError.Watch(reader.reader, file: inFile.name)
            let writer = try DumpWriter(writer: JSONWriter(sink: sink, options: writerOptions), moveTargets: Self.moveTargets(plans))
            let rejects = rejectsFile.map { RejectsWriter(file: $0) } ?? (dryRun ? RejectsWriter(file: nil) : nil)
            let conflicts = Atomic(0)
            if let rejects {
                // Under skip and keep, a moved record that cannot be placed is set aside whole.
                writer.onMoveConflict = { conflict in
                    conflicts.add(1, ordering: .relaxed)
                    try rejects.write([Self.reject(conflict, plans)], readAt: conflict.source)
                }
            }
            let migrate = Migrate(runner: runner, probes: probes, rejects: rejects, concurrency: max(1, jobs))
            let extractions = try zip(runner.blobExtractions, extractionOptions).map {
                try ExtractStepBlobs($0, options: $1, store: store, report: blobs!)
            }
            let pipeline = Pipeline(transformers: [migrate] + extractions)
            // Values are built on the worker threads; the reading thread only copies them. Captures
            // are made where a step uses them (`RecordEdit`, `ExtractStepBlobs`), from its own pattern.
            reader.readsRecordValues = false
            reader.readsRecordCaptures = false
            pipeline.recordValues = reader.reader
            pipeline.onRecord = { progress?.recordDone() }
            try pipeline.run(reader: reader, writer: writer)
            try duplicates.check()
            try rejects?.finish()
            let stats = runner.stats
            if stats.records == 0 && migrate.probed == 0 {
                let expected = runner.patterns.map(\.text).joined(separator: ", ")
                throw MigrationMismatch(
                    message:
                        "\(inFile.name) has no data at the plans' patterns (\(expected)): it does not look like a '\(plans.first?.from ?? "")' dump; nothing was written"
                )
            }
            // The objects the extract-blobs steps wrote reach the disk before the output that names
            // them; the rejects go first: a crash between the renames can leave new rejects beside
            // the old output, never a new output beside old rejects.
            try store?.sync()
            try rejectsFile?.prepare()
            try outFile?.prepare()
            try rejectsFile?.publish()
            try outFile?.publish()
            progress?.finish()
            var summary = Summary(
                plans: plans, stats: stats, moveConflicts: conflicts.load(ordering: .relaxed), warnings: runner.warnings,
                alreadyMigrated: migrate.probed,
                inputSHA256: hashedInput?.hex, outputSHA256: (sink as? HashingByteSink)?.hex,
                rejectsPath: stats.rejects + conflicts.load(ordering: .relaxed) > 0 ? rejectsPath : nil, blobs: blobs,
                seconds: Date().timeIntervalSince(started))
            summary.rejectExamples = rejects?.examples ?? []
            summary.staleBlobFilesRemoved = (store as? DirectoryBlobStore)?.staleTemporaryFilesRemoved ?? 0
            summary.duplicatesDropped = earlier?.members ?? 0
            if let reportPath {
                try OutputFile.writeJSON(report(summary), to: reportPath)
            }
            summary.seconds = Date().timeIntervalSince(started)
            return summary
        } catch {
            outFile?.abort()
            rejectsFile?.abort()
            progress?.finish()
            if let store = store as? DirectoryBlobStore, let blobStore, !controlExisted {
                store.close()
                DirectoryBlobStore.removeUnused(blobStore, directory: !storeExisted)
            }
            throw error
        }
    }

    /// Records at the last plan's output patterns are read too, to tell "already migrated" from
    /// "not this kind of dump", and those the extract-blobs steps match; the runner passes them
    /// through unchanged.
    static func probes(_ plans: [MigrationPlan], _ runner: PlanRunner) -> [PathPattern] {
        let outputs = plans.last.map { $0.steps.flatMap(\.outputPatterns) } ?? []
        // An output pattern above a step's pattern is left out: the reader would hand over its
        // records whole, and the step would never see the records inside them.
        let blobPatterns = runner.blobExtractions.flatMap(\.step.patterns)
        var probes: [PathPattern] = []
        for p in outputs.filter({ !Self.shadows($0, runner.patterns) }) + blobPatterns
        where !runner.patterns.contains(p) && !probes.contains(p) {
            probes.append(p)
        }
        return probes
    }

    /// Whether a path `probe` matches can be above a path one of `patterns` matches.
    static func shadows(_ probe: PathPattern, _ patterns: [PathPattern]) -> Bool {
        patterns.contains { p in
            p.depth > probe.depth
                && zip(probe.segments, p.segments).allSatisfy { a, b in
                    if case .literal(let x) = a, case .literal(let y) = b { return x == y }
                    return true
                }
        }
    }

    /// The paths records may be moved to: the targets of every `move` (a plan without one writes in
    /// one pass, keeping every key where it was).
    static func moveTargets(_ plans: [MigrationPlan]) -> [PathPattern] {
        var targets: [PathPattern] = []
        for plan in plans {
            for step in plan.steps {
                for case let move as MoveOperation in step.operations where !targets.contains(move.target) { targets.append(move.target) }
            }
        }
        return targets
    }

    /// A moved record that could not be placed, as a reject of the first step that moves records
    /// from where it was read.
    static func reject(_ conflict: MoveConflict, _ plans: [MigrationPlan]) -> Reject {
        for plan in plans {
            for step in plan.steps
            where step.operations.contains(where: { $0 is MoveOperation })
                && step.patterns.contains(where: { $0.match(conflict.source) != nil })
            {
                return Reject(
                    pointer: JSONPointer.string(conflict.source), outputPointer: JSONPointer.string(conflict.target), value: conflict.value,
                    plan: plan.name, step: step.index, stepName: step.name,
                    operation: MoveOperation.name, reason: conflict.description)
            }
        }
        let plan = plans.last
        return Reject(
            pointer: JSONPointer.string(conflict.source), outputPointer: JSONPointer.string(conflict.target), value: conflict.value,
            plan: plan?.name ?? "", step: 0, stepName: nil,
            operation: MoveOperation.name, reason: conflict.description)
    }

    /// Refuses extract-blobs steps the run would silently not apply: in a plan before the last one of a
    /// chain (they run after the whole chain, on its output), or at a pattern inside or around one whose
    /// records a step reads or moves (the reader hands over whole records at the shallower one).
    static func checkBlobExtractions(_ plans: [MigrationPlan]) throws {
        let others = plans.flatMap { $0.steps.filter { $0.extractBlobs == nil }.flatMap { $0.patterns + $0.outputPatterns } }
        for (index, plan) in plans.enumerated() {
            for step in plan.steps where step.extractBlobs != nil {
                if index < plans.count - 1 {
                    throw UsageError(
                        "\(plan.sourceFile): \(step.label): extract-blobs steps run after the whole chain of plans; put them in the last plan (here '\(plans.last!.name)')"
                    )
                }
                for pattern in step.patterns {
                    if let other = others.first(where: { PlanLinter.isInside(pattern, $0) || PlanLinter.isInside($0, pattern) }) {
                        throw UsageError(
                            "\(plan.sourceFile): \(step.label): extract-blobs at \(pattern) nests with \(other), where another step reads or moves whole records; match the same records (\(other)) and name the field with 'fields'"
                        )
                    }
                }
            }
        }
    }

    /// What `--report` writes: the plans with their sha256, the input's and output's sha256 (when
    /// computed), counts per step and operation, rejects, blobs, warnings, duration.
    public func report(_ s: Summary) -> JSONValue {
        var o = JSONObject()
        o["tool"] = .string("dumpkit \(DumpKitVersion.string)")
        // Plans run in reverse order under --reverse.
        o["plans"] = .array(
            zip(s.plans, reverse ? Array(planPaths.reversed()) : planPaths).map { plan, file in
                .object([
                    "name": .string(plan.name), "from": .string(plan.from), "to": .string(plan.to), "file": .string(file),
                    "sha256": .string(plan.sourceSHA256 ?? ""),
                ])
            })
        o["reverse"] = .bool(reverse)
        o["onError"] = .string(onError.rawValue)
        o["input"] = .object(["path": .string(input), "sha256": .string(s.inputSHA256 ?? "")])
        if let out = s.outputSHA256 { o["output"] = .object(["path": .string(output), "sha256": .string(out)]) }
        o["dryRun"] = .bool(dryRun)
        o["alreadyMigrated"] = .number(JSONNumber(s.alreadyMigrated))
        o["duplicateKeys"] = .string(duplicateKeys.rawValue)
        o["duplicatesDropped"] = .number(JSONNumber(s.duplicatesDropped))
        o["stats"] = s.stats.jsonValue
        if let r = s.rejectsPath { o["rejects"] = .string(r) }
        if let blobs = s.blobs { o["blobs"] = blobs.jsonValue }
        o["warnings"] = .array(s.warnings.map { .string($0) })
        o["seconds"] = .number(JSONNumber(text: String(format: "%.3f", s.seconds)))
        return .object(o)
    }
}

/// The `migrate` transformer: applies the plan runner to each record and sets rejects aside.
struct Migrate: RecordTransformer {
    let runner: PlanRunner
    let probes: [PathPattern]
    let rejects: RejectsWriter?
    let concurrency: Int
    private let probeCount = Counter()

    init(runner: PlanRunner, probes: [PathPattern], rejects: RejectsWriter?, concurrency: Int) {
        self.runner = runner
        self.probes = probes
        self.rejects = rejects
        self.concurrency = concurrency
    }

    var name: String { "migrate" }
    var maxConcurrency: Int { concurrency }
    /// Records read at the output patterns only.
    var probed: Int { probeCount.value }

    func transform(_ record: Record) throws -> [Record] {
        if !probes.isEmpty && !runner.patterns.contains(where: { $0.matches(record.path) }) {
            probeCount.increment()
            return [record]
        }
        let result = try runner.apply(record)
        if !result.rejects.isEmpty { try rejects?.write(result.rejects, readAt: record.path) }
        return result.records
    }
}

/// A count that a value type's copies share, from any thread.
final class Counter: Sendable {
    private let n = Atomic(0)
    var value: Int { n.load(ordering: .relaxed) }
    func increment() { n.add(1, ordering: .relaxed) }
}

/// Writes rejected values as NDJSON, one `Reject.jsonValue` per line, in the order of the paths
/// their records were read at (the database's key order; one record's rejects in the order they
/// were made), whichever thread made them: they gather in an `ExternalSorter` until `finish()`.
/// Without a file (a dry run) it only keeps the first few as examples.
final class RejectsWriter: @unchecked Sendable {
    private let lock = NSLock()
    private let file: JSONByteSink?
    private let sorter = ExternalSorter()
    /// The first rejects, as people read them; set by `finish()`.
    private(set) var examples: [String] = []
    static let exampleCount = 5
    /// Whether each line starts with its sort key in hex and a space: a shard's rejects, which
    /// `merge` interleaves with the other shards' by those keys.
    private let writesKeys: Bool

    init(file: JSONByteSink?, writesKeys: Bool = false) {
        self.file = file
        self.writesKeys = writesKeys
    }

    /// Adds the rejects of the record read at `path`.
    func write(_ rejects: [Reject], readAt path: [String]) throws {
        var entries: [(key: [UInt8], payload: [UInt8])] = []
        let pathKey = PathKey.of(path) + PathKey.separator
        for (index, r) in rejects.enumerated() {
            var key = pathKey
            withUnsafeBytes(of: UInt64(index).bigEndian) { key.append(contentsOf: $0) }
            // The payload: the line's length (u32), the line, the description.
            let sink = MemoryByteSink()
            let writer = JSONWriter(sink: sink)
            try writer.value(r.jsonValue)
            try writer.raw("\n")
            try writer.flush()
            var payload: [UInt8] = []
            withUnsafeBytes(of: UInt32(sink.bytes.count).littleEndian) { payload.append(contentsOf: $0) }
            payload += sink.bytes
            payload += Array(r.description.utf8)
            entries.append((key, payload))
        }
        try lock.withLock {
            for e in entries { try sorter.add(key: e.key, payload: e.payload) }
        }
    }

    /// Writes the rejects to the file, in order.
    func finish() throws {
        let sorted = try sorter.sorted()
        var buffer: [UInt8] = []
        while try sorted.next() {
            let payload = sorted.payload
            let n = payload.withUnsafeBytes { Int(UInt32(littleEndian: $0.loadUnaligned(as: UInt32.self))) }
            if examples.count < Self.exampleCount { examples.append(String(decoding: payload[(4 + n)...], as: UTF8.self)) }
            guard file != nil else { continue }
            if writesKeys {
                buffer += Array(Hex.lowercase(sorted.key).utf8)
                buffer.append(UInt8(ascii: " "))
            }
            buffer += payload[4..<(4 + n)]
            if buffer.count >= 1 << 20 {
                try buffer.withUnsafeBytes { try file!.write($0) }
                buffer.removeAll(keepingCapacity: true)
            }
        }
        try buffer.withUnsafeBytes { try file?.write($0) }
    }
}

/// The dump holds no data the plans apply to.
public struct MigrationMismatch: Error, CustomStringConvertible, DataError {
    public let message: String
    public var description: String { message }
}

extension MigrationError: DataError {}
