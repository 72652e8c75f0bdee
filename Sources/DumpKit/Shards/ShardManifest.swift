import ArchiveKit
import JSONStream

/// The commit marker of one shard's part: written (temporary name, fsync, rename) only after the
/// part itself, so a part without its manifest is unfinished, and `merge` joins only parts whose
/// manifests agree. It holds nothing that changes between runs (no times), so a re-run of the same
/// shard writes the same bytes.
public struct ShardManifest: Sendable, Equatable {
    /// The command that wrote the part (`convert`).
    public var command: String
    public var shard: Int
    public var shards: Int
    /// `DumpIndex.Trailer.identity` of the index the shard ran from.
    public var index: String
    /// The options that shape the output, as the command spells them: all shards must agree.
    public var options: String
    public var units: Int
    public var records: Int
    /// Input bytes the shard read (its units and the bytes between them).
    public var bytesIn: Int64
    public var partBytes: Int64
    /// CRC-32C of the part: what `merge` checks the part against. It is computed in hardware at
    /// memory speed, where a SHA-256 of the part cost a quarter of a convert shard's CPU.
    public var partCRC32C: UInt32
    /// The command's own counts (migrate: `changed`, `rejects`, `alreadyMigrated`), summed by `merge`.
    public var counts: [String: Int] = [:]
    /// Where the joined rejects go (migrate under `--on-error keep`): each shard writes
    /// `REJECTS.part-I-of-N`, lines in the rejects' order, each after its sort key.
    public var rejects: String?
    /// CRC-32C of `OUT.part-I-of-N.objects` (extract-blobs: the shard's report and the objects it
    /// named, `ExtractionPart`), written before the manifest.
    public var objectsCRC32C: UInt32?
    /// S3's ETag of the part, recorded after its upload (`-o s3://...`), so that `merge` checks the
    /// part with a HEAD instead of reading it (Cloud Storage reports the CRC-32C itself).
    public var partETag: String?

    /// `OUT.part-I-of-N`.
    public static func partPath(output: String, shard: Int, of shards: Int) -> String { "\(output).part-\(shard)-of-\(shards)" }

    /// `OUT.part-I-of-N.manifest`.
    public static func manifestPath(output: String, shard: Int, of shards: Int) -> String {
        partPath(output: output, shard: shard, of: shards) + ".manifest"
    }

    func json() -> JSONValue {
        var o: JSONObject = [
            "dumpkitShard": .number(JSONNumber(1)), "command": .string(command), "shard": .number(JSONNumber(shard)),
            "shards": .number(JSONNumber(shards)),
            "index": .string(index), "options": .string(options), "units": .number(JSONNumber(units)),
            "records": .number(JSONNumber(records)),
            "bytesIn": .number(JSONNumber(bytesIn)), "partBytes": .number(JSONNumber(partBytes)),
            "partCRC32C": .number(JSONNumber(partCRC32C)),
            "counts": .object(JSONObject(counts.keys.sorted().map { .init(key: $0, value: .number(JSONNumber(counts[$0]!))) })),
            "rejects": rejects.map { .string($0) } ?? .null,
        ]
        if let objectsCRC32C { o["objectsCRC32C"] = .number(JSONNumber(objectsCRC32C)) }
        if let partETag { o["partETag"] = .string(partETag) }
        return .object(o)
    }

    /// Writes the manifest beside the part, atomically.
    func write(output: String) throws {
        let file = try OutputFile(path: Self.manifestPath(output: output, shard: shard, of: shards), compression: CompressionFilter.none)
        do {
            let w = JSONWriter(sink: file, options: .init(pretty: true))
            try w.value(json())
            try w.raw("\n")
            try w.flush()
            try file.commit()
        } catch {
            file.abort()
            throw error
        }
    }

    /// Reads a manifest; nil when the file does not exist.
    static func read(path: String) throws -> ShardManifest? {
        let file: InputFile
        // In a bucket, a missing object is a missing manifest; refused credentials are not.
        if BucketParts.isURL(path), try !BucketParts.exists(path) { return nil }
        do { file = try InputFile(path: path) } catch { return nil }
        func bad(_ why: String) -> DataError & Error { ShardError(message: "\(path): not a shard manifest (\(why)); run that shard again") }
        let v: JSONValue
        do { v = try JSONReader(source: file, sourceName: path).readValue() } catch { throw bad("not JSON") }
        guard let o = v.objectValue, o["dumpkitShard"] != nil, let command = o["command"]?.stringValue,
            let shard = o["shard"]?.numberValue?.int64Value, let shards = o["shards"]?.numberValue?.int64Value,
            let index = o["index"]?.stringValue, let options = o["options"]?.stringValue,
            let units = o["units"]?.numberValue?.int64Value, let records = o["records"]?.numberValue?.int64Value,
            let bytesIn = o["bytesIn"]?.numberValue?.int64Value, let partBytes = o["partBytes"]?.numberValue?.int64Value,
            let crc = o["partCRC32C"]?.numberValue?.int64Value
        else { throw bad("fields missing") }
        var counts: [String: Int] = [:]
        for member in o["counts"]?.objectValue ?? JSONObject() {
            guard let n = member.value.numberValue?.int64Value else { throw bad("count \(member.key) is not a number") }
            counts[member.key] = Int(n)
        }
        return ShardManifest(
            command: command, shard: Int(shard), shards: Int(shards), index: index, options: options, units: Int(units),
            records: Int(records), bytesIn: bytesIn, partBytes: partBytes, partCRC32C: UInt32(truncatingIfNeeded: crc),
            counts: counts, rejects: o["rejects"]?.stringValue,
            objectsCRC32C: o["objectsCRC32C"]?.numberValue?.int64Value.map { UInt32(truncatingIfNeeded: $0) },
            partETag: o["partETag"]?.stringValue)
    }
}

/// Shards that cannot be merged (missing, unfinished, from another run): exit code 1.
public struct ShardError: Error, DataError, CustomStringConvertible, Sendable {
    public let message: String
    public init(message: String) { self.message = message }
    public var description: String { message }
}
