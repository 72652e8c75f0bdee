import JSONStream

extension ValidateJob {
    /// Runs shard `spec` of this validation from the index at `indexPath`: reads the shard's whole
    /// range as the dump reads there (`ShardUnitSource` as one document: same paths and depths, and
    /// lines and columns shifted to the dump's), checks limits and schemas as the unsharded run does, and writes its findings in
    /// order to `output.part-I-of-N` (`FindingsPart`), then the manifest. `merge` gives the
    /// unsharded report: it decides the ends of containers several shards read (their names are
    /// added up) and `schema:unmatched` (a pattern may match in another shard only). With `blobs`,
    /// the shard also runs the same shard of a `check-blobs` into `output.blobs` (before its own
    /// manifest), whose findings `merge` adds after the others, as the unsharded run adds them.
    public func runShard(_ spec: ShardSpec, indexPath: String, output: String, progress: ProgressMeter? = nil) throws -> ShardManifest {
        try checkShardable(output: output)
        let run = try ShardRun(spec, indexPath: indexPath, input: input, output: output, writerOptions: .init(), wholeRange: true)
        let patterns = schemas.map(\.pattern)
        guard schemas.isEmpty || Set(run.trailer.records) == Set(patterns.map(\.text)) else {
            run.abort()
            throw UsageError(
                "\(indexPath) was made with "
                    + (run.trailer.records.isEmpty ? "no --records" : "--records \(run.trailer.records.joined(separator: " "))")
                    + ", but each record a schema checks must be one unit of one shard: make the index with "
                    + Set(patterns.map(\.text)).sorted().map { "--records '\($0)'" }.joined(separator: " "))
        }
        do {
            let source = run.source
            let part = try FindingsPart.Writer(
                writer: run.writer, source: input,
                checkedRules: Self.limitRules + schemas.map { "schema:\($0.file)" } + (blobs.map { Self.blobRules(style: $0.style) } ?? []),
                maxFindings: maxFindings, lineShift: source.lineShift, firstLineColumnShift: source.firstLineColumnShift)
            let span = ShardLimits(source: source, patterns: patterns)
            let reader = DumpReader(source: source, patterns: patterns, sourceName: input)
            reader.readsRecordValues = false
            reader.readsRecordCaptures = false
            reader.reader.tokenObserver = span.observe
            let discard = DiscardingPassThrough()
            let checker = RecordSchemaChecker(schemas: schemas) { part.add($0) }
            defer { checker.finish() }
            var records = 0
            if !source.isEmpty {
                while let record = try reader.next(passThrough: discard) {
                    _ = try reader.reader.peek()
                    guard reader.reader.offset >= source.rangeStart else {
                        // The stand-in for the unit before the shard's bytes.
                        try reader.reader.skipValue()
                        continue
                    }
                    try reader.reader.readValue(into: checker.nextTape())
                    records += 1
                    progress?.recordDone()
                    checker.submit(path: record.path, findingsBefore: &span.found.findings)
                }
            }
            checker.finish()
            for f in span.found.findings { part.add(f) }
            try part.finish(
                open: span.open ?? [], applied: checker.applied,
                unmatched: allowUnmatched ? [] : schemas.map(Self.unmatchedFinding), unknownKeywords: Self.unknownKeywordFindings(schemas))
            let written = try run.commit(tree: false)
            progress?.finish()
            if let blobs {
                var check = CheckBlobsJob(input: input, store: blobs.store)
                check.openStore = blobs.openStore
                check.referenceStyle = blobs.style
                check.match = blobs.match
                _ = try check.runShard(spec, indexPath: indexPath, output: Self.blobsOutput(output))
            }
            var manifest = run.manifest(
                command: "validate", options: shardOptions, written: written, units: source.unitsRead, records: records)
            manifest.counts = ["findings": part.count]
            try manifest.write(output: output)
            return manifest
        } catch {
            run.abort()
            progress?.finish()
            throw error
        }
    }

    /// What the merged report depends on besides the input: all shards of a run must agree.
    private var shardOptions: String {
        "schemas=\(schemas.map { "\($0.pattern.text)=\($0.file)" }.joined(separator: ",")) allow-unmatched=\(allowUnmatched) "
            + "max-findings=\(maxFindings) source=\(input)"
            + (blobs.map { " blobs=\($0.store) style=\($0.style.rawValue) match=\($0.match.map(\.text).joined(separator: ","))" } ?? "")
    }

    /// Where a sharded `validate --blobs` keeps the parts of its blob check: `OUT.blobs`.
    static func blobsOutput(_ output: String) -> String { output + ".blobs" }

    /// Refuses what a shard cannot check as the unsharded run does.
    private func checkShardable(output: String) throws {
        try ShardRun.checkFiles(input: input, output: output)
        if rules != nil {
            throw UsageError(
                "--rules cannot be sharded: a rule may read any part of the dump through root, data.parent() or newData, "
                    + "which other shards hold; validate with --rules unsharded (dumpkit validate without --index), "
                    + "or shard the limits and schemas and run the rules separately")
        }
    }
}

/// The limit checks of a validate shard: only findings of the shard's own bytes count (not of the
/// synthetic start and end `ShardUnitSource` serves around them), and containers the shard read
/// the end of are reported with their names for `merge` to add up. Called for every token, it
/// keeps its state in immutable references (a closure over local variables paid for a checked
/// access to each, and optional references for a retain, a third of a shard's time).
private final class ShardLimits {
    /// The findings since the last record, in order, and whether the token seen is the shard's.
    final class Found {
        var active = false
        var findings: [Finding] = []
    }

    let found = Found()
    private let source: ShardUnitSource
    private let limits: DatabaseLimitsChecker
    private var started = false
    /// The containers open where the shard's bytes end.
    private(set) var open: [DatabaseLimitsChecker.ContainerState]?

    init(source: ShardUnitSource, patterns: [PathPattern]) {
        self.source = source
        let found = found
        limits = DatabaseLimitsChecker(patterns: patterns) { if found.active { found.findings.append($0) } }
    }

    func observe(_ token: JSONToken, _ r: JSONReader) {
        let at = r.offset
        if !started && at >= source.rangeStart {
            started = true
            let found = found
            limits.startSpanning { state, r in
                if found.active { found.findings.append(FindingsPart.containerEnd(state, pointer: r.pointer, location: r.location)) }
            }
        }
        if open == nil && at >= source.rangeEnd { open = limits.openContainers }
        found.active = at >= source.rangeStart && at < source.rangeEnd
        limits.observe(token, r)
    }
}
