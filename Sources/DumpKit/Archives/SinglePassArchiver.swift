import ArchiveKit
import JSONStream
import Workers

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
    /// Worker threads that read, hash and compress while the calling thread writes the tar (and a thread
    /// of the frame writer writes the output); with 1, the calling thread does everything (the output is
    /// the same).
    let threads: Int

    /// Archives `items` (sorted) with the metadata collected without hashing; returns the bucket objects
    /// that changed while they were read (left out of the manifest, see `writeEntries`).
    @discardableResult
    func write(
        items: [ArchiveItem], collected: [MetadataCollector.Collected], created: Timestamp, kind: ArchiveManifest.Kind,
        parts: [ArchiveManifest.Part], progress: ArchiveProgress?
    ) throws -> [ArchiveSourceChange] {
        // The placeholder is only measured, and let go before the files are read.
        let manifestSize = try Self.jsonSize(
            of: ArchiveManifest(created: created, kind: kind, parts: parts, objects: zip(items, collected).map { Self.placeholder($0, $1) })
        )
        let entrySize = try manifestEntryHeader(jsonSize: manifestSize, created: created).bytes.count + Self.blockPadded(manifestSize)
        let gap = ZstdFrame.compressBound(entrySize) + ZstdFrame.skippableHeaderSize

        let file = try OutputFile(path: output, compression: CompressionFilter.none, seekable: true)
        do { try file.skip(Int64(gap)) } catch {
            file.abort()
            throw error
        }
        return try withFrames(file: file, sink: file) { frames, pool in
            let writer = try ArchiveWriter(sink: frames, format: .tar, compression: .none, unbuffered: true, name: output)
            let (objects, changes) = try writeEntries(
                items: items, collected: collected, to: writer, frames: frames, pool: pool, progress: progress)
            try writer.finish()
            try frames.finish()

            let written = ArchiveManifest(created: created, kind: kind, parts: parts, objects: objects)
            let entry = try manifestEntry(written, jsonSize: manifestSize, entrySize: entrySize, created: created)
            var head = try ZstdFrameWriter.frame(compressing: entry, level: level, name: output)
            precondition(head.count + ZstdFrame.skippableHeaderSize <= gap, "the manifest frame outgrew its bound")
            head += ZstdFrame.skippableHeader(payloadSize: gap - head.count - ZstdFrame.skippableHeaderSize)
            try head.withUnsafeBytes { try file.write($0, at: 0) }
            try file.commit()
            return changes
        }
    }

    /// Writes one shard's part of a sharded archive (`archive --shard`) to `output`: the entries of
    /// `items` as zstd frames, without the manifest or the end of the archive, which `merge` writes
    /// around the joined parts. Returns the manifest's objects, the bucket objects that changed, and the
    /// part's size, CRC-32C and, written to S3, the ETag the store gave it (which `merge`
    /// checks it by).
    func writePart(items: [ArchiveItem], collected: [MetadataCollector.Collected], progress: ArchiveProgress?) throws -> (
        objects: [ArchiveManifest.Object], changes: [ArchiveSourceChange], bytes: Int64, crc32c: UInt32, etag: String?
    ) {
        let file = try OutputFile(path: output, compression: CompressionFilter.none)
        let checksum = CRC32CByteSink(file)
        return try withFrames(file: file, sink: checksum) { frames, pool in
            let writer = try ArchiveWriter(sink: frames, format: .tar, compression: .none, unbuffered: true, name: output)
            let (objects, changes) = try writeEntries(
                items: items, collected: collected, to: writer, frames: frames, pool: pool, progress: progress)
            try writer.finish(endOfArchive: false)
            try frames.finish()
            try file.commit()
            return (objects, changes, file.bytesWritten, checksum.value, try file.storedETag())
        }
    }

    /// Runs `body` with a frame writer on `sink` (and the worker pool it compresses on); when
    /// anything fails, the writer's thread is stopped before `file` is aborted.
    private func withFrames<T>(file: OutputFile, sink: ArchiveSink, _ body: (ZstdFrameWriter, WorkerPool) throws -> T) throws -> T {
        let pool = WorkerPool(threads: threads > 1 ? threads : 0)
        defer { pool.stop() }
        let frames: ZstdFrameWriter
        do {
            frames = try ZstdFrameWriter(sink: sink, level: level, pool: pool, name: output)
        } catch {
            file.abort()
            throw error
        }
        do {
            return try body(frames, pool)
        } catch {
            frames.cancel()
            file.abort()
            throw error
        }
    }

    /// The manifest's entry, compressed into zstd frames at `level`, as the first frames of a merged
    /// sharded archive: the parts' frames follow it, and `endFrame` after them.
    static func manifestFrames(_ manifest: ArchiveManifest, level: Int, name: String, to sink: ArchiveSink) throws {
        let pool = WorkerPool(threads: 0)
        defer { pool.stop() }
        let frames = try ZstdFrameWriter(sink: sink, level: level, pool: pool, name: name)
        do {
            let writer = try ArchiveWriter(sink: frames, format: .tar, compression: .none, unbuffered: true, name: name)
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
            defer { buffer.deallocate() }
            try ArchiveJob.writeManifest(manifest, to: writer, buffer: buffer)
            try writer.finish(endOfArchive: false)
            try frames.finish()
        } catch {
            frames.cancel()
            throw error
        }
    }

    /// The end of a tar archive (two zero blocks) as one zstd frame.
    static func endFrame(level: Int, name: String) throws -> [UInt8] {
        try ZstdFrameWriter.frame(compressing: [UInt8](repeating: 0, count: 1024), level: level, name: name)
    }

    /// Writes every object's entry, hashing its bytes on the way, and returns the manifest's objects and
    /// the bucket objects that changed. A bucket object found changed before its entry begins has no
    /// entry; one found changed midway (only a large one, streamed) keeps its entry, ended with zeros,
    /// but is left out of the manifest, so that `verify` and `restore` report it. The placeholder
    /// manifest counted them all: the real one is smaller, and padded.
    private func writeEntries(
        items: [ArchiveItem], collected: [MetadataCollector.Collected], to writer: ArchiveWriter, frames: ZstdFrameWriter,
        pool: WorkerPool, progress: ArchiveProgress?
    ) throws -> ([ArchiveManifest.Object], [ArchiveSourceChange]) {
        let readAhead = ObjectReadAhead(items: items, collected: collected, pool: pool)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        var objects: [ArchiveManifest.Object] = []
        var changes: [ArchiveSourceChange] = []
        objects.reserveCapacity(items.count)
        while let object = try readAhead.next() {
            let item = object.item
            if let change = object.change {
                changes.append(change)
                progress?.fileDone()
                continue
            }
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
            } else if item.remote != nil {
                if case .changed(var change, let zeros) = try ObjectReadAhead.copyRemote(object, to: writer, progress: progress) {
                    change.outcome =
                        zeros > 0
                        ? "its entry, begun before, ends in \(zeros) bytes of zeros and is left out of the manifest (verify and restore report it)"
                        : "its entry is left out of the manifest (verify and restore report it)"
                    changes.append(change)
                    progress?.fileDone()
                    continue
                }
            } else {
                try ObjectReadAhead.copy(object, to: writer, buffer: buffer, progress: progress)
            }
            objects.append(ArchiveManifest.Object(path: item.path, metadata: object.metadata))
            progress?.fileDone()
        }
        return (objects, changes)
    }

    /// The manifest's tar entry, as the archive's first entry: its header, the manifest as pretty JSON
    /// padded with spaces to `jsonSize` before the final line break, zeros to the next 512-byte block.
    /// Built in one buffer of `entrySize` bytes.
    private func manifestEntry(_ manifest: ArchiveManifest, jsonSize: Int, entrySize: Int, created: Timestamp) throws -> [UInt8] {
        let buffer = try manifestEntryHeader(jsonSize: jsonSize, created: created, capacity: entrySize)
        let start = buffer.bytes.count
        try manifest.write(to: JSONWriter(sink: buffer, options: .init(pretty: true)))
        let written = buffer.bytes.count - start
        precondition(written <= jsonSize, "the manifest outgrew its placeholder")
        buffer.bytes.insert(contentsOf: repeatElement(UInt8(ascii: " "), count: jsonSize - written), at: buffer.bytes.count - 1)
        buffer.bytes.append(contentsOf: repeatElement(0, count: Self.blockPadded(jsonSize) - jsonSize))
        precondition(buffer.bytes.count == entrySize, "the manifest entry changed size")
        return buffer.bytes
    }

    /// The tar header (pax and ustar) of a manifest entry of `jsonSize` bytes, as libarchive writes it.
    private func manifestEntryHeader(jsonSize: Int, created: Timestamp, capacity: Int = 0) throws -> EntryBuffer {
        let buffer = EntryBuffer(capacity: capacity)
        // Unbuffered, the header reaches the buffer when the entry begins; the unfinished writer is dropped.
        let writer = try ArchiveWriter(sink: buffer, format: .tar, compression: .none, unbuffered: true, name: output)
        try writer.begin(ArchiveEntry(path: ArchiveManifest.entryName, size: Int64(jsonSize), modificationTime: created))
        precondition(!buffer.bytes.isEmpty && buffer.bytes.count % 512 == 0, "libarchive held back the manifest's header")
        return buffer
    }

    /// `count` rounded up to whole 512-byte tar blocks.
    private static func blockPadded(_ count: Int) -> Int { (count + 511) / 512 * 512 }

    /// The size of the manifest as pretty JSON, counted without keeping the bytes.
    private static func jsonSize(of manifest: ArchiveManifest) throws -> Int {
        let counter = ByteCounter()
        try manifest.write(to: JSONWriter(sink: counter, options: .init(pretty: true)))
        return counter.count
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

/// Bytes of the manifest entry, in a buffer sized for it up front.
private final class EntryBuffer: ArchiveSink, JSONByteSink {
    var bytes: [UInt8] = []
    init(capacity: Int) { bytes.reserveCapacity(capacity) }
    func write(_ bytes: UnsafeRawBufferPointer) throws { self.bytes.append(contentsOf: bytes) }
}

extension CRC32CByteSink: ArchiveSink {}

/// Counts the bytes written to it.
private final class ByteCounter: JSONByteSink {
    var count = 0
    func write(_ bytes: UnsafeRawBufferPointer) throws { count += bytes.count }
}
