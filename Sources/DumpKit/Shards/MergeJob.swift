import ArchiveKit
import JSONStream

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// `dumpkit merge OUT`: joins the parts `OUT.part-I-of-N` of a sharded run into `OUT`, after checking
/// that all N manifests are there and agree and that every part is the one its manifest describes
/// (size and CRC-32C). The output appears whole or not at all.
public struct MergeJob {
    public var output: String
    /// The number of shards; nil finds it from the parts' names.
    public var shards: Int?
    /// Where the shards wrote (their `-o`) when not `output`: parts in a bucket joined into a local
    /// output, or local parts into a bucket, go through this process.
    public var parts: String?
    /// Opens the store of a sharded `check-blobs`, which merge lists for orphans.
    public var openStore: BlobStoreOpener = DirectoryBlobStore.openDirectory

    public init(output: String) {
        self.output = output
    }

    /// What a merge did.
    public struct Summary: Sendable {
        public var command: String
        public var shards: Int
        public var units: Int
        public var records: Int
        public var bytesIn: Int64
        public var bytesOut: Int64
        /// The shards' own counts, summed (migrate: `matched`, `changed`, `rejects`, `alreadyMigrated`).
        public var counts: [String: Int]
        /// Where the joined rejects went.
        public var rejects: String?
        /// Of a sharded `validate`: the findings report the unsharded run makes (no output is written).
        public var report: FindingsReport?
        /// Of a sharded `extract-blobs`: the report of the unsharded run (`--json`, `--report`).
        public var extraction: BlobExtractionReport? = nil
        /// Of a sharded `check-blobs`: the findings (orphans last) and the references checked, as
        /// the unsharded run reports them (no output is written).
        public var blobCheck: (source: String, findings: [Finding], references: Int)? = nil
        /// Of a sharded `archive`: `--include` patterns that matched no object in any shard.
        public var unmatchedIncludes: UnmatchedIncludes? = nil
        /// Of parts joined in a bucket: the bytes the store copied itself, and those that went through
        /// this process (small parts S3 cannot copy as parts of their own, stores without copies).
        public var copiedInStore: Int64? = nil
        public var streamed: Int64? = nil
    }

    public func run() throws -> Summary {
        if output == "-" { throw UsageError("merge writes OUT from OUT.part-I-of-N beside it: give the output's file name, not -") }
        let parts = self.parts ?? output
        let n = try shards ?? Self.shardCount(output: parts)
        guard n >= 1 else { throw UsageError("--shards must be at least 1") }
        var manifests: [ShardManifest] = []
        var storedParts: [StoredPart] = []
        for i in 0..<n {
            let path = ShardManifest.manifestPath(output: parts, shard: i, of: n)
            guard let m = try ShardManifest.read(path: path) else {
                let part = ShardManifest.partPath(output: parts, shard: i, of: n)
                throw ShardError(
                    message: "shard \(i) of \(n) has not finished: \(path) is missing"
                        + (try BucketParts.exists(part) ? " (its part is there, its manifest, written last, is not)" : "")
                        + "; run it again with --shard \(i)/\(n)")
            }
            guard m.shard == i, m.shards == n else {
                throw ShardError(
                    message: "\(path) is the manifest of shard \(m.shard) of \(m.shards), not of \(i) of \(n); run shard \(i)/\(n) again")
            }
            if let first = manifests.first {
                let differs =
                    m.command != first.command
                    ? "command \(m.command), not \(first.command)"
                    : m.index != first.index
                        ? "index \(m.index), not \(first.index)"
                        : m.options != first.options ? "options '\(m.options)', not '\(first.options)'" : nil
                if let differs {
                    throw ShardError(
                        message: "shard \(i) of \(n) is stale: its manifest has \(differs) (as shard 0's has); "
                            + "run it again with --shard \(i)/\(n) and the same index and options")
                }
            }
            let part = ShardManifest.partPath(output: parts, shard: i, of: n)
            if BucketParts.isURL(parts) {
                storedParts.append(try BucketParts.check(part, against: m, shard: i, of: n))
            } else {
                try Self.checkPart(part, against: m, shard: i, of: n)
            }
            manifests.append(m)
        }
        var counts: [String: Int] = [:]
        for m in manifests { counts.merge(m.counts, uniquingKeysWith: +) }
        let records = manifests.reduce(0) { $0 + $1.records }
        if manifests[0].command == "migrate" && records + (counts["alreadyMigrated"] ?? 0) == 0 {
            throw MigrationMismatch(
                message: "no shard found data at the plans' patterns: the dump does not look like the plans' input; nothing was written")
        }
        if manifests[0].command == "validate" {
            var report = try FindingsPart.merge(parts: (0..<n).map { ShardManifest.partPath(output: parts, shard: $0, of: n) })
            if report.checkedRules.contains("blobs:missing") {
                // `validate --blobs`: the blob check's shards, merged as check-blobs merges them, after the other findings.
                var blobs = MergeJob(output: ValidateJob.blobsOutput(output))
                blobs.parts = ValidateJob.blobsOutput(parts)
                blobs.shards = n
                blobs.openStore = openStore
                guard let check = try blobs.run().blobCheck else {
                    throw ShardError(
                        message: "\(blobs.output).part-I-of-N are not the blob check of a sharded validate --blobs; run the shards again")
                }
                for f in check.findings { report.add(f) }
            }
            return Summary(
                command: "validate", shards: n, units: manifests.reduce(0) { $0 + $1.units }, records: records,
                bytesIn: manifests.reduce(0) { $0 + $1.bytesIn }, bytesOut: 0, counts: counts, rejects: nil, report: report)
        }
        if manifests[0].command == "archive" {
            let merged = try ArchivePart.merge(output: output, parts: parts, manifests: manifests, stored: storedParts)
            var summary = Summary(
                command: "archive", shards: n, units: manifests.reduce(0) { $0 + $1.units }, records: merged.objects,
                bytesIn: merged.bytes, bytesOut: merged.written, counts: counts, rejects: nil, report: nil,
                unmatchedIncludes: merged.unmatchedIncludes)
            summary.copiedInStore = merged.copiedInStore
            summary.streamed = merged.streamed
            return summary
        }
        if manifests[0].command == "check-blobs" {
            let check = try CheckBlobsJob.merge(
                parts: (0..<n).map { ShardManifest.partPath(output: parts, shard: $0, of: n) }, openStore: openStore)
            return Summary(
                command: "check-blobs", shards: n, units: manifests.reduce(0) { $0 + $1.units }, records: records,
                bytesIn: manifests.reduce(0) { $0 + $1.bytesIn }, bytesOut: 0, counts: counts, rejects: nil, report: nil, blobCheck: check)
        }
        // Before the output is written: one object name with two contents in two shards stops
        // the merge, as it stops the unsharded run.
        let extraction =
            manifests[0].command == "extract-blobs"
            ? try ExtractionPart.merge(
                (0..<n).map { ExtractionPart.path(output: parts, shard: $0, of: n) }, crc32c: manifests.map(\.objectsCRC32C)) : nil
        let rejectsTarget = manifests[0].rejects
        let rejects = try rejectsTarget.map { try OutputFile(path: $0, compression: CompressionFilter.none) }
        if BucketParts.isURL(parts) && BucketParts.isURL(output) {
            return try joinInStore(storedParts, manifests: manifests, rejects: rejects, extraction: extraction, counts: counts)
        }
        let out = try OutputFile(path: output, compression: CompressionFilter.none, seekable: true)
        do {
            for m in manifests {
                let part = ShardManifest.partPath(output: parts, shard: m.shard, of: n)
                if BucketParts.isURL(part) {
                    try BucketParts.append(part, as: m, to: out)
                } else {
                    try out.append(contentsOf: part, length: m.partBytes)
                }
            }
            if let rejects, let rejectsTarget {
                try RejectsMerger(parts: (0..<n).map { ShardManifest.partPath(output: rejectsTarget, shard: $0, of: n) }).run(into: rejects)
                // As the unsharded run: the rejects before the output that refers to them.
                try rejects.prepare()
                try out.prepare()
                try rejects.publish()
            }
            try out.commit()
        } catch {
            out.abort()
            rejects?.abort()
            throw error
        }
        return Summary(
            command: manifests[0].command, shards: n, units: manifests.reduce(0) { $0 + $1.units }, records: records,
            bytesIn: manifests.reduce(0) { $0 + $1.bytesIn }, bytesOut: out.bytesWritten, counts: counts, rejects: rejectsTarget,
            report: nil, extraction: extraction)
    }

    /// Checks that the part has the size and CRC-32C its manifest says: a part rewritten by another
    /// run after its manifest is stale.
    private static func checkPart(_ path: String, against m: ShardManifest, shard i: Int, of n: Int) throws {
        guard try BucketParts.exists(path) else {
            throw ShardError(message: "shard \(i) of \(n): \(path) is missing; run it again with --shard \(i)/\(n)")
        }
        let (size, crc) = try checksum(path)
        guard size == m.partBytes, crc == m.partCRC32C else {
            throw ShardError(
                message:
                    "shard \(i) of \(n) is stale: \(path) is not the part its manifest describes (\(size) bytes, manifest \(m.partBytes)); "
                    + "run it again with --shard \(i)/\(n)")
        }
    }

    /// The size and CRC-32C of a whole file (or object, read in ranges).
    static func checksum(_ path: String) throws -> (size: Int64, crc32c: UInt32) {
        let file: PositionalByteSource = BucketParts.isURL(path) ? try PositionalInput.open(path).source : try ReadOnlyFile(path: path)
        var crc = CRC32C()
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var size: Int64 = 0
        while true {
            let got = try buffer.withUnsafeMutableBytes { b in
                let got = try file.read(at: size, into: b)
                crc.update(UnsafeRawBufferPointer(rebasing: b[0..<got]))
                return got
            }
            if got == 0 { return (size, crc.value) }
            size += Int64(got)
        }
    }

    /// The N of a part's or manifest's name after `OUT.part-` (`I-of-N[.manifest]`), nil for other names.
    static func shardCount(ofPartName name: Substring) -> Int? {
        var rest = name
        if rest.hasSuffix(".manifest") { rest = rest.dropLast(".manifest".count) }
        let parts = rest.split(separator: "-")
        guard parts.count == 3, parts[1] == "of", Int(parts[0]) != nil, let n = Int(parts[2]) else { return nil }
        return n
    }

    /// The N of the parts or manifests beside `output` (`OUT.part-I-of-N[.manifest]`), in its folder
    /// or its bucket.
    static func shardCount(output: String) throws -> Int {
        let base = output.split(separator: "/").last.map(String.init) ?? output
        var counts = Set<Int>()
        if BucketParts.isURL(output) {
            counts = try BucketParts.shardCount(output: output)
        } else {
            let dir = OutputFile.directory(of: output)
            let prefix = base + ".part-"
            guard let stream = opendir(dir) else { throw UsageError("cannot read the folder \(dir): \(String(cString: strerror(errno)))") }
            defer { closedir(stream) }
            while let entry = readdir(stream) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                guard name.hasPrefix(prefix), let n = shardCount(ofPartName: name.dropFirst(prefix.count)) else { continue }
                counts.insert(n)
            }
        }
        guard let n = counts.first else {
            throw ShardError(message: "no parts of \(output) found (\(base).part-I-of-N): run the shards first")
        }
        guard counts.count == 1 else {
            throw UsageError(
                "parts of \(output) from runs with \(counts.sorted().map(String.init).joined(separator: " and ")) shards are there: pass --shards N"
            )
        }
        return n
    }
}
