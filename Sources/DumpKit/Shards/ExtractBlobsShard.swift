import JSONStream

extension ExtractBlobsJob {
    /// What the merged output and store depend on besides the input: all shards of a run must agree.
    var shardOptions: String {
        "store=\(store) match=\(options.match.map(\.text).joined(separator: ",")) min-bytes=\(options.minimumBytes) "
            + "data-uris-only=\(options.dataURIsOnly) name=\(options.naming.text) ref-style=\(options.referenceStyle.rawValue) "
            + "bucket=\(options.bucket ?? "") replace=\(options.replace)"
    }

    /// Runs shard `spec` of this extraction from the index at `indexPath`: extracts the files of the
    /// shard's units into the store (objects written create-only, as in the unsharded run, so two
    /// shards naming one object with the same bytes both succeed and write it once), then writes
    /// `output.part-I-of-N`, `output.part-I-of-N.objects` (the shard's report and the objects it
    /// named, `ExtractionPart`) and last the manifest. `MergeJob` joins the parts into the unsharded
    /// output and counts the report over all shards.
    public func runShard(_ spec: ShardSpec, indexPath: String, progress: ProgressMeter? = nil) throws -> ShardManifest {
        try Self.check(options)
        try checkShardable()
        return try withStore { try runShard(spec, indexPath: indexPath, store: $0, progress: progress) }.0
    }

    private func runShard(_ spec: ShardSpec, indexPath: String, store: BlobStore, progress: ProgressMeter?) throws -> ShardManifest {
        let report = BlobExtractionReport(keepsObjects: true)
        let transformer = try ExtractBlobs(store: store, options: options, report: report, listsConflicts: true)
        let run = try ShardRun(spec, indexPath: indexPath, input: input, output: output, writerOptions: writerOptions)
        do {
            try run.transformUnits(transformer, patterns: options.match, concurrency: options.concurrency, progress: progress)
            let totals = report.snapshot
            if totals.conflicts > 0 {
                var conflicts = BlobConflictsError(store: store.description, count: totals.conflicts, names: totals.conflictNames)
                conflicts.sharded = true
                throw conflicts
            }
            // The objects the part names reach the disk before the part does.
            try store.sync()
            let part = try run.commit(tree: true)
            let objectsCRC32C = try ExtractionPart.write(report, to: ExtractionPart.path(output: output, shard: spec.index, of: spec.count))
            progress?.finish()
            var manifest = run.manifest(command: "extract-blobs", options: shardOptions, written: part)
            manifest.counts = ["extracted": totals.extracted.count]
            manifest.objectsCRC32C = objectsCRC32C
            try manifest.write(output: output)
            return manifest
        } catch {
            run.abort()
            progress?.finish()
            throw error
        }
    }

    /// Refuses what a shard cannot do so that the merged output, store and report are the unsharded
    /// run's, naming the option and the way out.
    private func checkShardable() throws {
        try ShardRun.checkFiles(input: input, output: output)
        let unsharded = "run dumpkit extract-blobs without --index"
        if dryRun { throw UsageError("--dry-run cannot be sharded (nothing is written for merge to join): \(unsharded)") }
        if reportPath != nil {
            throw UsageError(
                "--report is written by the merge of a sharded extraction, which counts every object once: "
                    + "pass --report FILE to dumpkit merge, not to the shards (or \(unsharded))")
        }
        if options.naming.parts.contains(.record) {
            throw UsageError(
                "name template '\(options.naming)' uses {record}, the subtree the unsharded reader happens to read whole, "
                    + "which a shard does not know: use {path} or pattern captures, or \(unsharded)")
        }
        if writerOptions.pretty {
            throw UsageError("--pretty cannot be sharded yet: \(unsharded), or shard to compact JSON and re-format the merged file")
        }
        if writerOptions.sortKeys {
            throw UsageError(
                "--canonical reorders members of objects that several shards write: \(unsharded), or run dumpkit convert --canonical on the merged file"
            )
        }
    }
}
