import ArchiveKit
import Foundation
import JSONStream
import Synchronization

/// What every shard of a run does around its command's own work: checks that the index is for the
/// input, reads the shard's units through a `ShardUnitSource`, writes the part `OUT.part-I-of-N`
/// (the structure before each unit, what the command makes of the unit, and in the last shard the
/// closing brackets), and commits it.
final class ShardRun {
    let spec: ShardSpec
    let trailer: DumpIndex.Trailer
    let reader: JSONReader
    let writer: JSONWriter
    let source: ShardUnitSource
    private let part: OutputFile
    private let checksum: CRC32CByteSink
    /// The input, for errors.
    private let input: String
    private(set) var units = 0
    /// The store's ETag of a part written to S3 (`-o s3://...`), for the manifest.
    private(set) var partETag: String?

    /// `wholeRange`: the source serves the shard's whole range as one document (`ShardUnitSource`).
    init(
        _ spec: ShardSpec, indexPath: String, input: String, output: String, writerOptions: JSONWriter.Options, wholeRange: Bool = false
    ) throws {
        self.spec = spec
        self.input = input
        let index = try DumpIndexReader(path: indexPath)
        trailer = index.trailer
        let opened = try PositionalInput.open(input)
        try trailer.checkVersion(of: opened, location: input)
        guard opened.size == trailer.size else {
            throw UsageError(
                "\(indexPath) was made for a file of \(trailer.size) bytes (SHA-256 \(trailer.sha256)), but \(input) has \(opened.size): "
                    + "make the index from this file (dumpkit index \(input))")
        }
        source = try ShardUnitSource(
            index: index, file: opened.source, fileName: input, spec: spec, wholeRange: wholeRange)
        reader = JSONReader(source: source, options: .init(multipleDocuments: true), sourceName: input)
        part = try OutputFile(
            path: ShardManifest.partPath(output: output, shard: spec.index, of: spec.count), compression: CompressionFilter.none)
        checksum = CRC32CByteSink(part)
        writer = JSONWriter(sink: checksum, options: writerOptions)
    }

    /// The next unit of the shard, the reader standing before its value; nil after the last.
    func nextUnit() throws -> DumpIndex.Entry? {
        guard try reader.peek() != .end else { return nil }
        units += 1
        return source.takeEntry()
    }

    /// Writes a unit of a JSON tree as it is: the structure before it, then its values compactly,
    /// each counted by `progress`.
    func transferUnit(_ entry: DumpIndex.Entry, progress: ProgressMeter?) throws {
        try beginUnit(entry)
        if entry.members == 0 {
            try reader.transfer(to: writer)
            progress?.recordDone()
        } else {
            try members(of: entry) { isObject in
                if isObject { try writer.name(utf8: reader.bytes, needsEscaping: reader.lastStringHadEscapes) }
                try reader.transfer(to: writer)
                progress?.recordDone()
            }
        }
        try endUnit(entry)
    }

    /// Calls `body` with the path of each value of `entry`'s unit, the reader standing before the
    /// value (which `body` reads): the dump's whole value, or each member of a run.
    func forEachValue(of entry: DumpIndex.Entry, _ body: ([String]) throws -> Void) throws {
        var path = JSONPointer.segments(entry.pointer) ?? []
        guard entry.members > 0, let firstKey = path.last else { return try body(path) }
        let first = Int(firstKey) ?? 0
        var i = 0
        try members(of: entry) { isObject in
            path[path.count - 1] = isObject ? reader.stringValue : String(first + i)
            i += 1
            try body(path)
        }
    }

    /// Reads the brackets of a run around its members, calling `body` for each with the reader
    /// before its value (after its name in an object: `true`); checks their count.
    private func members(of entry: DumpIndex.Entry, _ body: (Bool) throws -> Void) throws {
        // The source serves the run in its container's brackets.
        let isObject = try reader.next() == .beginObject
        var count = 0
        while true {
            let t = try reader.peek()
            if t == .endObject || t == .endArray {
                try reader.next()
                break
            }
            if isObject { try reader.next() }
            try body(isObject)
            count += 1
        }
        guard count == entry.members else {
            throw UsageError(
                "\(input): bytes \(entry.offset)..<\(entry.end) (\(entry.pointer)) hold \(count) values, the index says \(entry.members): "
                    + "make the index again")
        }
    }

    /// Writes what comes before the values of a unit of a JSON tree: the structure, and for a run
    /// the container it continues (`writeValue`, then `endUnit`).
    func beginUnit(_ entry: DumpIndex.Entry) throws {
        var structure = entry.structure
        try structure.withUTF8 { try writer.raw(bytes: UnsafeRawBufferPointer($0)) }
        if entry.members > 0 { try writer.continueContainer(isObject: entry.inObject) }
    }

    /// Writes a value of the unit `beginUnit` began, at `path` (its name in an object).
    func writeValue(_ value: JSONValue, at path: [String], of entry: DumpIndex.Entry) throws {
        if entry.members > 0 && entry.inObject { try writer.name(path[path.count - 1]) }
        try writer.value(value)
    }

    func endUnit(_ entry: DumpIndex.Entry) throws {
        if entry.members > 0 { try writer.endContinued() }
    }

    /// Ends the part (in the last shard, after checking the input's bytes after the last unit: for a
    /// tree, the closing brackets and the line break `DumpWriter.finish` ends a tree with), syncs it
    /// and renames it into place. Returns its size, CRC-32C and the input bytes read.
    func commit(tree: Bool) throws -> (bytes: Int64, crc32c: UInt32, bytesIn: Int64) {
        if spec.index == spec.count - 1 {
            try source.checkEnd()
            if tree {
                var end = trailer.end
                try end.withUTF8 { try writer.raw(bytes: UnsafeRawBufferPointer($0)) }
                try writer.raw("\n")
            }
        }
        try writer.flush()
        try part.commit()
        partETag = try part.storedETag()
        return (part.bytesWritten, checksum.value, source.bytesRead)
    }

    /// The manifest of the shard whose part `written` committed (`commit(tree:)`): what every
    /// command's manifest holds; the caller adds its own counts. `units` defaults to those handed out.
    func manifest(
        command: String, options: String, written: (bytes: Int64, crc32c: UInt32, bytesIn: Int64), units: Int? = nil,
        records: Int = 0
    ) -> ShardManifest {
        var m = ShardManifest(
            command: command, shard: spec.index, shards: spec.count, index: trailer.identity, options: options, units: units ?? self.units,
            records: records, bytesIn: written.bytesIn, partBytes: written.bytes, partCRC32C: written.crc32c)
        m.partETag = partETag
        return m
    }

    func abort() { part.abort() }

    /// Reads every value of the shard's units as a record at its place in the tree (with the
    /// captures of the first of `patterns` it lies in), runs batches of them through `transformer`
    /// (up to `concurrency` slices of a batch at once, as the pipeline's workers would), and writes
    /// each in its place: the structure before its unit, then the value compactly. A blob step
    /// rewrites strings and small objects, which never span values, so the results are the
    /// unsharded run's output.
    func transformUnits(_ transformer: RecordTransformer, patterns: [PathPattern], concurrency: Int, progress: ProgressMeter?) throws {
        let workers = max(1, concurrency)
        /// Each record's unit, and whether it is the unit's first or last value.
        var slots: [(entry: DumpIndex.Entry, first: Bool, last: Bool)] = []
        var records: [Record] = []
        var bytes: Int64 = 0
        func flush() throws {
            guard !records.isEmpty else { return }
            let size = (records.count + workers - 1) / workers
            let slices = stride(from: 0, to: records.count, by: size).map { Array(records[$0..<min($0 + size, records.count)]) }
            let results = Mutex([Result<[[Record]], Error>?](repeating: nil, count: slices.count))
            DispatchQueue.concurrentPerform(iterations: slices.count) { i in
                let result = Result<[[Record]], Error> {
                    do { return try transformer.transform(batch: slices[i]) } catch let e as BatchRecordError { throw e.underlying }
                }
                results.withLock { $0[i] = result }
            }
            // The first failure in the dump's order, as a run one record at a time would report.
            let done = try results.withLock { $0 }.flatMap { try $0!.get() }
            for ((slot, record), out) in zip(zip(slots, records), done) {
                if slot.first { try beginUnit(slot.entry) }
                guard out.count == 1, let value = out[0].value else {
                    throw UsageError(
                        "\(JSONPointer.string(record.path)): \(transformer.name) did not keep this value where it was, which a shard cannot write"
                    )
                }
                try writeValue(value, at: record.path, of: slot.entry)
                if slot.last { try endUnit(slot.entry) }
            }
            slots.removeAll(keepingCapacity: true)
            records.removeAll(keepingCapacity: true)
            bytes = 0
        }
        while let entry = try nextUnit() {
            let values = max(1, entry.members)
            var i = 0
            try forEachValue(of: entry) { path in
                let captures = ExtractBlobs.captures(patterns, path) ?? [:]
                slots.append((entry, i == 0, i == values - 1))
                let start = reader.bytesConsumed
                records.append(Record(path: path, captures: captures, value: try reader.readValue()))
                bytes += reader.bytesConsumed - start
                i += 1
                progress?.recordDone()
                // Batches end between values, even inside a run: memory is that of a batch, not of a run.
                if records.count >= 64 * workers || bytes >= 16 << 20 { try flush() }
            }
        }
        try flush()
    }

    /// Refuses inputs and outputs no shard can use.
    static func checkFiles(input: String, output: String) throws {
        if input == "-" { throw UsageError("a shard reads its byte ranges of the dump: give a file, not standard input") }
        if output == "-" { throw UsageError("a shard writes OUT.part-I-of-N beside its output: give -o OUT, not standard output") }
        let compression = CompressionFilter.forPath(output)
        if compression != .none {
            throw UsageError(
                "\(output) would be \(compression)-compressed, and compressed parts do not join into the unsharded bytes: "
                    + "shard to a plain output and compress the merged file (dumpkit convert OUT -o OUT.zst), or run unsharded")
        }
    }
}
