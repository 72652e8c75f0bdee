import ArchiveKit
import JSONStream

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

    /// `wholeRange`: the source serves the shard's whole range as one document (`ShardUnitSource`).
    init(
        _ spec: ShardSpec, indexPath: String, input: String, output: String, writerOptions: JSONWriter.Options, wholeRange: Bool = false
    ) throws {
        self.spec = spec
        let index = try DumpIndexReader(path: indexPath)
        trailer = index.trailer
        let (file, size) = try PositionalInput.open(input)
        guard size == trailer.size else {
            throw UsageError(
                "\(indexPath) was made for a file of \(trailer.size) bytes (SHA-256 \(trailer.sha256)), but \(input) has \(size): "
                    + "make the index from this file (dumpkit index \(input))")
        }
        source = try ShardUnitSource(
            index: index, file: file, fileName: input, spec: spec, wholeRange: wholeRange)
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
        return (part.bytesWritten, hashing.hex, hashing.crc32c, source.bytesRead)
    }

    func abort() { part.abort() }

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
