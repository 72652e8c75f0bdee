import JSONStream

extension MigrateJob {
    /// Runs shard `spec` of this migration from the index at `indexPath`: each record of the units
    /// goes through the plans as in the unsharded run and is written in its place; other units are
    /// copied. Writes `output.part-I-of-N`, under `--on-error keep` the shard's rejects
    /// (`REJECTS.part-I-of-N`, each line after its sort key), and last the manifest.
    ///
    /// Only plans that keep every record where it is can be sharded: a `move` places records into
    /// objects another shard writes, and a `delete` (or `--on-error skip`, which drops a record)
    /// removes a member whose comma and name are in the structure around other shards' units.
    public func runShard(_ spec: ShardSpec, indexPath: String, plans loaded: [MigrationPlan]? = nil, progress: ProgressMeter? = nil) throws
        -> ShardManifest
    {
        let plans = try loaded ?? loadPlans()
        try checkShardable(plans)
        let runner = PlanRunner(plans: plans, onError: onError)
        let probes = Self.probes(plans, runner)
        let patterns = runner.patterns + probes
        let run = try ShardRun(spec, indexPath: indexPath, input: input, output: output, writerOptions: writerOptions)
        guard run.trailer.records == patterns.map(\.text) else {
            run.abort()
            throw UsageError(
                "\(indexPath) was made with "
                    + (run.trailer.records.isEmpty ? "no --records" : "--records \(run.trailer.records.joined(separator: " "))")
                    + ", but these plans read the records " + patterns.map(\.text).joined(separator: " ") + ": make the index with "
                    + patterns.map { "--records '\($0.text)'" }.joined(separator: " "))
        }
        let rejectsTarget = onError == .keep ? rejectsPath ?? output + ".rejects.ndjson" : nil
        let rejectsFile = try rejectsTarget.map {
            try OutputFile(path: ShardManifest.partPath(output: $0, shard: spec.index, of: spec.count))
        }
        do {
            let rejects = rejectsFile.map { RejectsWriter(file: $0, writesKeys: true) }
            let migrate = Migrate(runner: runner, probes: probes, rejects: rejects, concurrency: 1)
            var records = 0
            while let entry = try run.nextUnit() {
                guard entry.kind == .record else {
                    try run.transferUnit(entry, progress: nil)
                    continue
                }
                try run.beginUnit(entry)
                try run.forEachValue(of: entry) { path in
                    let captures = patterns.lazy.compactMap { $0.match(path) }.first ?? [:]
                    let results = try migrate.transform(Record(path: path, captures: captures, value: try run.reader.readValue()))
                    guard results.count == 1, results[0].path == path, let value = results[0].value else {
                        throw UsageError(
                            "\(JSONPointer.string(path)): the plans did not keep this record where it was, which a shard cannot write: run unsharded"
                        )
                    }
                    try run.writeValue(value, at: path, of: entry)
                    records += 1
                    progress?.recordDone()
                }
                try run.endUnit(entry)
            }
            let part = try run.commit(tree: true)
            try rejects?.finish()
            try rejectsFile?.commit()
            progress?.finish()
            let stats = runner.stats
            var manifest = run.manifest(command: "migrate", options: shardOptions(plans), written: part, records: stats.records)
            manifest.counts = [
                "matched": stats.matched, "changed": stats.changed, "rejects": stats.rejects, "alreadyMigrated": migrate.probed,
            ]
            manifest.rejects = rejectsTarget
            try manifest.write(output: output)
            return manifest
        } catch {
            run.abort()
            rejectsFile?.abort()
            progress?.finish()
            throw error
        }
    }

    /// The plans (by SHA-256) and options the merged output depends on: all shards of a run must agree.
    private func shardOptions(_ plans: [MigrationPlan]) -> String {
        "plans=\(plans.map { $0.sourceSHA256 ?? $0.name }.joined(separator: ",")) reverse=\(reverse) on-error=\(onError.rawValue)"
    }

    /// Refuses what a shard cannot do so that the joined parts equal the unsharded output, naming
    /// the step or option and the way out.
    private func checkShardable(_ plans: [MigrationPlan]) throws {
        try ShardRun.checkFiles(input: input, output: output)
        let unsharded = "run the migration unsharded (dumpkit migrate without --index)"
        for plan in plans {
            for step in plan.steps {
                if let op = step.operations.first(where: { $0 is MoveOperation || $0 is DeleteOperation }) {
                    let why =
                        op is MoveOperation
                        ? "moves records into objects that other shards write"
                        : "deletes records, whose names and commas are in the structure around other shards' records"
                    throw UsageError(
                        "\(plan.sourceFile): \(step.label): '\(type(of: op).name)' \(why), so the plan cannot be sharded: \(unsharded)")
                }
                if step.extractBlobs != nil {
                    throw UsageError("\(plan.sourceFile): \(step.label): extract-blobs steps cannot be sharded yet: \(unsharded)")
                }
            }
        }
        if onError == .skip {
            throw UsageError(
                "--on-error skip drops records, whose names and commas are in the structure around other shards' records: use --on-error keep, or \(unsharded)"
            )
        }
        if dryRun { throw UsageError("--dry-run cannot be sharded: \(unsharded)") }
        if reportPath != nil {
            throw UsageError(
                "--report cannot be sharded yet (merge sums the counts; the report's digests and examples need the whole run): \(unsharded)"
            )
        }
        if writerOptions.pretty {
            throw UsageError("--pretty cannot be sharded yet: \(unsharded), or shard to compact JSON and re-format the merged file")
        }
        if writerOptions.sortKeys {
            throw UsageError(
                "--canonical reorders members of objects that several shards write: \(unsharded), or run dumpkit convert --canonical on the merged file"
            )
        }
        if duplicateKeys == .keepLast { throw UsageError("--duplicate-keys keep-last reads the whole dump first: \(unsharded)") }
    }
}
