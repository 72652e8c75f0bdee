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
    private let hashing: HashingByteSink
    private(set) var units = 0
    /// The store's ETag of a part written to S3 (`-o s3://...`), for the manifest.
    private(set) var partETag: String?

    /// `wholeRange`: the source serves the shard's whole range as one document (`ShardUnitSource`).
    init(
        _ spec: ShardSpec, indexPath: String, input: String, output: String, writerOptions: JSONWriter.Options, wholeRange: Bool = false
    ) throws {
        self.spec = spec
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
        hashing = HashingByteSink(part, crc32c: true)
        writer = JSONWriter(sink: hashing, options: writerOptions)
    }

    /// The next unit of the shard, the reader standing before its value; nil after the last.
    func nextUnit() throws -> DumpIndex.Entry? {
        guard try reader.peek() != .end else { return nil }
        units += 1
        return source.takeEntry()
    }

    /// Writes the structure before a unit of a JSON tree.
    func writeStructure(_ entry: DumpIndex.Entry) throws {
        var structure = entry.structure
        try structure.withUTF8 { try writer.raw(bytes: UnsafeRawBufferPointer($0)) }
    }

    /// Ends the part (in the last shard, after checking the input's bytes after the last unit: for a
    /// tree, the closing brackets and the line break `DumpWriter.finish` ends a tree with), syncs it
    /// and renames it into place. Returns its size, SHA-256, CRC-32C and the input bytes read.
    func commit(tree: Bool) throws -> (bytes: Int64, sha256: String, crc32c: UInt32, bytesIn: Int64) {
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
        return (part.bytesWritten, hashing.hex, hashing.crc32c, source.bytesRead)
    }

    /// The manifest of the shard whose part `written` committed (`commit(tree:)`): what every
    /// command's manifest holds; the caller adds its own counts. `units` defaults to those handed out.
    func manifest(
        command: String, options: String, written: (bytes: Int64, sha256: String, crc32c: UInt32, bytesIn: Int64), units: Int? = nil,
        records: Int = 0
    ) -> ShardManifest {
        var m = ShardManifest(
            command: command, shard: spec.index, shards: spec.count, index: trailer.identity, options: options, units: units ?? self.units,
            records: records, bytesIn: written.bytesIn, partBytes: written.bytes, partSHA256: written.sha256, partCRC32C: written.crc32c)
        m.partETag = partETag
        return m
    }

    func abort() { part.abort() }

    /// Reads every unit of the shard as a record at its place in the tree (with the captures of the
    /// first of `patterns` it lies in), runs batches of them through `transformer` (up to
    /// `concurrency` slices of a batch at once, as the pipeline's workers would), and writes each
    /// unit in its place: the structure before it, then its value compactly. A blob step rewrites
    /// strings and small objects, which never span units, so the units' results are the unsharded
    /// run's output.
    func transformUnits(_ transformer: RecordTransformer, patterns: [PathPattern], concurrency: Int, progress: ProgressMeter?) throws {
        let workers = max(1, concurrency)
        var entries: [DumpIndex.Entry] = []
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
            for (entry, out) in zip(entries, done) {
                try writeStructure(entry)
                guard out.count == 1, let value = out[0].value else {
                    throw UsageError(
                        "\(entry.pointer): \(transformer.name) did not keep this value where it was, which a shard cannot write")
                }
                try writer.value(value)
            }
            entries.removeAll(keepingCapacity: true)
            records.removeAll(keepingCapacity: true)
            bytes = 0
        }
        while let entry = try nextUnit() {
            let path = JSONPointer.segments(entry.pointer) ?? []
            let captures = ExtractBlobs.captures(patterns, path) ?? [:]
            entries.append(entry)
            records.append(Record(path: path, captures: captures, value: try reader.readValue()))
            bytes += entry.length
            if records.count >= 64 * workers || bytes >= 16 << 20 { try flush() }
            if units & 1023 == 0 { progress?.recordDone() }
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
