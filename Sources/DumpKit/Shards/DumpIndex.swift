#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import JSONStream

/// The index of a dump that sharded runs split it by (`dumpkit index`): the byte ranges of its
/// units (records, or values of a size worth one unit) in document order, each with the compact
/// JSON structure that comes before it in the output (object and array openings, names, commas,
/// closings), and the input's size and SHA-256.
///
/// On disk it is NDJSON, so it is streamed, never held whole: one line per unit,
/// `[offset,length,crc32c,"structure","/pointer","kind"]`, where the CRC-32C covers the input's bytes
/// from the end of the unit before (the raw bytes between the units) to the end of this one. A shard
/// checks it for every range it reads, so every byte of the input is checked by one shard against
/// the file the index was made for. The last line is the `Trailer`.
public enum DumpIndex {
    /// The format's version, in the trailer.
    public static let version = 1

    /// What a unit is to the record pipeline.
    public enum Kind: String, Sendable {
        /// A subtree a record pattern names: one record, never split.
        case record = "r"
        /// A value no pattern reaches, whole: what `DumpReader` makes one record of for NDJSON.
        case content = "c"
        /// A child of a value no pattern reaches that was too large to be one unit: fine for a JSON
        /// tree, but NDJSON would have written the whole value as one record.
        case piece = "p"
    }

    /// One unit: where it is, what comes before it.
    public struct Entry: Sendable, Equatable {
        public var offset: Int64
        public var length: Int64
        /// CRC-32C of the input bytes from the previous unit's end (0 for the first) to this one's end.
        public var crc: UInt32
        /// The compact JSON written before the unit's value (may be empty).
        public var structure: String
        /// Where the unit is in the tree.
        public var pointer: String
        public var kind: Kind

        public var end: Int64 { offset + length }
    }

    /// The index's last line: what it was made from and how.
    public struct Trailer: Sendable, Equatable {
        /// The input's size and SHA-256: a shard refuses an index made for another file.
        public var size: Int64
        public var sha256: String
        public var units: Int
        /// The largest unit size, except records, which are never split.
        public var unitBytes: Int64
        /// The record patterns the index was made with (empty: units by size).
        public var records: [String]
        /// The compact JSON after the last unit (closing brackets).
        public var end: String
        /// CRC-32C of the input bytes after the last unit.
        public var endCRC: UInt32
        /// Whether a value no pattern reaches was split into pieces.
        public var hasPieces: Bool

        /// The identity parts and manifests name the index by.
        public var identity: String { "\(size):\(sha256):\(unitBytes):\(records.joined(separator: ","))" }

        func json() -> JSONValue {
            .object([
                "dumpkitIndex": .number(JSONNumber(DumpIndex.version)), "size": .number(JSONNumber(size)), "sha256": .string(sha256),
                "units": .number(JSONNumber(units)), "unitBytes": .number(JSONNumber(unitBytes)),
                "records": .array(records.map { .string($0) }), "end": .string(end), "endCRC": .number(JSONNumber(endCRC)),
                "pieces": .bool(hasPieces),
            ])
        }

        init(size: Int64, sha256: String, units: Int, unitBytes: Int64, records: [String], end: String, endCRC: UInt32, hasPieces: Bool) {
            self.size = size
            self.sha256 = sha256
            self.units = units
            self.unitBytes = unitBytes
            self.records = records
            self.end = end
            self.endCRC = endCRC
            self.hasPieces = hasPieces
        }

        init(json v: JSONValue, file: String) throws {
            func bad(_ what: String) -> UsageError { UsageError("\(file): not a dumpkit index (\(what)); make one with dumpkit index") }
            guard let o = v.objectValue, let version = o["dumpkitIndex"]?.numberValue?.int64Value else { throw bad("no trailer line") }
            guard version == DumpIndex.version else { throw UsageError("\(file): index format \(version), this dumpkit reads \(DumpIndex.version); make the index again") }
            guard let size = o["size"]?.numberValue?.int64Value, let sha = o["sha256"]?.stringValue,
                  let units = o["units"]?.numberValue?.int64Value, let unitBytes = o["unitBytes"]?.numberValue?.int64Value,
                  let records = o["records"]?.arrayValue?.compactMap(\.stringValue), let end = o["end"]?.stringValue,
                  let crc = o["endCRC"]?.numberValue?.int64Value, let pieces = o["pieces"]?.boolValue
            else { throw bad("trailer fields missing") }
            self.init(size: size, sha256: sha, units: Int(units), unitBytes: unitBytes, records: records, end: end,
                      endCRC: UInt32(truncatingIfNeeded: crc), hasPieces: pieces)
        }
    }

    /// The shard (0..<count) a unit belongs to: by where its middle byte lies in the input, so each
    /// shard gets a run of consecutive units of about `size / count` bytes.
    public static func shard(of entry: Entry, count: Int, size: Int64) -> Int {
        guard size > 0 else { return 0 }
        let middle = entry.offset + entry.length / 2
        return min(count - 1, Int((Int64(count) * middle) / size))
    }

    /// Writes one entry line.
    static func write(_ e: Entry, to w: JSONWriter) throws {
        try w.beginArray()
        try w.number(JSONNumber(e.offset))
        try w.number(JSONNumber(e.length))
        try w.number(JSONNumber(e.crc))
        try w.string(e.structure)
        try w.string(e.pointer)
        try w.string(e.kind.rawValue)
        try w.endArray()
        try w.raw("\n")
    }
}

/// Streams an index file: its trailer first (read from the end), then its entries in order.
public final class DumpIndexReader {
    public let path: String
    public let trailer: DumpIndex.Trailer
    private let reader: JSONReader
    private var read = 0

    /// Opens `path` and reads its trailer; fails with a `UsageError` for a file that is not an index.
    public init(path: String) throws {
        self.path = path
        let file = try ReadOnlyFile(path: path)
        var st = stat()
        guard stat(path, &st) == 0 else { throw InputError(file: path, message: "cannot open: \(String(cString: strerror(errno)))") }
        trailer = try DumpIndex.Trailer(json: try Self.lastLine(of: file, size: Int64(st.st_size), name: path), file: path)
        reader = JSONReader(source: file.stream(), options: .init(multipleDocuments: true), sourceName: path)
    }

    /// The last line of the file, parsed: read backwards in growing blocks until a line break.
    private static func lastLine(of file: ReadOnlyFile, size: Int64, name: String) throws -> JSONValue {
        var block: Int64 = 64 << 10
        while true {
            let start = max(0, size - block)
            var bytes = [UInt8](repeating: 0, count: Int(size - start))
            var got = 0
            while got < bytes.count {
                let n = try bytes.withUnsafeMutableBytes { try file.read(at: start + Int64(got), into: UnsafeMutableRawBufferPointer(rebasing: $0[got...])) }
                if n == 0 { break }
                got += n
            }
            var end = got
            while end > 0 && bytes[end - 1] == UInt8(ascii: "\n") { end -= 1 }
            if let nl = bytes[0..<end].lastIndex(of: UInt8(ascii: "\n")) ?? (start == 0 ? -1 : nil) {
                let line = Array(bytes[(nl + 1)..<end])
                do {
                    return try JSONReader(source: MemoryByteSource(line), sourceName: name).readValue()
                } catch {
                    throw UsageError("\(name): not a dumpkit index (its last line is not JSON); make one with dumpkit index")
                }
            }
            block *= 4
        }
    }

    /// The next entry, or nil after the last.
    public func next() throws -> DumpIndex.Entry? {
        guard read < trailer.units else { return nil }
        read += 1
        func bad() -> UsageError { UsageError("\(path): entry \(read) is not an index entry; make the index again") }
        guard let a = try reader.readValue().arrayValue, a.count == 6,
              let offset = a[0].numberValue?.int64Value, let length = a[1].numberValue?.int64Value, let crc = a[2].numberValue?.int64Value,
              let structure = a[3].stringValue, let pointer = a[4].stringValue, let kind = a[5].stringValue.flatMap(DumpIndex.Kind.init)
        else { throw bad() }
        return DumpIndex.Entry(offset: offset, length: length, crc: UInt32(truncatingIfNeeded: crc), structure: structure, pointer: pointer, kind: kind)
    }
}
