import ArchiveKit
import JSONStream

/// One shard's share of a sharded archive (`archive --shard`). The part `OUT.part-I-of-N` holds the
/// entries of the shard's objects as zstd frames, without the manifest or the end of the archive;
/// `OUT.part-I-of-N.objects` holds a first line `{"level", "source", "include", "matchedIncludes"}`
/// (the `--include` patterns, and those that matched an object of the shard) and then the manifest of
/// the part's objects (an `ArchiveManifest` of only them, `created` the shard's). `merge` writes the
/// archive's manifest from those, then the parts' frames as they are, then the end of the archive:
/// concatenated zstd frames are one stream, and the tar in it is the unsharded run's entries in order.
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
            let hashing = HashingByteSink(file, crc32c: true)
            let w = JSONWriter(sink: hashing, options: .compact)
            try w.value(
                .object([
                    "level": .number(JSONNumber(level)), "source": .string(source), "include": .array(include.map { .string($0) }),
                    "matchedIncludes": .array(matchedIncludes.map { .string($0) }),
                ]))
            try w.raw("\n")
            try manifest.write(to: w)
            try file.commit()
            return hashing.crc32c
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
    }

    /// Joins the parts the shards' `manifests` describe (checked by `MergeJob`) into the archive
    /// `output`: the manifest of all their objects first, then the parts, then the end of the archive.
    /// The output appears whole or not at all.
    static func merge(output: String, manifests: [ShardManifest]) throws -> Merged {
        let n = manifests.count
        var objects: [ArchiveManifest.Object] = []
        var first: ArchiveManifest?
        var created = Timestamp(seconds: 0)
        var level = 3
        var matched = Set<String>()
        var include: [String] = []
        var source = ""
        for m in manifests {
            let path = objectsPath(output: output, shard: m.shard, of: n)
            func bad(_ why: String) -> ShardError { ShardError(message: "\(path): \(why); run that shard again (--shard \(m.shard)/\(n))") }
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
        let out = try OutputFile(path: output, compression: CompressionFilter.none, seekable: true)
        do {
            try SinglePassArchiver.manifestFrames(manifest, level: level, name: output, to: out)
            for m in manifests {
                try out.append(contentsOf: ShardManifest.partPath(output: output, shard: m.shard, of: n), length: m.partBytes)
            }
            try SinglePassArchiver.endFrame(level: level, name: output).withUnsafeBytes { try out.write($0) }
            try out.commit()
        } catch {
            out.abort()
            throw error
        }
        let unmatched = include.filter { !matched.contains($0) }
        return Merged(
            objects: objects.count, bytes: manifest.totalBytes, written: out.bytesWritten,
            unmatchedIncludes: unmatched.isEmpty ? nil : UnmatchedIncludes(patterns: unmatched, bucket: source))
    }
}
