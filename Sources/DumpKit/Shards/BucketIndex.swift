import ArchiveKit
import Crypto
import JSONStream

/// The index of a bucket's listing that `archive --shard` splits the bucket by (`dumpkit index
/// --bucket`): the listing in name order cut into units of consecutive objects, each unit its first
/// name, its object count and its bytes. A shard archives the objects whose names fall between its
/// first unit's first name and the next shard's; shard 0 starts before every name and the last shard
/// ends after every name, so objects added or removed between the index and the shards still land in
/// exactly one shard.
///
/// On disk it is one JSON object, `{"dumpkitBucketIndex": 1, "source", "objects", "bytes",
/// "sha256", "unitBytes", "units": [["first name", objects, bytes], ...]}`; units are at most
/// `unitBytes` or `maxUnitObjects` objects (one larger object is a unit of its own), so the file is
/// small beside the listing (a unit per thousand objects at most).
public struct BucketIndex: Sendable, Equatable {
    /// The format's version.
    public static let version = 1
    /// The most objects in one unit.
    public static let maxUnitObjects = 1000
    /// What one object weighs beside its bytes when shards are balanced: its tar header and padding,
    /// and a request or a file to open, which dominate a bucket of small objects.
    public static let objectWeight: Int64 = 4096

    /// Consecutive objects of the listing.
    public struct Unit: Sendable, Equatable {
        /// The name of the unit's first object.
        public var first: String
        public var objects: Int
        public var bytes: Int64

        public init(first: String, objects: Int, bytes: Int64) {
            self.first = first
            self.objects = objects
            self.bytes = bytes
        }

        var weight: Int64 { bytes + Int64(objects) * BucketIndex.objectWeight }
    }

    /// The bucket as it was given (a folder, `s3://BUCKET/PREFIX`, `gs://BUCKET/PREFIX`).
    public var source: String
    public var units: [Unit]
    /// SHA-256 of the listing (each object's name, a tab, its size and a line break).
    public var sha256: String
    public var unitBytes: Int64

    public var objects: Int { units.reduce(0) { $0 + $1.objects } }
    public var bytes: Int64 { units.reduce(0) { $0 + $1.bytes } }

    /// The identity parts and manifests name the index by.
    public var identity: String { "bucket:\(objects):\(bytes):\(sha256):\(unitBytes)" }

    /// Where one shard's names begin, in byte order of their UTF-8.
    public enum Bound: Sendable, Equatable {
        /// Before every name.
        case start
        /// At this name (included).
        case name(String)
        /// After every name: the shard is empty.
        case end
    }

    /// The names shard `spec` archives: from `lower` (included) to `upper` (excluded). Units go to
    /// shards by where their middle lies in the listing's weight (bytes and a fixed weight per
    /// object), so each shard gets consecutive units of about an N-th of the bucket.
    public func range(of spec: ShardSpec) -> (lower: Bound, upper: Bound) {
        let total = units.reduce(Int64(0)) { $0 + $1.weight }
        var firstOfShard = [Int?](repeating: nil, count: spec.count)
        var offset: Int64 = 0
        for (u, unit) in units.enumerated() {
            let shard = DumpIndex.shard(middle: offset + unit.weight / 2, count: spec.count, size: total)
            if firstOfShard[shard] == nil { firstOfShard[shard] = u }
            offset += unit.weight
        }
        /// Where shard `i`'s names begin: its first unit's, else the next shard's with units.
        func lower(_ i: Int) -> Bound {
            if i == 0 { return .start }
            guard i < spec.count, let u = firstOfShard[i...].lazy.compactMap({ $0 }).first else { return .end }
            return .name(units[u].first)
        }
        return (lower(spec.index), lower(spec.index + 1))
    }

    /// Whether `name` lies in `range`.
    public static func contains(_ range: (lower: Bound, upper: Bound), _ name: String) -> Bool {
        switch range.lower {
        case .end: return false
        case .name(let first) where ArchiveItem.bytesPrecede(name, first): return false
        default: break
        }
        switch range.upper {
        case .start: return false
        case .name(let next): return ArchiveItem.bytesPrecede(name, next)
        case .end: return true
        }
    }

    /// Builds an index from a listing in name order, one object at a time.
    public struct Builder {
        private var units: [Unit] = []
        private var hasher = SHA256()
        private var last: String?
        let unitBytes: Int64
        let source: String

        public init(source: String, unitBytes: Int64) {
            self.source = source
            self.unitBytes = unitBytes
        }

        /// Adds the next object; fails when the listing is not in name order.
        public mutating func add(name: String, size: Int64) throws {
            if let last, !ArchiveItem.bytesPrecede(last, name) {
                throw InputError(
                    file: source, message: "the listing is not in name order ('\(name)' after '\(last)'): it cannot be indexed")
            }
            last = name
            hasher.update(data: Array("\(name)\t\(size)\n".utf8))
            if let current = units.last, current.objects < BucketIndex.maxUnitObjects, current.bytes + size <= unitBytes {
                units[units.count - 1].objects += 1
                units[units.count - 1].bytes += size
            } else {
                units.append(Unit(first: name, objects: 1, bytes: size))
            }
        }

        public func index() -> BucketIndex {
            BucketIndex(source: source, units: units, sha256: Hex.lowercase(hasher.finalize()), unitBytes: unitBytes)
        }
    }

    // MARK: File

    func json() -> JSONValue {
        .object([
            "dumpkitBucketIndex": .number(JSONNumber(Self.version)), "source": .string(source),
            "objects": .number(JSONNumber(objects)), "bytes": .number(JSONNumber(bytes)), "sha256": .string(sha256),
            "unitBytes": .number(JSONNumber(unitBytes)),
            "units": .array(units.map { .array([.string($0.first), .number(JSONNumber($0.objects)), .number(JSONNumber($0.bytes))]) }),
        ])
    }

    /// Writes the index to `path`, atomically.
    public func write(to path: String) throws -> Int64 {
        let file = try OutputFile(path: path, compression: CompressionFilter.none)
        do {
            let writer = JSONWriter(sink: file)
            try writer.value(json())
            try writer.raw("\n")
            try writer.flush()
            try file.commit()
            return file.bytesWritten
        } catch {
            file.abort()
            throw error
        }
    }

    /// Reads the index at `path`; a file that is not a bucket index is a usage error that says what to make.
    public static func read(path: String) throws -> BucketIndex {
        func bad(_ why: String) -> UsageError {
            UsageError("\(path) is not a bucket index (\(why)): make one with dumpkit index --bucket BUCKET -o BUCKET.dkindex")
        }
        let value: JSONValue
        do { value = try JSONReader(source: try InputFile(path: path), sourceName: path).readValue() } catch let error as InputError {
            throw error
        } catch { throw bad("not JSON") }
        guard let o = value.objectValue, let version = o["dumpkitBucketIndex"]?.numberValue?.int64Value else {
            // A dump's index is lines of units (arrays), then its trailer.
            throw bad(
                value.arrayValue != nil || value.objectValue?["dumpkitIndex"] != nil ? "it is the index of a dump" : "no dumpkitBucketIndex"
            )
        }
        guard version == Self.version else {
            throw UsageError("\(path): bucket index format \(version), this dumpkit reads \(Self.version); make the index again")
        }
        guard let source = o["source"]?.stringValue, let sha = o["sha256"]?.stringValue,
            let unitBytes = o["unitBytes"]?.numberValue?.int64Value, let list = o["units"]?.arrayValue
        else { throw bad("fields missing") }
        var units: [Unit] = []
        units.reserveCapacity(list.count)
        for item in list {
            guard let a = item.arrayValue, a.count == 3, let first = a[0].stringValue, let objects = a[1].numberValue?.int64Value,
                let bytes = a[2].numberValue?.int64Value, objects > 0, bytes >= 0
            else { throw bad("unit \(units.count) is not [first name, objects, bytes]") }
            if let previous = units.last, !ArchiveItem.bytesPrecede(previous.first, first) { throw bad("units out of order") }
            units.append(Unit(first: first, objects: Int(objects), bytes: bytes))
        }
        return BucketIndex(source: source, units: units, sha256: sha, unitBytes: unitBytes)
    }
}
