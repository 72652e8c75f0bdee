import JSONStream

extension InlineBlobsJob {
    /// What the merged output depends on besides the input and the store: all shards must agree.
    var shardOptions: String {
        "store=\(store) match=\(options.match.map(\.text).joined(separator: ",")) ref-style=\(options.referenceStyle.rawValue)"
    }

    /// Runs shard `spec` of this rollback from the index at `indexPath`: inlines the references of
    /// the shard's units (reading their objects from the store, which it does not change), writes
    /// `output.part-I-of-N` and then its manifest with the counts; `MergeJob` joins the parts into
    /// the unsharded output and sums the counts.
    public func runShard(_ spec: ShardSpec, indexPath: String, progress: ProgressMeter? = nil) throws -> ShardManifest {
        let unsharded = "run dumpkit inline-blobs without --index"
        try ShardRun.checkFiles(input: input, output: output)
        if dryRun { throw UsageError("--dry-run cannot be sharded (nothing is written for merge to join): \(unsharded)") }
        if writerOptions.pretty {
            throw UsageError("--pretty cannot be sharded yet: \(unsharded), or shard to compact JSON and re-format the merged file")
        }
        if writerOptions.sortKeys {
            throw UsageError(
                "--canonical reorders members of objects that several shards write: \(unsharded), or run dumpkit convert --canonical on the merged file"
            )
        }
        let transformer = InlineBlobs(store: try openStore(store, false), options: options)
        let run = try ShardRun(spec, indexPath: indexPath, input: input, output: output, writerOptions: writerOptions)
        do {
            try run.transformUnits(transformer, patterns: options.match, concurrency: options.concurrency, progress: progress)
            let part = try run.commit(tree: true)
            progress?.finish()
            var manifest = run.manifest(command: "inline-blobs", options: shardOptions, written: part)
            let tally = transformer.tally
            manifest.counts = ["inlined": tally.inlined, "bytes": Int(tally.bytes), "foreign": tally.foreign]
            try manifest.write(output: output)
            return manifest
        } catch {
            run.abort()
            progress?.finish()
            throw error
        }
    }
}
