import ArchiveKit
import ArgumentParser
import DumpKit
import Foundation
import JSONStream
import ObjectStores

/// Options of the commands that write archives (`archive`, `backup`).
struct ArchiveOptions: ParsableArguments {
    @Option(help: "Archive format: tar or zip (default: from the output's name, else tar).")
    var format: ArchiveFormat?

    @Option(
        help:
            "Compression: zstd, gzip, xz, bzip2 or none; zip takes gzip (deflate) or none (default: from the output's name, else zstd for tar, deflate for zip)."
    )
    var compression: CompressionFilter?

    @Option(help: "Compression level (zstd 1-22 and negative fast levels, gzip/xz/zip 0-9).")
    var level: Int?

    @Option(
        help:
            "Hashing and compression threads (default: the number of cores); from a bucket (s3://, gs://), objects read at once (default: 32; compression then takes at most the cores)."
    )
    var jobs: Int?

    @Option(name: .customLong("threads"), help: .hidden)
    var threads: Int?

    @Option(help: "Take only objects whose name matches this glob (repeatable; * also matches /).")
    var include: [String] = []

    @Option(help: "Leave out objects whose name matches this glob (repeatable).")
    var exclude: [String] = []

    @Flag(name: .customLong("dry-run"), help: "List what would be archived, with sizes; read no data and write nothing.")
    var dryRun = false

    @OptionGroup var json: JSONSummaryOption
    @OptionGroup var stores: StoreOptions

    /// Objects read from a bucket at once when `--jobs` does not say.
    static let bucketReads = 32

    /// Copies the options into `job`, with the creation time from SOURCE_DATE_EPOCH. `bucket` is the
    /// bucket location, if any: from an `s3://` or `gs://` bucket, `--jobs` counts the objects read at
    /// once, and the hashing and compression threads are at most the cores.
    func configure(_ job: inout ArchiveJob, bucket: String?) throws {
        job.format = format
        job.compression = compression
        job.level = level
        let jobs = try jobsGiven(jobs, alias: threads)
        job.threads = jobs
        if let bucket, try ObjectStoreURL(bucket) != nil {
            let cores = ProcessInfo.processInfo.activeProcessorCount
            job.threads = min(jobs ?? cores, cores)
            job.openBucket = stores.objectStores.archiveSourceOpener(jobs: jobs ?? Self.bucketReads)
        }
        job.filter = PathFilter(include: include, exclude: exclude)
        job.created = try ArchiveJob.sourceDateEpoch(in: ProcessInfo.processInfo.environment)
        job.dryRun = dryRun
        if level != nil && (try? job.resolvedFormat().compression) == CompressionFilter.none {
            warn("--level has no effect: the archive is not compressed")
        }
    }

    /// Refuses `--json` with an archive written to standard output.
    func check(output: String) throws {
        if !dryRun { try json.check(output: output) }
    }

    /// Reports what `job` wrote, or would write: a JSON object with `--json`, else lines for people
    /// (a dry run's list on standard output, the summary on standard error); then fails with exit
    /// code 1 for `--include` patterns that matched nothing.
    func report(_ summary: ArchiveJob.Summary, output: String, noun: String, common: CommonOptions) throws {
        if json.json {
            var o: JSONObject = [
                "output": .string(output), "dryRun": .bool(dryRun), "format": .string(summary.format.rawValue),
                "compression": .string(summary.compression.rawValue), "objects": .number(JSONNumber(summary.objects)),
                "bytes": .number(JSONNumber(summary.bytes)), "notes": .array(summary.notes.map { .string($0) }),
                "unmatchedIncludes": .array((summary.unmatchedIncludes?.patterns ?? []).map { .string($0) }),
            ]
            if let part = summary.part {
                o["part"] = .string(ShardManifest.partPath(output: output, shard: part.shard, of: part.shards))
                o["shard"] = .number(JSONNumber(part.shard))
                o["shards"] = .number(JSONNumber(part.shards))
            }
            if dryRun {
                o["entries"] = .array(summary.entries.map { .object(["path": .string($0.path), "size": .number(JSONNumber($0.size))]) })
            }
            o["changed"] = .array(
                summary.changed.map {
                    .object([
                        "store": .string($0.location), "name": .string($0.name), "reason": .string($0.reason),
                        "outcome": .string($0.outcome),
                    ])
                })
            try printJSON(.object(o))
        } else if dryRun {
            for entry in summary.entries { print("\(entry.size)\t\(entry.path)") }
        }
        summary.notes.forEach(common.note)
        let what =
            "\(counted(summary.objects, noun)), \(ProgressMeter.format(bytes: summary.bytes)) (\(summary.format), \(summary.compression))"
        if let part = summary.part, !dryRun {
            common.note(
                "wrote \(ShardManifest.partPath(output: output, shard: part.shard, of: part.shards)): \(what); "
                    + "join the parts with dumpkit merge \(output)")
        } else {
            common.note(dryRun ? "dry run, nothing written: would archive \(what) to \(output)" : "wrote \(output): \(what)")
        }
        for change in summary.changed {
            FileHandle.standardError.write(Data("dumpkit: error: \(change)\n".utf8))
        }
        if !summary.changed.isEmpty {
            FileHandle.standardError.write(
                Data(
                    "dumpkit: error: \(counted(summary.changed.count, "object")) changed while being archived; run again for a consistent copy\n"
                        .utf8))
        }
        try summary.checkIncludes()
        if !summary.changed.isEmpty { throw Exit.findings }
    }
}

extension ArchiveJob.Summary {
    /// Warns of `--include` patterns that matched no object, and then fails with exit code 1.
    func checkIncludes() throws {
        guard let unmatched = unmatchedIncludes else { return }
        let message = "dumpkit: warning: \(unmatched) (the archive holds the other patterns' \(counted(objects, "object")))\n"
        FileHandle.standardError.write(Data(message.utf8))
        throw Exit.findings
    }
}

extension ArchiveFormat: ExpressibleByArgument {}
extension CompressionFilter: ExpressibleByArgument {}
extension SafeExtractor.OverwritePolicy: ExpressibleByArgument {}

extension CommonOptions {
    /// A progress line for archive commands on standard error, when that is a terminal.
    func archiveProgress() -> ArchiveProgress? {
        guard !quiet, isatty(STDERR_FILENO) != 0 else { return nil }
        return ArchiveProgress { snapshot in
            let line = "\r\u{1B}[K" + snapshot.line + (snapshot.done ? "\n" : "")
            FileHandle.standardError.write(Data(line.utf8))
        }
    }

    /// Prints each problem on standard error, then fails with exit code 1 if there were any.
    func report(_ problems: [VerifyJob.Problem], in archive: String, doing action: String) throws {
        for problem in problems {
            FileHandle.standardError.write(Data("dumpkit: \(archive): \(problem)\n".utf8))
        }
        if !problems.isEmpty { throw ArchiveProblems(count: problems.count, archive: archive, action: action) }
    }
}

/// Problems as a JSON array of `{"path", "message"}` objects.
func problemsJSON(_ problems: [VerifyJob.Problem]) -> JSONValue {
    .array(problems.map { .object(["path": .string($0.path), "message": .string($0.message)]) })
}
