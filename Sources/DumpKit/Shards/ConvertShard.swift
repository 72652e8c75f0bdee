import ArchiveKit
import JSONStream

extension ConvertJob {
    /// What the merged output's bytes depend on besides the input: all shards of a run must agree.
    var shardOptions: String {
        let to = outputFormat
        let patterns = to == .ndjson && records.isEmpty ? ["/*"] : records.map(\.text)
        return "to=\(to.rawValue) canonical=\(writerOptions.sortKeys)" + (to == .ndjson ? " records=\(patterns.joined(separator: ","))" : "")
    }

    /// Runs shard `spec` of this conversion from the index at `indexPath`: reads only the shard's
    /// units (and the bytes between them, to check them), writes `output.part-I-of-N` and then its
    /// manifest. Joined in order by `MergeJob`, the parts are the bytes the unsharded run writes.
    public func runShard(_ spec: ShardSpec, indexPath: String, progress: ProgressMeter? = nil) throws -> ShardManifest {
        let to = outputFormat
        try checkShardable(to: to)
        let index = try DumpIndexReader(path: indexPath)
        let trailer = index.trailer
        if to == .ndjson {
            let patterns = records.isEmpty ? ["/*"] : records.map(\.text)
            guard trailer.records == patterns else {
                throw UsageError("\(indexPath) was made with " + (trailer.records.isEmpty ? "no --records" : "--records \(trailer.records.joined(separator: " "))")
                    + ", but NDJSON output writes the records \(patterns.joined(separator: " ")): make the index with the same --records")
            }
            guard !trailer.hasPieces else {
                throw UsageError("\(indexPath) split values no record pattern reaches into pieces, and NDJSON output writes each such value as one record: "
                    + "make the index with a larger --unit-bytes or with --records naming records inside them")
            }
        }
        let file = try ReadOnlyFile(path: input)
        let size = try Self.fileSize(input)
        guard size == trailer.size else {
            throw UsageError("\(indexPath) was made for a file of \(trailer.size) bytes (SHA-256 \(trailer.sha256)), but \(input) has \(size): "
                + "make the index from this file (dumpkit index \(input))")
        }
        let out = try OutputFile(path: ShardManifest.partPath(output: output, shard: spec.index, of: spec.count), compression: CompressionFilter.none)
        do {
            let hashing = HashingByteSink(out)
            let writer = JSONWriter(sink: hashing, options: writerOptions)
            let source = ShardUnitSource(index: index, file: file, fileName: input, spec: spec)
            let reader = JSONReader(source: source, options: .init(multipleDocuments: true), sourceName: input)
            var units = 0
            while try reader.peek() != .end {
                let entry = source.takeEntry()
                switch to {
                case .json:
                    var structure = entry.structure
                    try structure.withUTF8 { try writer.raw(bytes: UnsafeRawBufferPointer($0)) }
                    try reader.transfer(to: writer)
                case .ndjson:
                    try NDJSONWriter.writeLine(pointer: entry.pointer, to: writer) { try reader.transfer(to: $0) }
                }
                units += 1
                if units & 1023 == 0 { progress?.recordDone() }
            }
            if spec.index == spec.count - 1 {
                try source.checkEnd()
                if to == .json {
                    // The closing brackets, and the line break `DumpWriter.finish` ends a tree with.
                    var end = trailer.end
                    try end.withUTF8 { try writer.raw(bytes: UnsafeRawBufferPointer($0)) }
                    try writer.raw("\n")
                }
            }
            try writer.flush()
            try out.commit()
            progress?.finish()
            let manifest = ShardManifest(command: "convert", shard: spec.index, shards: spec.count, index: trailer.identity, options: shardOptions,
                                         units: units, records: to == .ndjson ? units : 0, bytesIn: source.bytesRead,
                                         partBytes: out.bytesWritten, partSHA256: hashing.hex)
            try manifest.write(output: output)
            return manifest
        } catch {
            out.abort()
            progress?.finish()
            throw error
        }
    }

    /// Refuses what a shard cannot write so that the joined parts equal the unsharded output.
    private func checkShardable(to: DumpFormat) throws {
        if input == "-" { throw UsageError("a shard reads its byte ranges of the dump: give a file, not standard input") }
        if output == "-" { throw UsageError("a shard writes OUT.part-I-of-N beside its output: give -o OUT, not standard output") }
        if inputFormat != .json { throw UsageError("sharded runs read a JSON tree through its index; NDJSON input is converted unsharded (dumpkit convert without --index)") }
        let compression = CompressionFilter.forPath(output)
        if compression != .none {
            throw UsageError("\(output) would be \(compression)-compressed, and compressed parts do not join into the unsharded bytes: "
                + "shard to a plain output and compress the merged file (dumpkit convert OUT -o OUT.zst), or run unsharded")
        }
        if writerOptions.pretty { throw UsageError("--pretty cannot be sharded yet: run unsharded, or shard to compact JSON and re-format the merged file") }
        if writerOptions.sortKeys && to == .json {
            throw UsageError("--canonical reorders members of objects that several shards write, so it cannot be sharded: run unsharded, "
                + "or shard to compact JSON and run dumpkit convert --canonical on the merged file")
        }
        if duplicateKeys == .keepLast {
            throw UsageError("--duplicate-keys keep-last reads the whole dump first, so it cannot be sharded: run unsharded (the index refuses duplicate names)")
        }
    }

    /// The size of the regular file at `path`.
    private static func fileSize(_ path: String) throws -> Int64 {
        let f = try InputFile(path: path)
        if f.compression != .none {
            throw UsageError("\(path) is \(f.compression)-compressed, and a compressed stream cannot be read from the middle: decompress it first")
        }
        guard let size = f.size else { throw UsageError("\(path) is not a regular file: shards read it at their own offsets") }
        return size
    }
}
