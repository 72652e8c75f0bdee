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
/// by bytes whatever the dump's shape. Consecutive units of one container are joined into runs of
/// at most `runBytes` (unless one alone is larger), so the index of a
/// large dump has a few thousand units however small its records, and a shard's bytes stay within
/// a unit of its share for any count of shards up to a few hundred.
public struct DumpIndexJob {
    public var input: String
    public var output: String
    /// The record patterns of the runs the index is for (`--records` of convert).
    public var records: [PathPattern] = []
    /// Without records: the depth of the units (containers above it are structure).
    public var depth = 1
    /// The largest unit that is not a record, in bytes.
    public var unitBytes: Int64 = 1 << 20
    /// The largest run of units, in bytes; nil for the smaller of `unitBytes` and 1/4,096 of the
    /// dump.
    public var runBytes: Int64?

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
        if let runBytes, runBytes < 1 || runBytes > unitBytes {
            throw UsageError("--run-bytes must be from 1 to --unit-bytes (\(unitBytes)): a run is never larger than a unit")
        }
        let opened = try PositionalInput.open(input)
        // One pass over the source: the reader and the checksums of the ranges it just passed read
        // the same source, whose recent blocks (a bucket object's) or frames (seekable zstd's) are
        // still at hand.
        let counted = CountingByteSource(opened.source.stream(), onRead: progress?.attach(total: opened.size))
        let hashing = HashingByteSource(counted)
        let reader = JSONReader(source: hashing, sourceName: input)
        let watch = DuplicateKeyError.Watch(reader, file: input)
        let outFile = try OutputFile(path: output, compression: CompressionFilter.none)
        let runBytes = runBytes ?? min(unitBytes, max(1, opened.size / 4096))
        do {
            let scan = try IndexScan(
                file: opened.source, name: input, sink: outFile, patterns: records, depth: depth, unitBytes: unitBytes, runBytes: runBytes)
            try scan.walk(reader)
            try watch.check()
            let size = counted.bytesRead
            guard size == opened.size else {
                throw InputError(file: input, message: "changed while it was read (\(size) bytes read of \(opened.size))")
            }
            let trailer = DumpIndex.Trailer(
                size: size, sha256: hashing.hex, units: scan.units, unitBytes: unitBytes, runBytes: runBytes, records: records.map(\.text),
                end: String(decoding: scan.structure, as: UTF8.self), endCRC: try scan.endCRC(size: size),
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

/// The index pass's walk: structure bytes collected between units, one entry line per run of
/// siblings (`DumpIndex`).
private final class IndexScan {
    private struct Level {
        var isObject: Bool
        var active: [Int]
        var count = 0
    }

    /// Siblings read but not yet written as one unit.
    private struct Run {
        /// Where the first member starts (its name in an object), and the last one's value ends.
        var start: Int64
        var end: Int64
        /// The compact JSON before the first member's name.
        var structure: [UInt8]
        /// The first member's path.
        var path: [String]
        var kind: DumpIndex.Kind
        var members: Int
    }

    let file: PositionalByteSource
    let name: String
    let writer: JSONWriter
    let patterns: [PathPattern]
    let depth: Int
    let unitBytes: Int64
    /// The largest run of siblings (unless one alone is larger).
    let runBytes: Int64
    /// The compact JSON since the last unit.
    private(set) var structure: [UInt8] = []
    /// The open containers, outermost first (`o` or `a`).
    private var containers: [UInt8] = []
    /// The run waiting: always of the innermost container (`open` and `close` write it).
    private var run: Run?
    /// The checksum of the input from the last unit written to `checkedTo`: the ends of the
    /// run's members, checksummed as they come, so the bytes are read again while still at hand.
    private var pendingCRC = CRC32C()
    private var checkedTo: Int64 = 0
    /// The input's line breaks before `checkedTo`, and where its line starts.
    private var lines: Int64 = 0
    private var lineStart: Int64 = 0
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

    init(
        file: PositionalByteSource, name: String, sink: JSONByteSink, patterns: [PathPattern], depth: Int, unitBytes: Int64, runBytes: Int64
    ) throws {
        self.file = file
        self.name = name
        writer = JSONWriter(sink: sink)
        self.patterns = patterns
        self.depth = depth
        self.unitBytes = unitBytes
        self.runBytes = runBytes
        nameWriter = JSONWriter(sink: nameSink)
    }

    /// Walks the whole document `r` reads (from offset 0), as `DumpReader` would with `patterns`.
    func walk(_ r: JSONReader) throws {
        var levels: [Level] = []
        var path: [String] = []
        let k = try r.peek()
        let isContainer = k == .beginObject || k == .beginArray
        if patterns.contains(where: { $0.depth == 0 }) {
            let start = r.offset
            try r.skipValue()
            records += 1
            try whole(start: start, end: r.bytesConsumed, kind: .record)
        } else if isContainer && (patterns.isEmpty ? depth > 0 : true) {
            try r.next()
            try open(isObject: k == .beginObject)
            levels.append(Level(isObject: k == .beginObject, active: Array(patterns.indices)))
        } else {
            try content(r, base: 0, parent: [], key: nil, memberStart: 0, nameMark: 0, kind: .content)
        }
        while let level = levels.last {
            let t = try r.peek()
            if t == .endObject || t == .endArray {
                try r.next()
                try close(isObject: t == .endObject)
                levels.removeLast()
                if !levels.isEmpty { path.removeLast() }
                continue
            }
            if level.count > 0 { structure.append(UInt8(ascii: ",")) }
            let memberStart = r.offset
            let nameMark = structure.count
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
                try r.skipValue()
                records += 1
                try member(memberStart: memberStart, end: r.bytesConsumed, nameMark: nameMark, parent: path, key: key, kind: .record)
            } else if descends && (next == .beginObject || next == .beginArray) {
                try r.next()
                try open(isObject: next == .beginObject)
                levels.append(Level(isObject: next == .beginObject, active: deeper))
                path.append(key)
            } else {
                try content(r, base: 0, parent: path, key: key, memberStart: memberStart, nameMark: nameMark, kind: .content)
            }
        }
        guard try r.next() == .end else { throw r.error(.trailingData, "unexpected data after the JSON value") }
        try flushRun()
    }

    /// A value no pattern reaches, at `key` of `parent` (nil: the dump's whole value): one unit (a
    /// member of a run inside a container), or, larger than `unitBytes`, its children read again.
    /// `memberStart` and `nameMark` are as for `member`.
    private func content(
        _ r: JSONReader, base: Int64, parent: [String], key: String?, memberStart: Int64, nameMark: Int, kind: DumpIndex.Kind
    ) throws {
        let k = try r.peek()
        let start = base + r.offset
        try r.skipValue()
        let end = base + r.bytesConsumed
        guard end - start > unitBytes, k == .beginObject || k == .beginArray else {
            if let key {
                try member(memberStart: base + memberStart, end: end, nameMark: nameMark, parent: parent, key: key, kind: kind)
            } else {
                try whole(start: start, end: end, kind: kind)
            }
            return
        }
        hasPieces = true
        let path = key.map { parent + [$0] } ?? parent
        let sub = JSONReader(source: file.stream(from: start, to: end), sourceName: name)
        try sub.next()
        try open(isObject: k == .beginObject)
        var count = 0
        while true {
            let t = try sub.peek()
            if t == .endObject || t == .endArray {
                try sub.next()
                try close(isObject: t == .endObject)
                return
            }
            if count > 0 { structure.append(UInt8(ascii: ",")) }
            let childStart = sub.offset
            let childMark = structure.count
            var key = String(count)
            if k == .beginObject {
                try sub.next()
                key = sub.stringValue
                try appendName(sub)
            }
            count += 1
            try content(sub, base: start, parent: path, key: key, memberStart: childStart, nameMark: childMark, kind: .piece)
        }
    }

    /// A unit at `key` of `parent`, the innermost container, from `memberStart` (its name in an
    /// object) to `end`, whose name is in `structure` from `nameMark` on (after the comma before it):
    /// joins the run of its siblings before it while the run stays within `runBytes`, else starts a
    /// run (the only case that needs its path).
    private func member(memberStart: Int64, end: Int64, nameMark: Int, parent: [String], key: String, kind: DumpIndex.Kind) throws {
        if var r = run, r.kind == kind, end - r.start <= runBytes {
            run = nil
            r.end = end
            r.members += 1
            run = r
            // Its comma and name are among the run's bytes.
            structure.removeAll(keepingCapacity: true)
            try checksum(to: end)
            return
        }
        try flushRun()
        run = Run(
            start: memberStart, end: end, structure: Array(structure[0..<nameMark]), path: parent + [key], kind: kind, members: 1)
        structure.removeAll(keepingCapacity: true)
        try checksum(to: end)
    }

    /// Writes the run waiting, if any: of the innermost container, which has not changed since.
    private func flushRun() throws {
        guard let r = run else { return }
        run = nil
        try emit(
            start: r.start, end: r.end, structure: r.structure, pointer: JSONPointer.string(r.path), kind: r.kind,
            containers: containers, members: r.members)
    }

    /// The dump's whole value as one unit (no container, no run).
    private func whole(start: Int64, end: Int64, kind: DumpIndex.Kind) throws {
        try checksum(to: end)
        try emit(start: start, end: end, structure: structure, pointer: "", kind: kind, containers: [], members: 0)
        structure.removeAll(keepingCapacity: true)
    }

    /// Writes a unit whose bytes up to `end` are checksummed.
    private func emit(
        start: Int64, end: Int64, structure: [UInt8], pointer: String, kind: DumpIndex.Kind, containers: [UInt8], members: Int
    ) throws {
        precondition(checkedTo == end, "a unit written before its bytes were checksummed")
        try DumpIndex.writeEntry(
            offset: start, length: end - start, crc: pendingCRC.value, structure: structure, pointer: pointer, kind: kind,
            line: lines + 1, lineStart: lineStart, containers: containers, members: members, to: writer)
        pendingCRC = CRC32C()
        units += 1
    }

    /// A container opens: a run before it ends there.
    private func open(isObject: Bool) throws {
        try flushRun()
        structure.append(isObject ? UInt8(ascii: "{") : UInt8(ascii: "["))
        containers.append(isObject ? UInt8(ascii: "o") : UInt8(ascii: "a"))
    }

    private func close(isObject: Bool) throws {
        try flushRun()
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

    /// CRC-32C of the input's bytes from the last unit's end to `size` (after the last unit).
    func endCRC(size: Int64) throws -> UInt32 {
        try checksum(to: size)
        return pendingCRC.value
    }

    /// Adds the input's bytes from `checkedTo` to `to` to `pendingCRC`, read again (from the page
    /// cache, as a rule) in 1 MiB blocks: the ranges come in order, so most lie in the block read
    /// for the one before. Counts the line breaks on the way (the ranges follow each other from
    /// byte 0).
    private func checksum(to: Int64) throws {
        var at = checkedTo
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
                pendingCRC.update(bytes)
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
        checkedTo = to
    }
}
