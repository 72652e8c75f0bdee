import ArgumentParser
import DumpKit
import Foundation
import JSONStream

/// `--index`, `--shard I/N` and `--shard-count`, for the commands that run as one shard of many.
struct ShardOptions: ParsableArguments {
    @Option(
        help:
            "Index of the dump, a file or an s3:// or gs:// object (made by dumpkit index; of the bucket for archive, dumpkit index --bucket): run as one shard, reading only its ranges, and write OUT.part-I-of-N and its manifest."
    )
    var index: String?

    @Option(
        help:
            "This run's shard, I/N (I from 0). Without it, I (and N where the runner gives it) come from JOB_COMPLETION_INDEX, AWS_BATCH_JOB_ARRAY_INDEX, CLOUD_RUN_TASK_INDEX/_COUNT or BATCH_TASK_INDEX/_COUNT."
    )
    var shard: String?

    @Option(
        name: .customLong("shard-count"), help: "The number of shards, N, for runners that give only the index (Kubernetes, AWS Batch).")
    var shardCount: Int?

    /// The shard this run is, or nil for an unsharded run. The environment is read only with
    /// `--index`, so a variable a runner sets never shards a run that did not ask for it.
    func spec(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> ShardSpec? {
        guard index != nil else {
            if shard != nil || shardCount != nil { throw UsageError("--shard and --shard-count need --index FILE (made by dumpkit index)") }
            return nil
        }
        guard let spec = try ShardSpec.resolve(flag: shard, count: shardCount, environment: environment) else {
            throw UsageError(
                "--index runs one shard: pass --shard I/N, or run under a job runner that sets JOB_COMPLETION_INDEX, "
                    + "AWS_BATCH_JOB_ARRAY_INDEX, CLOUD_RUN_TASK_INDEX or BATCH_TASK_INDEX")
        }
        return spec
    }
}

extension ShardOptions {
    /// Prints what a shard of a blob command wrote: with `--json`, its part and counts
    /// (docs/JSON-OUTPUT.md), else one line.
    func report(_ m: ShardManifest, input: String, output: String, json: Bool, common: CommonOptions) throws {
        let part = ShardManifest.partPath(output: output, shard: m.shard, of: m.shards)
        if json {
            try printJSON(
                .object([
                    "input": .string(input), "output": .string(output), "part": .string(part), "shard": .number(JSONNumber(m.shard)),
                    "shards": .number(JSONNumber(m.shards)), "units": .number(JSONNumber(m.units)),
                    "bytesIn": .number(JSONNumber(m.bytesIn)), "bytesOut": .number(JSONNumber(m.partBytes)),
                    "counts": .object(JSONObject(m.counts.keys.sorted().map { .init(key: $0, value: .number(JSONNumber(m.counts[$0]!))) })),
                ]))
        } else {
            common.note(
                "wrote \(part): \(ProgressMeter.format(bytes: m.partBytes)), \(counted(m.units, "unit"))"
                    + m.counts.keys.sorted().map { ", \($0) \(m.counts[$0]!)" }.joined() + "; join the parts with dumpkit merge \(output)")
        }
    }
}
