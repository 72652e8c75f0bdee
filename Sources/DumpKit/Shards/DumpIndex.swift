import JSONStream

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The index of a dump that sharded runs split it by (`dumpkit index`): the byte ranges of its
/// units in document order, each with the compact JSON structure that comes before it in the output
/// (object and array openings, names, commas, closings), and the input's size and SHA-256 (of the
/// decompressed bytes for seekable zstd) and, for a bucket object, its version.
///
/// A unit is a run of consecutive siblings (records, or values of a size worth one unit) of one
/// container, of at most `runBytes` together unless one alone is larger: from the first member's
/// name (in an object) or value (in an array) to the end of the last value. Runs keep the per-unit
/// work of the index pass and of every shard (an index line, a checksum, a restart of the reader)
/// to a few thousand units per gigabyte, however small the records. A dump's whole value (depth 0)
/// is a unit of its own, outside any run.
///
/// On disk it is NDJSON, so it is streamed, never held whole: one line per unit,
/// `[offset,length,crc32c,"structure","/pointer","kind",line,lineStart,"containers",members]`, where
/// the pointer is the first member's and the CRC-32C covers the input's bytes from the end of the
/// unit before (the raw bytes between the units) to the end of this one. A shard checks it for
/// every range it reads, so every byte of the input is checked by one shard against the file the
/// index was made for. The last line is the `Trailer`.
public enum DumpIndex {
    /// The format's version, in the trailer.
    public static let version = 3

    /// What a unit is to the record pipeline.
    public enum Kind: String, Sendable {
        /// Subtrees a record pattern names: records, never split.
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
        /// The compact JSON written before the unit (may be empty): in a run, up to the first
        /// member's name (ending with the container's opening or a comma).
        public var structure: String
        /// Where the unit (its first member) is in the tree.
        public var pointer: String
        public var kind: Kind
        /// The line (from 1) of the unit's end and the offset that line starts at: a shard that
        /// reports findings by line and column starts counting there (`validate`).
        public var line: Int64
        public var lineStart: Int64
        /// The containers the unit is in, outermost first: `o` an object, `a` an array.
        public var containers: String
        /// The siblings in the run (at least 1), or 0 for the dump's whole value.
        public var members: Int

        public var end: Int64 { offset + length }
        /// Whether the run's container is an object (else an array, or none for the whole value).
        var inObject: Bool { containers.utf8.last == UInt8(ascii: "o") }
        /// The run's container's brackets, which a shard reads it in.
        var brackets: (open: UInt8, close: UInt8) {
            inObject ? (UInt8(ascii: "{"), UInt8(ascii: "}")) : (UInt8(ascii: "["), UInt8(ascii: "]"))
        }
    }

    /// The index's last line: what it was made from and how.
    public struct Trailer: Sendable, Equatable {
        /// The input's size and SHA-256: a shard refuses an index made for another file.
        public var size: Int64
        public var sha256: String
        public var units: Int
        /// The largest value not split into its children, except records, which are never split.
        public var unitBytes: Int64
        /// The largest run of units (unless one alone is larger).
        public var runBytes: Int64
        /// The record patterns the index was made with (empty: units by size).
        public var records: [String]
        /// The compact JSON after the last unit (closing brackets).
        public var end: String
        /// CRC-32C of the input bytes after the last unit.
        public var endCRC: UInt32
        /// Whether a value no pattern reaches was split into pieces.
        public var hasPieces: Bool
        /// The version of the bucket object indexed (`ETag …`, `generation …`); nil for a local
        /// file, and in indexes made before it was recorded. A shard reading the object refuses
        /// another version.
        public var objectVersion: String?

        /// The identity parts and manifests name the index by.
        public var identity: String { "\(size):\(sha256):\(unitBytes):\(runBytes):\(records.joined(separator: ","))" }

        func json() -> JSONValue {
            var members: JSONObject = [
                "dumpkitIndex": .number(JSONNumber(DumpIndex.version)), "size": .number(JSONNumber(size)), "sha256": .string(sha256),
                "units": .number(JSONNumber(units)), "unitBytes": .number(JSONNumber(unitBytes)), "runBytes": .number(JSONNumber(runBytes)),
                "records": .array(records.map { .string($0) }), "end": .string(end), "endCRC": .number(JSONNumber(endCRC)),
                "pieces": .bool(hasPieces),
            ]
            if let objectVersion { members["objectVersion"] = .string(objectVersion) }
            return .object(members)
        }

        init(
            size: Int64, sha256: String, units: Int, unitBytes: Int64, runBytes: Int64, records: [String], end: String, endCRC: UInt32,
            hasPieces: Bool, objectVersion: String? = nil
        ) {
            self.size = size
            self.sha256 = sha256
            self.units = units
            self.unitBytes = unitBytes
            self.runBytes = runBytes
            self.records = records
            self.end = end
            self.endCRC = endCRC
            self.hasPieces = hasPieces
            self.objectVersion = objectVersion
        }

        init(json v: JSONValue, file: String) throws {
            func bad(_ what: String) -> UsageError { UsageError("\(file): not a dumpkit index (\(what)); make one with dumpkit index") }
            guard let o = v.objectValue, let version = o["dumpkitIndex"]?.numberValue?.int64Value else { throw bad("no trailer line") }
            guard version == DumpIndex.version else {
                throw UsageError("\(file): index format \(version), this dumpkit reads \(DumpIndex.version); make the index again")
            }
            guard let size = o["size"]?.numberValue?.int64Value, let sha = o["sha256"]?.stringValue,
                let units = o["units"]?.numberValue?.int64Value, let unitBytes = o["unitBytes"]?.numberValue?.int64Value,
                let runBytes = o["runBytes"]?.numberValue?.int64Value,
                let records = o["records"]?.arrayValue?.compactMap(\.stringValue), let end = o["end"]?.stringValue,
                let crc = o["endCRC"]?.numberValue?.int64Value, let pieces = o["pieces"]?.boolValue
            else { throw bad("trailer fields missing") }
            self.init(
                size: size, sha256: sha, units: Int(units), unitBytes: unitBytes, runBytes: runBytes, records: records, end: end,
                endCRC: UInt32(truncatingIfNeeded: crc), hasPieces: pieces, objectVersion: o["objectVersion"]?.stringValue)
        }

        /// Refuses `opened` (of `location`) when it is another version of the object indexed; a
        /// local copy, or an index without a version, is left to the size and checksums.
        func checkVersion(of opened: PositionalInput.Opened, location: String) throws {
            guard let objectVersion, let current = opened.version, current != objectVersion else { return }
            throw InputChangedError(
                description: "\(location) changed since it was indexed (\(current), index says \(objectVersion)): run dumpkit index again")
        }
    }

    /// A bucket object that is not the version its index was made from.
    public struct InputChangedError: DataError, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// The shard (0..<count) a unit belongs to: by where its middle byte lies in the input, so each
    /// shard gets a run of consecutive units of about `size / count` bytes.
    public static func shard(of entry: Entry, count: Int, size: Int64) -> Int {
        shard(middle: entry.offset + entry.length / 2, count: count, size: size)
    }

    /// The shard (0..<count) of a unit whose middle lies at `middle` of `size`.
    static func shard(middle: Int64, count: Int, size: Int64) -> Int {
        guard size > 0 else { return 0 }
        return min(count - 1, Int((Int64(count) * middle) / size))
    }

    /// Writes one entry line (numbers as digits, no values built).
    static func writeEntry(
        offset: Int64, length: Int64, crc: UInt32, structure: [UInt8], pointer: String, kind: Kind, line: Int64, lineStart: Int64,
        containers: [UInt8], members: Int, to w: JSONWriter
    ) throws {
        try w.beginArray()
        try number(offset, to: w)
        try number(length, to: w)
        try number(Int64(crc), to: w)
        try structure.withUnsafeBytes { try w.string(utf8: $0) }
        try w.string(pointer)
        try w.string(kind.rawValue)
        try number(line, to: w)
        try number(lineStart, to: w)
        try containers.withUnsafeBytes { try w.string(utf8: $0) }
        try number(Int64(members), to: w)
        try w.endArray()
        try w.raw("\n")
    }

    private static func number(_ n: Int64, to w: JSONWriter) throws {
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
        try withUnsafeMutableBytes(of: &digits) { b in
            var v = UInt64(n)
            var i = b.count
            repeat {
                i -= 1
                b[i] = UInt8(ascii: "0") + UInt8(v % 10)
                v /= 10
            } while v > 0
            try w.number(text: UnsafeRawBufferPointer(rebasing: b[i...]))
        }
    }
}

/// Streams an index file: its trailer first (read from the end), then its entries in order, from
/// the first or (`seek(to:)`) from the first of a shard, found by bisection, so that a shard reads
/// only about its share of the index. An index in a bucket (`s3://`, `gs://`: a few kilobytes per
/// megabyte of dump) is downloaded to a temporary file first.
public final class DumpIndexReader {
    public let path: String
    public let trailer: DumpIndex.Trailer
    private let file: PositionalByteSource
    /// Where the trailer line starts: the entries end there.
    private let entriesEnd: Int64
    private var reader: JSONReader

    /// Opens `path` and reads its trailer; fails with a `UsageError` for a file that is not an index.
    public init(path: String) throws {
        self.path = path
        let size: Int64
        if BucketParts.isURL(path) {
            let copy = try TemporaryFile.spool(try InputFile(path: path, decompressing: false))
            file = copy
            size = copy.size
        } else {
            file = try ReadOnlyFile(path: path)
            var st = stat()
            guard stat(path, &st) == 0 else { throw InputError(file: path, message: "cannot open: \(String(cString: strerror(errno)))") }
            size = Int64(st.st_size)
        }
        let (start, line) = try Self.lastLine(of: file, size: size, name: path)
        entriesEnd = start
        trailer = try DumpIndex.Trailer(json: line, file: path)
        reader = JSONReader(source: file.stream(from: 0, to: start), options: .init(multipleDocuments: true), sourceName: path)
    }

    /// The last line of the file, parsed, and where it starts: read backwards in growing blocks.
    private static func lastLine(of file: PositionalByteSource, size: Int64, name: String) throws -> (Int64, JSONValue) {
        var block: Int64 = 64 << 10
        while true {
            let start = max(0, size - block)
            let bytes = try read(file, from: start, count: Int(size - start))
            var end = bytes.count
            while end > 0 && bytes[end - 1] == UInt8(ascii: "\n") { end -= 1 }
            if let nl = bytes[0..<end].lastIndex(of: UInt8(ascii: "\n")) ?? (start == 0 ? -1 : nil) {
                let line = Array(bytes[(nl + 1)..<end])
                do {
                    return (start + Int64(nl + 1), try JSONReader(source: MemoryByteSource(line), sourceName: name).readValue())
                } catch {
                    throw UsageError("\(name): not a dumpkit index (its last line is not JSON); make one with dumpkit index")
                }
            }
            block *= 4
        }
    }

    private static func read(_ file: PositionalByteSource, from start: Int64, count: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var got = 0
        while got < count {
            let n = try bytes.withUnsafeMutableBytes {
                try file.read(at: start + Int64(got), into: UnsafeMutableRawBufferPointer(rebasing: $0[got...]))
            }
            if n == 0 { break }
            got += n
        }
        return Array(bytes[0..<got])
    }

    /// The next entry, or nil after the last.
    public func next() throws -> DumpIndex.Entry? {
        guard try reader.peek() != .end else { return nil }
        return try Self.entry(from: reader, file: path)
    }

    /// Moves to the first entry of `shard` (`DumpIndex.shard`) and returns the entry before it (nil
    /// for none): its end is where the bytes the first entry's checksum covers start.
    public func seek(to shard: ShardSpec) throws -> DumpIndex.Entry? {
        var lo: Int64 = 0
        var hi = entriesEnd
        // The smallest line start whose entry is of `shard` or later (`entriesEnd` for none).
        while lo < hi {
            let mid = lo + (hi - lo) / 2
            let start = try lineStart(atOrAfter: mid)
            if start < entriesEnd, DumpIndex.shard(of: try entry(at: start), count: shard.count, size: trailer.size) < shard.index {
                lo = start + 1
            } else {
                hi = mid
            }
        }
        let first = try lineStart(atOrAfter: lo)
        reader = JSONReader(source: file.stream(from: first, to: entriesEnd), options: .init(multipleDocuments: true), sourceName: path)
        guard first > 0 else { return nil }
        return try entry(at: try lineStart(before: first))
    }

    /// The start of the first line that starts at or after `offset`.
    private func lineStart(atOrAfter offset: Int64) throws -> Int64 {
        guard offset > 0 else { return 0 }
        var at = offset - 1
        while at < entriesEnd {
            let bytes = try Self.read(file, from: at, count: Int(min(4096, entriesEnd - at)))
            if let nl = bytes.firstIndex(of: UInt8(ascii: "\n")) { return at + Int64(nl) + 1 }
            at += Int64(bytes.count)
        }
        return entriesEnd
    }

    /// The start of the line that ends just before the line starting at `start` (> 0).
    private func lineStart(before start: Int64) throws -> Int64 {
        var end = start - 1
        while end > 0 {
            let from = max(0, end - 4096)
            let bytes = try Self.read(file, from: from, count: Int(end - from))
            if let nl = bytes.lastIndex(of: UInt8(ascii: "\n")) { return from + Int64(nl) + 1 }
            end = from
        }
        return 0
    }

    /// The entry on the line starting at `offset`.
    private func entry(at offset: Int64) throws -> DumpIndex.Entry {
        let r = JSONReader(
            source: file.stream(from: offset, to: entriesEnd), options: .init(multipleDocuments: true, bufferSize: 4096), sourceName: path)
        return try Self.entry(from: r, file: path)
    }

    /// Reads one entry line's array token by token (no values built).
    private static func entry(from r: JSONReader, file: String) throws -> DumpIndex.Entry {
        func bad() -> UsageError { UsageError("\(file): byte \(r.offset) is not in an index entry; make the index again") }
        func integer() throws -> Int64 {
            // Digits only, at most 18 of them: no sign, no overflow.
            guard try r.next() == .number, r.bytes.count <= 18 else { throw bad() }
            var n: Int64 = 0
            for b in r.bytes {
                guard b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") else { throw bad() }
                n = n * 10 + Int64(b - UInt8(ascii: "0"))
            }
            return n
        }
        func string() throws -> String {
            guard try r.next() == .string else { throw bad() }
            return r.stringValue
        }
        guard try r.next() == .beginArray else { throw bad() }
        let offset = try integer(), length = try integer(), crc = try integer()
        let structure = try string(), pointer = try string()
        guard let kind = DumpIndex.Kind(rawValue: try string()) else { throw bad() }
        let line = try integer(), lineStart = try integer(), containers = try string(), members = try integer()
        guard try r.next() == .endArray, (members == 0) == containers.isEmpty,
            let segments = JSONPointer.segments(pointer), segments.count == containers.utf8.count,
            containers.utf8.last != UInt8(ascii: "a") || Int(segments[segments.count - 1]) != nil
        else { throw bad() }
        return DumpIndex.Entry(
            offset: offset, length: length, crc: UInt32(truncatingIfNeeded: crc), structure: structure, pointer: pointer, kind: kind,
            line: line, lineStart: lineStart, containers: containers, members: Int(members))
    }
}
