import ArchiveKit
import JSONStream

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// `dumpkit index`: one streaming pass over a plain or seekable zstd dump that writes its `DumpIndex`, so sharded runs
/// can each read only their byte ranges.
///
/// Values are skipped, never built. Records (the subtrees `records` name) are units whole; without
/// records, the values at `depth` are. A unit that is not a record and turns out larger than
/// `unitBytes` is read again from its offset and split into its children, so shards stay balanced
/// by bytes whatever the dump's shape.
public struct DumpIndexJob {
    public var input: String
    public var output: String
    /// The record patterns of the runs the index is for (`--records` of convert).
    public var records: [PathPattern] = []
    /// Without records: the depth of the units (containers above it are structure).
    public var depth = 1
    /// The largest unit that is not a record, in bytes.
    public var unitBytes: Int64 = 1 << 20

    public init(input: String, output: String) {
        self.input = input
        self.output = output
    }

    /// What a run did.
    public struct Summary: Sendable {
        public var units: Int
        public var records: Int
        public var bytesIn: Int64
        public var indexBytes: Int64
        public var sha256: String
        /// Whether values no pattern reaches were split (such an index serves JSON tree output only).
        public var hasPieces: Bool
    }

    /// Writes the index; it appears only if the whole dump was read.
    public func run(progress: ProgressMeter? = nil) throws -> Summary {
        if input == "-" {
            throw UsageError("index needs a file: shards read the dump at their own offsets, which standard input cannot give")
        }
        guard depth >= 0 else { throw UsageError("--depth must be at least 0") }
        guard unitBytes >= 1 else { throw UsageError("--unit-bytes must be at least 1") }
        let opened = try PositionalInput.open(input)
        // One pass over the source: the reader and the checksums of the ranges it just passed read
        // the same source, whose recent blocks (a bucket object's) or frames (seekable zstd's) are
        // still at hand.
        let counted = CountingByteSource(opened.source.stream(), onRead: progress?.attach(total: opened.size))
        let hashing = HashingByteSource(counted)
        let reader = JSONReader(source: hashing, sourceName: input)
        let watch = DuplicateKeyError.Watch(reader, file: input)
        let outFile = try OutputFile(path: output, compression: CompressionFilter.none)
        do {
            let scan = try IndexScan(
                file: opened.source, name: input, sink: outFile, patterns: records, depth: depth, unitBytes: unitBytes
            )
            try scan.walk(reader)
            try watch.check()
            let size = counted.bytesRead
            guard size == opened.size else {
                throw InputError(file: input, message: "changed while it was read (\(size) bytes read of \(opened.size))")
            }
            let trailer = DumpIndex.Trailer(
                size: size, sha256: hashing.hex, units: scan.units, unitBytes: unitBytes, records: records.map(\.text),
                end: String(decoding: scan.structure, as: UTF8.self), endCRC: try scan.crc(from: scan.previousEnd, to: size),
                hasPieces: scan.hasPieces, objectVersion: opened.version)
            try scan.writer.value(trailer.json())
            try scan.writer.raw("\n")
            try scan.writer.flush()
            try outFile.commit()
            progress?.finish()
            return Summary(
                units: scan.units, records: scan.records, bytesIn: size, indexBytes: outFile.bytesWritten, sha256: trailer.sha256,
                hasPieces: scan.hasPieces)
        } catch {
            outFile.abort()
            progress?.finish()
            throw error
        }
    }
}

/// Counts the bytes read from a source, for the progress meter and the input's size.
private final class CountingByteSource: JSONByteSource {
    private let source: JSONByteSource
    private let onRead: ((Int64) -> Void)?
    private(set) var bytesRead: Int64 = 0

    init(_ source: JSONByteSource, onRead: ((Int64) -> Void)?) {
        self.source = source
        self.onRead = onRead
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let n = try source.read(into: buffer)
        bytesRead += Int64(n)
        onRead?(bytesRead)
        return n
    }
}

/// The index pass's walk: structure bytes collected between units, one entry line per unit.
private final class IndexScan {
    private struct Level {
        var isObject: Bool
        var active: [Int]
        var count = 0
    }

    let file: PositionalByteSource
    let name: String
    let writer: JSONWriter
    let patterns: [PathPattern]
    let depth: Int
    let unitBytes: Int64
    /// The compact JSON since the last unit.
    private(set) var structure: [UInt8] = []
    /// The open containers, outermost first (`o` or `a`).
    private var containers: [UInt8] = []
    /// The input's line breaks before the end of the last range checksummed, and where its line starts.
    private var lines: Int64 = 0
    private var lineStart: Int64 = 0
    private(set) var previousEnd: Int64 = 0
    private(set) var units = 0
    private(set) var records = 0
    private(set) var hasPieces = false
    /// Encodes names exactly as a compact `JSONWriter` writes them.
    private let nameSink = MemoryByteSink()
    private let nameWriter: JSONWriter
    /// A block of the input read for checksums, from `blockOffset`, `blockCount` bytes of it.
    private var block = [UInt8](repeating: 0, count: 1 << 20)
    private var blockOffset: Int64 = 0
    private var blockCount = 0

    init(file: PositionalByteSource, name: String, sink: JSONByteSink, patterns: [PathPattern], depth: Int, unitBytes: Int64) throws {
        self.file = file
        self.name = name
        writer = JSONWriter(sink: sink)
        self.patterns = patterns
        self.depth = depth
        self.unitBytes = unitBytes
        nameWriter = JSONWriter(sink: nameSink)
    }

    /// Walks the whole document `r` reads (from offset 0), as `DumpReader` would with `patterns`.
    func walk(_ r: JSONReader) throws {
        var levels: [Level] = []
        var path: [String] = []
        let k = try r.peek()
        let isContainer = k == .beginObject || k == .beginArray
        if patterns.contains(where: { $0.depth == 0 }) {
            try unit(r, base: 0, path: [], kind: .record)
        } else if isContainer && (patterns.isEmpty ? depth > 0 : true) {
            try r.next()
            open(isObject: k == .beginObject)
            levels.append(Level(isObject: k == .beginObject, active: Array(patterns.indices)))
        } else {
            try content(r, base: 0, path: [], kind: .content)
        }
        while let level = levels.last {
            let t = try r.peek()
            if t == .endObject || t == .endArray {
                try r.next()
                close(isObject: t == .endObject)
                levels.removeLast()
                if !levels.isEmpty { path.removeLast() }
                continue
            }
            if level.count > 0 { structure.append(UInt8(ascii: ",")) }
            let key: String
            if level.isObject {
                try r.next()
                key = r.stringValue
                try appendName(r)
            } else {
                key = String(level.count)
            }
            levels[levels.count - 1].count += 1
            let childDepth = path.count + 1
            var exact = false
            var deeper: [Int] = []
            for i in level.active where patterns[i].segmentMatches(key, at: childDepth - 1) {
                if patterns[i].depth == childDepth { exact = true } else { deeper.append(i) }
            }
            let next = try r.peek()
            let descends = patterns.isEmpty ? childDepth < depth : !deeper.isEmpty
            if exact {
                try unit(r, base: 0, path: path + [key], kind: .record)
            } else if descends && (next == .beginObject || next == .beginArray) {
                try r.next()
                open(isObject: next == .beginObject)
                levels.append(Level(isObject: next == .beginObject, active: deeper))
                path.append(key)
            } else {
                try content(r, base: 0, path: path + [key], kind: .content)
            }
        }
        guard try r.next() == .end else { throw r.error(.trailingData, "unexpected data after the JSON value") }
    }

    /// A value no pattern reaches: one unit, or, larger than `unitBytes`, its children read again.
    private func content(_ r: JSONReader, base: Int64, path: [String], kind: DumpIndex.Kind) throws {
        let k = try r.peek()
        let start = base + r.offset
        try r.skipValue()
        let end = base + r.bytesConsumed
        guard end - start > unitBytes, k == .beginObject || k == .beginArray else {
            try emit(start: start, end: end, path: path, kind: kind)
            return
        }
        hasPieces = true
        let sub = JSONReader(source: file.stream(from: start, to: end), sourceName: name)
        try sub.next()
        open(isObject: k == .beginObject)
        var count = 0
        while true {
            let t = try sub.peek()
            if t == .endObject || t == .endArray {
                try sub.next()
                close(isObject: t == .endObject)
                return
            }
            if count > 0 { structure.append(UInt8(ascii: ",")) }
            var key = String(count)
            if k == .beginObject {
                try sub.next()
                key = sub.stringValue
                try appendName(sub)
            }
            count += 1
            try content(sub, base: start, path: path + [key], kind: .piece)
        }
    }

    /// A record: one unit whatever its size.
    private func unit(_ r: JSONReader, base: Int64, path: [String], kind: DumpIndex.Kind) throws {
        _ = try r.peek()
        let start = base + r.offset
        try r.skipValue()
        records += 1
        try emit(start: start, end: base + r.bytesConsumed, path: path, kind: kind)
    }

    private func emit(start: Int64, end: Int64, path: [String], kind: DumpIndex.Kind) throws {
        let crc = try crc(from: previousEnd, to: end)
        try DumpIndex.writeEntry(
            offset: start, length: end - start, crc: crc, structure: structure, pointer: JSONPointer.string(path), kind: kind,
            line: lines + 1, lineStart: lineStart, containers: containers, to: writer)
        structure.removeAll(keepingCapacity: true)
        previousEnd = end
        units += 1
    }

    private func open(isObject: Bool) {
        structure.append(isObject ? UInt8(ascii: "{") : UInt8(ascii: "["))
        containers.append(isObject ? UInt8(ascii: "o") : UInt8(ascii: "a"))
    }

    private func close(isObject: Bool) {
        structure.append(isObject ? UInt8(ascii: "}") : UInt8(ascii: "]"))
        containers.removeLast()
    }

    /// The name `r` just read, as a compact writer writes it (`"name":`).
    private func appendName(_ r: JSONReader) throws {
        // Without escapes, strict input has nothing to escape: the writer copies the name.
        if !r.lastStringHadEscapes {
            structure.append(UInt8(ascii: "\""))
            structure.append(contentsOf: r.bytes)
            structure.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
            return
        }
        nameWriter.reset()
        try nameWriter.beginObject()
        try nameWriter.name(utf8: r.bytes, needsEscaping: r.lastStringHadEscapes)
        try nameWriter.flush()
        structure.append(contentsOf: nameSink.bytes.dropFirst())
        nameSink.removeAll(keepingCapacityUpTo: 1 << 16)
    }

    /// CRC-32C of the input's bytes in `from..<to`, read again (from the page cache, as a rule) in
    /// 1 MiB blocks: the ranges come in order, so most lie in the block read for the one before.
    /// Counts the line breaks on the way (the ranges follow each other from byte 0).
    func crc(from: Int64, to: Int64) throws -> UInt32 {
        var crc = CRC32C()
        var at = from
        while at < to {
            if at < blockOffset || at >= blockOffset + Int64(blockCount) {
                blockOffset = at
                blockCount = try block.withUnsafeMutableBytes { try file.read(at: at, into: $0) }
                if blockCount == 0 { throw InputError(file: name, message: "changed while it was read (ends before byte \(to))") }
            }
            let start = Int(at - blockOffset)
            let n = Int(min(to - at, Int64(blockCount - start)))
            block.withUnsafeBytes { b in
                let bytes = UnsafeRawBufferPointer(rebasing: b[start..<(start + n)])
                crc.update(bytes)
                // memchr: a compact dump has no line break, and a pretty one few per block.
                var i = 0
                while i < n, let hit = memchr(bytes.baseAddress! + i, 0x0A, n - i) {
                    i = bytes.baseAddress!.distance(to: UnsafeRawPointer(hit)) + 1
                    lines += 1
                    lineStart = at + Int64(i)
                }
            }
            at += Int64(n)
        }
        return crc.value
    }
}
