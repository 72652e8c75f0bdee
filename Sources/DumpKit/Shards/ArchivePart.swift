import ArchiveKit
import JSONStream

/// One shard's share of a sharded archive (`archive --shard`). The part `OUT.part-I-of-N` holds the
/// entries of the shard's objects as zstd frames, without the manifest or the end of the archive;
/// `OUT.part-I-of-N.objects` holds a first line `{"level", "source", "include", "matchedIncludes"}`
/// (the `--include` patterns, and those that matched an object of the shard) and then the manifest of
/// the part's objects (an `ArchiveManifest` of only them, `created` the shard's). `merge` writes the
/// archive's manifest from those, then the parts' frames as they are, then the end of the archive:
/// concatenated zstd frames are one stream, and the tar in it is the unsharded run's entries in order.
/// Parts in a bucket are joined in the store when the output is in one too (`BucketPartStore.join`,
/// the manifest's frames and the end frame as pieces of bytes around them).
enum ArchivePart {
    /// `OUT.part-I-of-N.objects`.
    static func objectsPath(output: String, shard: Int, of shards: Int) -> String {
        ShardManifest.partPath(output: output, shard: shard, of: shards) + ".objects"
    }

    /// Writes the shard's objects atomically; returns the file's CRC-32C for the shard's manifest.
    static func write(
        _ manifest: ArchiveManifest, level: Int, source: String, include: [String], matchedIncludes: [String], to path: String
    ) throws -> UInt32 {
        let file = try OutputFile(path: path, compression: CompressionFilter.none)
        do {
            let checksum = CRC32CByteSink(file)
            let w = JSONWriter(sink: checksum, options: .compact)
            try w.value(
                .object([
                    "level": .number(JSONNumber(level)), "source": .string(source), "include": .array(include.map { .string($0) }),
                    "matchedIncludes": .array(matchedIncludes.map { .string($0) }),
                ]))
            try w.raw("\n")
            try manifest.write(to: w)
            try file.commit()
            return checksum.value
        } catch {
            file.abort()
            throw error
        }
    }

    /// What `merge` made of the parts of a sharded archive.
    struct Merged {
        var objects: Int
        var bytes: Int64
        var written: Int64
        var unmatchedIncludes: UnmatchedIncludes?
        /// Of a join in a store: the bytes the store copied itself, and those sent by this process.
        var copiedInStore: Int64? = nil
        var streamed: Int64? = nil
    }

    /// Joins the parts beside `parts` (the shards' `-o`) that the shards' `manifests` describe (checked
    /// by `MergeJob`; `stored`, their descriptions when in a bucket) into the archive `output`: the
    /// manifest of all their objects first, then the parts, then the end of the archive. Parts and
    /// output in buckets are joined in the store; otherwise the parts go through this process (local
    /// ones with `copy_file_range`). The output appears whole or not at all.
    static func merge(output: String, parts: String, manifests: [ShardManifest], stored: [StoredPart]) throws -> Merged {
        let n = manifests.count
        var objects: [ArchiveManifest.Object] = []
        var first: ArchiveManifest?
        var created = Timestamp(seconds: 0)
        var level = 3
        var matched = Set<String>()
        var include: [String] = []
        var source = ""
        for m in manifests {
            let path = objectsPath(output: parts, shard: m.shard, of: n)
            func bad(_ why: String) -> ShardError { ShardError(message: "\(path): \(why); run that shard again (--shard \(m.shard)/\(n))") }
            // In a bucket, a missing object is a missing file; refused credentials are not.
            if BucketParts.isURL(path), try !BucketParts.exists(path) { throw bad("missing") }
            let input: InputFile
            do { input = try InputFile(path: path) } catch { throw bad("missing") }
            guard try MergeJob.checksum(path).crc32c == m.objectsCRC32C else { throw bad("not the file its manifest describes") }
            let reader = JSONReader(source: input, options: .init(multipleDocuments: true), sourceName: path)
            let header = try reader.readValue().objectValue
            guard let shardLevel = header?["level"]?.numberValue?.int64Value, let shardSource = header?["source"]?.stringValue,
                let patterns = header?["include"]?.arrayValue, let matches = header?["matchedIncludes"]?.arrayValue
            else { throw bad("not the objects of an archive shard") }
            level = Int(shardLevel)
            source = shardSource
            include = patterns.compactMap(\.stringValue)
            matched.formUnion(matches.compactMap(\.stringValue))
            let part = try ArchiveManifest.read(from: reader)
            if let last = objects.last, let next = part.objects.first, !ArchiveItem.bytesPrecede(last.path, next.path) {
                throw bad("its first object \(next.path) is not after \(last.path) of the shards before")
            }
            objects += part.objects
            created = max(created, part.created)
            if first == nil { first = part }
        }
        let manifest = ArchiveManifest(created: created, kind: first!.kind, parts: first!.parts, objects: objects)
        let unmatched = include.filter { !matched.contains($0) }
        var merged = Merged(
            objects: objects.count, bytes: manifest.totalBytes, written: 0,
            unmatchedIncludes: unmatched.isEmpty ? nil : UnmatchedIncludes(patterns: unmatched, bucket: source))
        if BucketParts.isURL(output) && BucketParts.isURL(parts) {
            // The manifest's frames are held (they are smaller than its objects, which merge holds).
            let head = FrameBytes()
            try SinglePassArchiver.manifestFrames(manifest, level: level, name: output, to: head)
            let pieces =
                [JoinPiece.bytes(head.bytes)] + stored.map(JoinPiece.stored) + [
                    .bytes(try SinglePassArchiver.endFrame(level: level, name: output))
                ]
            let join = try BucketParts.store(for: output).join(pieces, into: output)
            do { try join.publish() } catch {
                join.abort()
                throw error
            }
            merged.written = pieces.reduce(0) { $0 + $1.size }
            merged.copiedInStore = join.copiedInStore
            merged.streamed = join.streamed
            return merged
        }
        let out = try OutputFile(path: output, compression: CompressionFilter.none, seekable: true)
        do {
            try SinglePassArchiver.manifestFrames(manifest, level: level, name: output, to: out)
            for m in manifests {
                let part = ShardManifest.partPath(output: parts, shard: m.shard, of: n)
                if BucketParts.isURL(part) {
                    try BucketParts.append(part, as: m, to: out)
                } else {
                    try out.append(contentsOf: part, length: m.partBytes)
                }
            }
            try SinglePassArchiver.endFrame(level: level, name: output).withUnsafeBytes { try out.write($0) }
            try out.commit()
        } catch {
            out.abort()
            throw error
        }
        merged.written = out.bytesWritten
        return merged
    }
}

/// The manifest's frames of an archive joined in a store, gathered in memory.
private final class FrameBytes: ArchiveSink {
    var bytes: [UInt8] = []
    func write(_ bytes: UnsafeRawBufferPointer) throws { self.bytes.append(contentsOf: bytes) }
}
