import JSONStream
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A shard's part (or manifest) as a bucket describes it, without its bytes.
public struct StoredPart: Sendable, Equatable {
    /// `s3://BUCKET/KEY.part-I-of-N`.
    public var location: String
    public var size: Int64
    /// S3's ETag (unquoted).
    public var etag: String?
    /// The CRC-32C the store computed over the whole object (Cloud Storage's `crc32c`), when it reports one.
    public var crc32c: UInt32?
    /// Cloud Storage's generation: what a join copies, so that a part replaced meanwhile fails it.
    public var generation: String?

    public init(location: String, size: Int64, etag: String? = nil, crc32c: UInt32? = nil, generation: String? = nil) {
        self.location = location
        self.size = size
        self.etag = etag
        self.crc32c = crc32c
        self.generation = generation
    }
}

/// A piece of a join in a store: a shard's part there, or bytes of this process (a merged archive's
/// manifest frames before the parts and its end-of-archive frame after them), which the store's join
/// sends (S3: with the start of the next part, as a part under 5 MiB is sent) or uploads as a
/// temporary object of its own (Cloud Storage compose).
public enum JoinPiece: Sendable, Equatable {
    case stored(StoredPart)
    case bytes([UInt8])

    public var size: Int64 {
        switch self {
        case .stored(let part): part.size
        case .bytes(let bytes): Int64(bytes.count)
        }
    }
}

/// A join of parts made in the store but not yet visible under its name (an S3 multipart upload whose
/// parts are copies, Cloud Storage composes into temporary objects): `publish()` makes the output
/// appear whole, `abort()` leaves nothing behind.
public protocol PreparedJoin: AnyObject {
    /// Bytes the store copied itself (part copies, composes).
    var copiedInStore: Int64 { get }
    /// Bytes that went through this process (downloaded and uploaded again).
    var streamed: Int64 { get }
    func publish() throws
    func abort()
}

/// The bucket side of `merge` for parts written to `s3://`/`gs://` (`-o URL` on the shards). DumpKit
/// does not speak HTTP: the program registers the store (the `dumpkit` CLI registers the one of
/// `ObjectStores`).
public protocol BucketPartStore: Sendable {
    /// Calls `body` with the location of every object whose location starts with `prefix`, a page of
    /// the listing at a time.
    func eachLocation(startingWith prefix: String, _ body: (String) throws -> Void) throws
    /// The object at `location`, or `nil` when there is none; a missing bucket or refused credentials throw.
    func describe(_ location: String) throws -> StoredPart?
    /// Joins `pieces`, in order, into `output`: in the store where it can (S3 part copies, Cloud Storage
    /// compose), else through this process in bounded memory. Nothing appears before `publish()`.
    func join(_ pieces: [JoinPiece], into output: String) throws -> PreparedJoin
}

/// Where `merge` finds the store of parts given as URLs.
public enum BucketParts {
    private static let store = Mutex<(any BucketPartStore)?>(nil)

    /// Makes `merge` read and join parts at URLs through `store`, for the rest of the process.
    public static func register(_ store: any BucketPartStore) {
        Self.store.withLock { $0 = store }
    }

    static func isURL(_ location: String) -> Bool { location.contains("://") }

    /// The registered store; an error naming `location` when there is none.
    static func store(for location: String) throws -> any BucketPartStore {
        guard let store = store.withLock({ $0 }) else {
            throw OutputError(file: location, message: "parts in buckets are merged only when a store is registered (BucketParts.register)")
        }
        return store
    }

    /// Whether the object (or the local file) at `location` exists; store errors other than a missing
    /// object throw (exit 2), so that refused credentials are not reported as missing shards.
    static func exists(_ location: String) throws -> Bool {
        guard isURL(location) else { return access(location, F_OK) == 0 }
        return try store(for: location).describe(location) != nil
    }

    /// Checks a part in a bucket against its manifest by its description alone: the size, and the
    /// store's CRC-32C (Cloud Storage) or the ETag the shard recorded after its upload (S3). Without
    /// either the part's bytes are read and their CRC-32C computed. Returns the part as described,
    /// for the join.
    static func check(_ location: String, against m: ShardManifest, shard i: Int, of n: Int) throws -> StoredPart {
        guard let part = try store(for: location).describe(location) else {
            throw ShardError(message: "shard \(i) of \(n): \(location) is missing; run it again with --shard \(i)/\(n)")
        }
        func stale(_ why: String) -> ShardError {
            ShardError(
                message: "shard \(i) of \(n) is stale: \(location) is not the part its manifest describes (\(why)); "
                    + "run it again with --shard \(i)/\(n)")
        }
        guard part.size == m.partBytes else { throw stale("\(part.size) bytes, manifest \(m.partBytes)") }
        if let crc = part.crc32c {
            guard crc == m.partCRC32C else { throw stale("CRC-32C \(crc), manifest \(m.partCRC32C)") }
        } else if let etag = m.partETag {
            guard part.etag == etag else { throw stale("ETag \(part.etag ?? "none"), manifest \(etag)") }
        } else {
            let crc = try streamedCRC32C(location)
            guard crc == m.partCRC32C else { throw stale("CRC-32C \(crc), manifest \(m.partCRC32C)") }
        }
        return part
    }

    /// The CRC-32C of the whole object, read once in order.
    private static func streamedCRC32C(_ location: String) throws -> UInt32 {
        let input = try InputFile(path: location, decompressing: false)
        var crc = CRC32C()
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let n = try buffer.withUnsafeMutableBytes { try input.read(into: $0) }
            if n == 0 { return crc.value }
            buffer.withUnsafeBytes { crc.update(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
        }
    }

    /// Appends the object at `location` to `out`, read once in order: a part in a bucket joined into
    /// a local output. The bytes read must be those the manifest `m` describes (size and CRC-32C):
    /// a part replaced since merge checked it is a stale shard, found before the output is committed.
    static func append(_ location: String, as m: ShardManifest, to out: OutputFile) throws {
        let input = try InputFile(path: location, decompressing: false)
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var done: Int64 = 0
        var crc = CRC32C()
        while true {
            let n = try buffer.withUnsafeMutableBytes { try input.read(into: $0) }
            if n == 0 { break }
            try buffer.withUnsafeBytes {
                let bytes = UnsafeRawBufferPointer(rebasing: $0[0..<n])
                crc.update(bytes)
                try out.write(bytes)
            }
            done += Int64(n)
        }
        guard done == m.partBytes, crc.value == m.partCRC32C else {
            throw ShardError(
                message: "shard \(m.shard) of \(m.shards) is stale: \(location) changed since merge checked it (\(done) bytes, "
                    + "manifest \(m.partBytes)); run it again with --shard \(m.shard)/\(m.shards)")
        }
    }

    /// The N of the parts or manifests listed under `output` (`OUT.part-I-of-N[.manifest]`).
    static func shardCount(output: String) throws -> Set<Int> {
        var counts = Set<Int>()
        let prefix = output + ".part-"
        try store(for: output).eachLocation(startingWith: prefix) { location in
            if let n = MergeJob.shardCount(ofPartName: location.dropFirst(prefix.count)) { counts.insert(n) }
        }
        return counts
    }
}

extension MergeJob {
    /// The join of parts in a bucket into the output in the same store (`BucketPartStore.join`): the
    /// rejects first (published before the output that refers to them, as the unsharded run does),
    /// then the output. A failure before the rejects are published leaves neither; one in the
    /// output's own publication (a part changed since it was checked) leaves the rejects published
    /// and the output not, as a local merge does.
    func joinInStore(
        _ parts: [StoredPart], manifests: [ShardManifest], rejects: OutputFile?, extraction: BlobExtractionReport?, counts: [String: Int]
    ) throws -> Summary {
        let n = manifests.count
        do {
            if let rejects, let target = manifests[0].rejects {
                try RejectsMerger(parts: (0..<n).map { ShardManifest.partPath(output: target, shard: $0, of: n) }).run(into: rejects)
                try rejects.prepare()
            }
            let join = try BucketParts.store(for: output).join(parts.map(JoinPiece.stored), into: output)
            do {
                try rejects?.publish()
                try join.publish()
            } catch {
                join.abort()
                throw error
            }
            var summary = Summary(
                command: manifests[0].command, shards: n, units: manifests.reduce(0) { $0 + $1.units },
                records: manifests.reduce(0) { $0 + $1.records }, bytesIn: manifests.reduce(0) { $0 + $1.bytesIn },
                bytesOut: parts.reduce(0) { $0 + $1.size }, counts: counts, rejects: manifests[0].rejects, report: nil,
                extraction: extraction)
            summary.copiedInStore = join.copiedInStore
            summary.streamed = join.streamed
            return summary
        } catch {
            rejects?.abort()
            throw error
        }
    }
}
