import ArchiveKit
import JSONStream

/// Writes a `.tar.zst` archive in one pass over the files, with the manifest still its first entry.
///
/// Everything in the manifest but the hashes (and content types guessed from the data) is known before
/// any file is read, and those have fixed widths, so the manifest's tar entry has a known size from the
/// start. The file begins with a gap of `ZstdFrame.compressBound` of that entry plus a skippable
/// frame header, left as a hole; the other entries follow as zstd frames (`ZstdFrameWriter`), hashed as
/// they stream through (`ObjectReadAhead`), already-compressed data in raw frames. At the end the real
/// manifest entry is compressed into a frame at offset 0 and the rest of the gap becomes a skippable
/// frame, so the decompressed stream is one tar: manifest, entries, end of archive.
///
/// ```
/// [manifest frame][skippable frame: 8-byte header, hole][frame][raw frame]...[frame: end of archive]
/// ```
struct SinglePassArchiver {
    /// Already-compressed objects smaller than this are compressed with the rest (a raw stretch ends a frame).
    static let rawMinimum: Int64 = 4096
    /// Stands in for a content type still to be guessed: as long as the longest guess.
    static let contentTypePlaceholder = String(repeating: "x", count: ContentTypeGuess.longestType)
    /// Stand-ins for hashes not yet known, as wide as real ones (hex SHA-256, base64 MD5 and CRC-32C).
    private static let sha256Placeholder = String(repeating: "0", count: 64)
    private static let md5Placeholder = String(repeating: "A", count: 22) + "=="
    private static let crc32cPlaceholder = "AAAAAA=="

    let output: String
    let level: Int
    /// Worker threads that read, hash and compress while the calling thread writes the tar; with 1, the
    /// calling thread does everything (the output is the same).
    let threads: Int

    /// Archives `items` (sorted) with the metadata collected without hashing.
    func write(
        items: [ArchiveItem], collected: [MetadataCollector.Collected], created: Timestamp, kind: ArchiveManifest.Kind,
        parts: [ArchiveManifest.Part], progress: ArchiveProgress?
    ) throws {
        // The placeholder is only measured, and let go before the files are read.
        let manifestSize: Int
        let entrySize: Int
        do {
            let placeholder = try Self.json(
                of: ArchiveManifest(
                    created: created, kind: kind, parts: parts, objects: zip(items, collected).map { Self.placeholder($0, $1) }))
            manifestSize = placeholder.count
            entrySize = try manifestEntry(placeholder, created: created).count
        }
        let gap = ZstdFrame.compressBound(entrySize) + ZstdFrame.skippableHeaderSize

        let file = try OutputFile(path: output, compression: CompressionFilter.none)
        let pool = WorkerPool(threads: threads > 1 ? threads : 0)
        defer { pool.stop() }
        let frames: ZstdFrameWriter
        do {
            try file.skip(Int64(gap))
            frames = try ZstdFrameWriter(sink: file, level: level, pool: pool, name: output)
        } catch {
            file.abort()
            throw error
        }
        do {
            let writer = try ArchiveWriter(sink: frames, format: .tar, compression: .none, unbuffered: true, name: output)
            let objects = try writeEntries(items: items, collected: collected, to: writer, frames: frames, pool: pool, progress: progress)
            try writer.finish()
            try frames.finish()

            let written = ArchiveManifest(created: created, kind: kind, parts: parts, objects: objects)
            var json = try Self.json(of: written)
            precondition(json.count <= manifestSize, "the manifest outgrew its placeholder")
            // Pad to the announced size with spaces before the final line break.
            json.insert(contentsOf: repeatElement(UInt8(ascii: " "), count: manifestSize - json.count), at: json.count - 1)
            let entry = try manifestEntry(json, created: created)
            precondition(entry.count == entrySize, "the manifest entry changed size")
            var head = try ZstdFrameWriter.frame(compressing: entry, level: level, name: output)
            precondition(head.count + ZstdFrame.skippableHeaderSize <= gap, "the manifest frame outgrew its bound")
            head += ZstdFrame.skippableHeader(payloadSize: gap - head.count - ZstdFrame.skippableHeaderSize)
            try head.withUnsafeBytes { try file.write($0, at: 0) }
            try file.commit()
        } catch {
            // The frame writer's thread may be writing to the file: stopped before the file goes.
            frames.cancel()
            file.abort()
            throw error
        }
    }

    /// Writes every object's entry, hashing its bytes on the way, and returns the manifest's objects.
    private func writeEntries(
        items: [ArchiveItem], collected: [MetadataCollector.Collected], to writer: ArchiveWriter, frames: ZstdFrameWriter,
        pool: WorkerPool, progress: ArchiveProgress?
    ) throws -> [ArchiveManifest.Object] {
        let readAhead = ObjectReadAhead(items: items, collected: collected, pool: pool)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        var objects: [ArchiveManifest.Object] = []
        objects.reserveCapacity(items.count)
        while let object = try readAhead.next() {
            let item = object.item
            try writer.begin(
                ArchiveEntry(
                    path: item.path, size: item.size, modificationTime: item.modificationTime,
                    extendedAttributes: ArchiveJob.extendedAttributes(object.metadata)))
            if object.isCompressed && item.size >= Self.rawMinimum {
                // Bytes in memory go into their raw frames as they are; the writer below only counts them.
                if let data = object.data { try frames.storeRaw(data) } else { try frames.storeRaw(count: item.size) }
            }
            if let data = object.data {
                try data.withUnsafeBytes { try writer.write($0) }
                progress?.add(bytes: data.count)
            } else {
                try ObjectReadAhead.copy(object, to: writer, buffer: buffer, progress: progress)
            }
            objects.append(ArchiveManifest.Object(path: item.path, metadata: object.metadata))
            progress?.fileDone()
        }
        return objects
    }

    /// The manifest's tar entry (header, JSON, padding to 512 bytes), as the archive's first entry.
    private func manifestEntry(_ json: [UInt8], created: Timestamp) throws -> [UInt8] {
        let sink = MemoryByteSink()
        let writer = try ArchiveWriter(sink: sink, format: .tar, compression: .none, unbuffered: true, name: output)
        try writer.begin(ArchiveEntry(path: ArchiveManifest.entryName, size: Int64(json.count), modificationTime: created))
        try json.withUnsafeBytes { try writer.write($0) }
        try writer.finish()
        // Without blocking, the end of the archive is exactly two 512-byte blocks of zeros.
        return Array(sink.bytes.dropLast(1024))
    }

    /// The manifest as pretty JSON.
    private static func json(of manifest: ArchiveManifest) throws -> [UInt8] {
        let sink = MemoryByteSink()
        try manifest.write(to: JSONWriter(sink: sink, options: .init(pretty: true)))
        return sink.bytes
    }

    /// An object as the placeholder manifest holds it: hashes not yet known are as wide as real ones.
    private static func placeholder(_ item: ArchiveItem, _ collected: MetadataCollector.Collected) -> ArchiveManifest.Object {
        var object = ArchiveManifest.Object(path: item.path, metadata: collected.metadata)
        guard !collected.fromSidecar else { return object }
        object.metadata.sha256 = sha256Placeholder
        object.metadata.md5 = md5Placeholder
        object.metadata.crc32c = crc32cPlaceholder
        if collected.needsContentType { object.metadata.contentType = contentTypePlaceholder }
        return object
    }
}

extension MemoryByteSink: ArchiveSink {}
