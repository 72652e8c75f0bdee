/// Which shard of how many a run is: from `--shard I/N`, or from the job runner's environment
/// (Kubernetes Indexed Jobs, AWS Batch array jobs, Cloud Run jobs, Google Cloud Batch), so the same
/// command line serves every task of an array.
public struct ShardSpec: Sendable, Equatable, CustomStringConvertible {
    public let index: Int
    public let count: Int

    public init(index: Int, count: Int) throws {
        guard count >= 1 else { throw UsageError("the shard count must be at least 1 (got \(count))") }
        guard index >= 0 && index < count else {
            throw UsageError("shard \(index) is not in 0..<\(count): shards are numbered from 0 to N-1")
        }
        self.index = index
        self.count = count
    }

    public var description: String { "\(index)/\(count)" }

    /// The runners' variables: an index, and the count where the runner gives it.
    static let runnerVariables: [(index: String, count: String?)] = [
        ("JOB_COMPLETION_INDEX", nil),
        ("AWS_BATCH_JOB_ARRAY_INDEX", nil),
        ("CLOUD_RUN_TASK_INDEX", "CLOUD_RUN_TASK_COUNT"),
        ("BATCH_TASK_INDEX", "BATCH_TASK_COUNT"),
    ]

    /// The shard a run is: `flag` (`I/N`) wins; else the first runner variable that is set, with the
    /// count from the runner or from `count` (`--shard-count`). Nil when neither names a shard.
    public static func resolve(flag: String?, count: Int?, environment: [String: String]) throws -> ShardSpec? {
        if let flag {
            let parts = flag.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == 2, let i = Int(parts[0]), let n = Int(parts[1]) else {
                throw UsageError("--shard takes I/N, the shard's index from 0 and the number of shards (e.g. 0/8); got '\(flag)'")
            }
            if let count, count != n { throw UsageError("--shard \(flag) and --shard-count \(count) disagree; give one of them") }
            return try ShardSpec(index: i, count: n)
        }
        for (indexName, countName) in runnerVariables {
            guard let text = environment[indexName] else { continue }
            guard let i = Int(text) else { throw UsageError("\(indexName)='\(text)' is not a shard index (a number from 0)") }
            if let count { return try ShardSpec(index: i, count: count) }
            guard let countName else {
                throw UsageError("\(indexName) gives the shard's index but not the number of shards: pass --shard-count N (or --shard I/N)")
            }
            guard let countText = environment[countName] else {
                throw UsageError("\(indexName) is set but \(countName) is not: set it or pass --shard-count N (or --shard I/N)")
            }
            guard let n = Int(countText) else { throw UsageError("\(countName)='\(countText)' is not a number of shards") }
            return try ShardSpec(index: i, count: n)
        }
        if let count {
            throw UsageError(
                "--shard-count \(count) without a shard index: pass --shard I/N, or run under a job runner that sets "
                    + runnerVariables.map(\.index).joined(separator: ", "))
        }
        return nil
    }
}
