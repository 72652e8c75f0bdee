import ArgumentParser
import DumpKit
import Foundation

/// `--index`, `--shard I/N` and `--shard-count`, for the commands that run as one shard of many.
struct ShardOptions: ParsableArguments {
    @Option(
        help:
            "Index of the dump (made by dumpkit index): run as one shard, reading only its byte ranges, and write OUT.part-I-of-N and its manifest."
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
