import JSONStream

extension ConvertJob {
    /// What the merged output's bytes depend on besides the input: all shards of a run must agree.
    var shardOptions: String {
        let to = outputFormat
        let patterns = to == .ndjson && records.isEmpty ? ["/*"] : records.map(\.text)
        return "to=\(to.rawValue) canonical=\(writerOptions.sortKeys)"
            + (to == .ndjson ? " records=\(patterns.joined(separator: ","))" : "")
    }

    /// Runs shard `spec` of this conversion from the index at `indexPath`: reads only the shard's
    /// units (and the bytes between them, to check them), writes `output.part-I-of-N` and then its
    /// manifest. Joined in order by `MergeJob`, the parts are the bytes the unsharded run writes.
    public func runShard(_ spec: ShardSpec, indexPath: String, progress: ProgressMeter? = nil) throws -> ShardManifest {
        let to = outputFormat
        try checkShardable(to: to)
        let run = try ShardRun(spec, indexPath: indexPath, input: input, output: output, writerOptions: writerOptions)
        if to == .ndjson {
            let patterns = records.isEmpty ? ["/*"] : records.map(\.text)
            guard run.trailer.records == patterns else {
                run.abort()
                throw UsageError(
                    "\(indexPath) was made with "
                        + (run.trailer.records.isEmpty ? "no --records" : "--records \(run.trailer.records.joined(separator: " "))")
                        + ", but NDJSON output writes the records \(patterns.joined(separator: " ")): make the index with the same --records"
                )
            }
            guard !run.trailer.hasPieces else {
                run.abort()
                throw UsageError(
                    "\(indexPath) split values no record pattern reaches into pieces, and NDJSON output writes each such value as one record: "
                        + "make the index with a larger --unit-bytes or with --records naming records inside them")
            }
        }
        do {
            var records = 0
            while let entry = try run.nextUnit() {
                switch to {
                case .json:
                    try run.transferUnit(entry, progress: progress)
                case .ndjson:
                    try run.forEachValue(of: entry) { path in
                        try NDJSONWriter.writeLine(pointer: JSONPointer.string(path), to: run.writer) { try run.reader.transfer(to: $0) }
                        records += 1
                        progress?.recordDone()
                    }
                }
            }
            let part = try run.commit(tree: to == .json)
            progress?.finish()
            let manifest = run.manifest(command: "convert", options: shardOptions, written: part, records: records)
            try manifest.write(output: output)
            return manifest
        } catch {
            run.abort()
            progress?.finish()
            throw error
        }
    }

    /// Refuses what a shard cannot write so that the joined parts equal the unsharded output.
    private func checkShardable(to: DumpFormat) throws {
        try ShardRun.checkFiles(input: input, output: output)
        if inputFormat != .json {
            throw UsageError(
                "sharded runs read a JSON tree through its index; NDJSON input is converted unsharded (dumpkit convert without --index)")
        }
        if writerOptions.pretty {
            throw UsageError("--pretty cannot be sharded yet: run unsharded, or shard to compact JSON and re-format the merged file")
        }
        if writerOptions.sortKeys && to == .json {
            throw UsageError(
                "--canonical reorders members of objects that several shards write, so it cannot be sharded: run unsharded, "
                    + "or shard to compact JSON and run dumpkit convert --canonical on the merged file")
        }
        if duplicateKeys == .keepLast {
            throw UsageError(
                "--duplicate-keys keep-last reads the whole dump first, so it cannot be sharded: run unsharded (the index refuses duplicate names)"
            )
        }
    }
}
