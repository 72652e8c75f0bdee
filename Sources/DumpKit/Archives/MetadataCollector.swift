import ArchiveKit
import Dispatch
import Foundation
import JSONStream
import Synchronization
import Workers

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Works out the metadata of every item before anything is archived (the manifest comes first), on
/// several threads: from the blob store's sidecar when it matches the file, else by reading the file
/// once in 1 MiB blocks (SHA-256, MD5, CRC-32C, content type from magic bytes or extension). Without
/// `hashing`, files are not read: what a sidecar does not say is left for the caller to fill in.
///
/// A bucket object (`ArchiveItem.remote`) has the metadata its store described; with `hashing`, its
/// hashes are the store's when it gives all three, else it is read once, a window
/// of objects at a time (`ObjectReadAhead`), and hashed. One that changed meanwhile has a `change`.
struct MetadataCollector {
    /// Worker threads.
    let threads: Int
    /// Whether to hash the files that have no usable sidecar.
    var hashing = true

    /// The metadata of one item, and whether its hashes come from a sidecar (and so still need a check).
    struct Collected: Sendable {
        var metadata: BlobMetadata
        var fromSidecar: Bool
        /// Collected without hashing and without a sidecar: the hashes are empty and the content type
        /// is still to be guessed from the file's first bytes.
        var needsContentType = false
        /// A bucket object that changed since it was listed: it is left out.
        var change: ArchiveSourceChange?
    }

    /// Collects the metadata of `items`, in their order; `notes` receives remarks such as stale sidecars.
    func collect(_ items: [ArchiveItem], progress: ArchiveProgress?, notes: inout [String]) throws -> [Collected] {
        let state = SharedState(count: items.count)
        DispatchQueue.concurrentPerform(iterations: max(1, min(threads, items.count))) { _ in
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
            defer { buffer.deallocate() }
            while let index = state.nextIndex() {
                do {
                    let (collected, note) = try Self.metadata(of: items[index], hashing: hashing, buffer: buffer, progress: progress)
                    state.store(collected, note: note, at: index)
                    // A bucket object still to be read is done when it is.
                    if !(hashing && items[index].remote != nil && !collected.fromSidecar) { progress?.fileDone() }
                } catch {
                    state.fail(error)
                }
            }
        }
        let outcome = try state.outcome()
        notes += outcome.notes
        var results = outcome.results
        if hashing { try readRemote(items, into: &results, progress: progress) }
        return results
    }

    /// Reads and hashes the bucket objects whose store did not give their hashes, in order, a window
    /// ahead (the source bounds the reads in flight); a large one streams through the hashes.
    private func readRemote(_ items: [ArchiveItem], into results: inout [Collected], progress: ArchiveProgress?) throws {
        let indices = items.indices.filter { items[$0].remote != nil && !results[$0].fromSidecar }
        guard !indices.isEmpty else { return }
        // Bucket objects only: the pool's threads are not needed.
        let pool = WorkerPool(threads: 0)
        let readAhead = ObjectReadAhead(items: indices.map { items[$0] }, collected: indices.map { results[$0] }, pool: pool)
        for index in indices {
            guard let object = try readAhead.next() else { break }
            var change = object.change
            if change == nil, let data = object.data {
                progress?.add(bytes: data.count)
            } else if change == nil, case .changed(let found, _) = try ObjectReadAhead.copyRemote(object, to: nil, progress: progress) {
                change = found
            }
            if let change {
                results[index].change = change
            } else {
                results[index] = Collected(metadata: object.metadata, fromSidecar: true)
            }
            progress?.fileDone()
        }
    }

    /// The metadata of one item.
    private static func metadata(
        of item: ArchiveItem, hashing: Bool, buffer: UnsafeMutableRawBufferPointer, progress: ArchiveProgress?
    ) throws -> (
        Collected, String?
    ) {
        if let remote = item.remote {
            // What the store described, as a sidecar would (a content type it has none of stays none);
            // its hashes stand in for a sidecar's when it gave all three.
            let object = remote.object
            let known = hashing && object.hasAllHashes
            var metadata = object.blobMetadata
            if !known { (metadata.sha256, metadata.md5, metadata.crc32c) = ("", "", "") }
            return (Collected(metadata: metadata, fromSidecar: known), nil)
        }
        var stored: BlobMetadata?
        var note: String?
        if let (sidecar, bytes) = try sidecar(of: item) {
            do {
                var metadata = try BlobMetadata(json: try JSONReader(bytes: bytes).readValue())
                if metadata.name != item.name {
                    note =
                        "\(sidecar): describes \(String(reflecting: metadata.name)), not \(String(reflecting: item.name)); hashes and content type recomputed"
                } else {
                    if metadata.updated == nil { metadata.updated = item.modificationTime.milliseconds }
                    if metadata.size == item.size {
                        progress?.add(bytes: Int(item.size))
                        return (Collected(metadata: metadata, fromSidecar: true), nil)
                    }
                    note = "\(item.file): the metadata sidecar says \(metadata.size) bytes, the file has \(item.size); hashes recomputed"
                    stored = metadata
                }
            } catch {
                note = "\(sidecar): not valid metadata (\(error)); hashes and content type recomputed"
            }
        }
        guard hashing else {
            var metadata =
                stored
                ?? BlobMetadata(
                    name: item.name, size: item.size, contentType: nil, sha256: "", md5: "", crc32c: "",
                    updated: item.modificationTime.milliseconds)
            metadata.size = item.size
            return (Collected(metadata: metadata, fromSidecar: false, needsContentType: stored == nil), note)
        }
        let digest = try hash(item, buffer: buffer, progress: progress)
        let (sha256, md5, crc32c) = digest.finalize()
        var metadata =
            stored
            ?? BlobMetadata(
                name: item.name, size: item.size, contentType: ContentTypeGuess.contentType(name: item.name, head: digest.head),
                sha256: sha256, md5: md5, crc32c: crc32c, updated: item.modificationTime.milliseconds)
        metadata.size = item.size
        metadata.sha256 = sha256
        metadata.md5 = md5
        metadata.crc32c = crc32c
        return (Collected(metadata: metadata, fromSidecar: false), note)
    }

    /// Reads the file of `item` once and hashes it.
    private static func hash(_ item: ArchiveItem, buffer: UnsafeMutableRawBufferPointer, progress: ArchiveProgress?) throws -> ObjectDigest
    {
        let descriptor = try SourceFile.open(item.file)
        defer { close(descriptor) }
        var digest = ObjectDigest()
        while true {
            let count = read(descriptor, buffer.baseAddress, buffer.count)
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw InputError(file: item.file, message: "cannot read: \(String(cString: strerror(errno)))") }
            if count == 0 { break }
            digest.update(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
            progress?.add(bytes: count)
        }
        guard digest.size == item.size else {
            throw InputError(
                file: item.file, message: "changed while being archived (\(item.size) bytes when listed, \(digest.size) when read)")
        }
        return digest
    }

    /// The path and bytes of the item's sidecar, if it has one.
    private static func sidecar(of item: ArchiveItem) throws -> (String, [UInt8])? {
        guard let path = item.sidecar, let bytes = try SourceFile.contents(path) else { return nil }
        return (path, bytes)
    }
}

/// The work queue and results shared by the collector's threads.
private final class SharedState: Sendable {
    private struct Work {
        var next = 0
        var results: [MetadataCollector.Collected?]
        var notes: [String] = []
        var failure: Error?
    }

    private let count: Int
    private let work: Mutex<Work>

    init(count: Int) {
        self.count = count
        work = Mutex(Work(results: Array(repeating: nil, count: count)))
    }

    /// The next item to work on, or `nil` when all are taken or one failed.
    func nextIndex() -> Int? {
        work.withLock { work in
            guard work.failure == nil, work.next < count else { return nil }
            work.next += 1
            return work.next - 1
        }
    }

    func store(_ collected: MetadataCollector.Collected, note: String?, at index: Int) {
        work.withLock { work in
            work.results[index] = collected
            if let note { work.notes.append(note) }
        }
    }

    func fail(_ error: Error) {
        work.withLock { work in if work.failure == nil { work.failure = error } }
    }

    /// The results in item order and the notes, or the first failure (once every thread is done).
    func outcome() throws -> (results: [MetadataCollector.Collected], notes: [String]) {
        try work.withLock { work in
            if let error = work.failure { throw error }
            return (work.results.map { $0! }, work.notes)
        }
    }
}
