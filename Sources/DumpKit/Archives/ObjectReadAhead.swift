import ArchiveKit
import Crypto
import Foundation
import JSONStream
import Workers

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Reads and hashes the objects to archive ahead of the archive writer, on a worker pool, and hands
/// them over in order.
///
/// Objects of up to `bufferLimit` bytes are read into memory in groups of up to `groupSize`, one worker
/// job a group, and hashed there (SHA-256, MD5 and CRC-32C, the group's MD5s side by side with
/// `ContentDigest.digests(of:)`; only SHA-256, checked, when a sidecar gave the hashes); the writer takes
/// their bytes from memory. A larger one is a job of its own, hashed while it is read, and the writer
/// reads it again (`copy(_:to:buffer:progress:)`) and checks its CRC-32C against the first read. At most
/// `budget` bytes of objects wait at a time.
final class ObjectReadAhead {
    /// The largest object kept in memory between hashing and writing.
    static let bufferLimit = 8 << 20
    /// The most bytes of objects read ahead.
    static let budget = 32 << 20
    /// The most objects read ahead.
    static let depth = 128
    /// The most objects one job reads and hashes: enough for the sixteen MD5 lanes to stay busy.
    static let groupSize = 32

    /// One object, read and hashed.
    final class Object: @unchecked Sendable {
        let item: ArchiveItem
        /// The metadata with hashes and content type filled in.
        fileprivate(set) var metadata: BlobMetadata
        /// The content, when at most `bufferLimit` bytes.
        fileprivate(set) var data: [UInt8]?
        /// Whether the content is in a format that is already compressed.
        fileprivate(set) var isCompressed = false
        fileprivate var crc32c: UInt32 = 0
        fileprivate var error: Error?
        fileprivate var ticket: WorkerPool.Ticket?
        fileprivate let fromSidecar: Bool
        fileprivate let needsContentType: Bool

        fileprivate init(item: ArchiveItem, collected: MetadataCollector.Collected) {
            self.item = item
            metadata = collected.metadata
            fromSidecar = collected.fromSidecar
            needsContentType = collected.needsContentType
        }

        /// Bytes this object holds while it waits.
        fileprivate var cost: Int { ObjectReadAhead.cost(of: item) }
    }

    private let items: [ArchiveItem]
    private let collected: [MetadataCollector.Collected]
    private let pool: WorkerPool
    private var submitted = 0
    private var waiting: [Object?] = []
    private var head = 0
    private var waitingBytes = 0

    init(items: [ArchiveItem], collected: [MetadataCollector.Collected], pool: WorkerPool) {
        self.items = items
        self.collected = collected
        self.pool = pool
    }

    /// The next object in order, read and hashed; `nil` after the last. Throws what reading it threw.
    func next() throws -> Object? {
        while submitted < items.count, head == waiting.count || hasRoomForGroup {
            var group = [take()]
            if group[0].isInMemory {
                while group.count < Self.groupSize, submitted < items.count, hasRoomForNext,
                    items[submitted].size <= Int64(Self.bufferLimit)
                {
                    group.append(take())
                }
            }
            let ticket = pool.submit { [group] in Object.load(group) }
            for object in group { object.ticket = ticket }
        }
        guard head < waiting.count else { return nil }
        let object = waiting[head]!
        pool.wait(for: object.ticket!)
        waiting[head] = nil
        head += 1
        if head > 1024 && head * 2 > waiting.count {
            waiting.removeFirst(head)
            head = 0
        }
        waitingBytes -= object.cost
        if let error = object.error { throw error }
        return object
    }

    /// Whether a whole new group fits within `depth` and a quarter of `budget` beside the objects already
    /// waiting (so that groups stay large while the writer frees room one object at a time).
    private var hasRoomForGroup: Bool {
        waiting.count - head + Self.groupSize <= Self.depth && waitingBytes + Self.budget / 4 <= Self.budget
    }

    /// Whether the next item fits within `depth` and `budget` beside the objects already waiting.
    private var hasRoomForNext: Bool {
        waiting.count - head < Self.depth && waitingBytes + Self.cost(of: items[submitted]) <= Self.budget
    }

    /// Makes the next item an object waiting in line.
    private func take() -> Object {
        let object = Object(item: items[submitted], collected: collected[submitted])
        submitted += 1
        waiting.append(object)
        waitingBytes += object.cost
        return object
    }

    /// The memory an object takes while it waits: its content, or the block buffer that hashes a large one.
    private static func cost(of item: ArchiveItem) -> Int {
        item.size <= Int64(bufferLimit) ? Int(item.size) : 1 << 20
    }

    /// Reads a large object again into `writer`, in blocks of `buffer`, checking that it is what was hashed.
    static func copy(
        _ object: Object, to writer: ArchiveWriter, buffer: UnsafeMutableRawBufferPointer, progress: ArchiveProgress?
    ) throws {
        let item = object.item
        let descriptor = try openUnchanged(item)
        defer { close(descriptor) }
        var crc32c = CRC32C()
        try readAll(descriptor, of: item, buffer: buffer) { chunk in
            crc32c.update(chunk)
            try writer.write(chunk)
            progress?.add(bytes: chunk.count)
        }
        guard crc32c.value == object.crc32c else {
            throw InputError(file: item.file, message: "changed while being archived (its bytes differ from the first read)")
        }
    }
}

extension ObjectReadAhead.Object {
    /// Whether the content is kept in memory between hashing and writing.
    fileprivate var isInMemory: Bool { item.size <= Int64(ObjectReadAhead.bufferLimit) }

    /// Reads and hashes the objects of a group (on a worker); errors are kept for `next()`.
    fileprivate static func load(_ group: [ObjectReadAhead.Object]) {
        var toHash: [ObjectReadAhead.Object] = []
        for object in group {
            do {
                if object.isInMemory {
                    try object.read()
                    if !object.fromSidecar { toHash.append(object) }
                } else {
                    try object.readLarge()
                }
            } catch {
                object.error = error
            }
        }
        for (object, digest) in zip(toHash, ContentDigest.digests(of: toHash.map { $0.data! })) {
            (object.metadata.sha256, object.metadata.md5, object.metadata.crc32c) = (digest.sha256, digest.md5, digest.crc32c)
            if object.needsContentType {
                object.metadata.contentType = ContentTypeGuess.contentType(
                    name: object.item.name, head: Array(object.data!.prefix(MediaType.sniffLength)))
            }
        }
    }

    /// Reads the whole content into `data`; checks the SHA-256 a sidecar gave (the caller hashes the others).
    private func read() throws {
        let descriptor = try ObjectReadAhead.openUnchanged(item)
        defer { close(descriptor) }
        let content = try ObjectReadAhead.readWhole(descriptor, of: item)
        isCompressed = StoredContent.isCompressed(head: content.prefix(MediaType.sniffLength))
        if fromSidecar, Hex.lowercase(SHA256.hash(data: content)) != metadata.sha256 { throw sidecarMismatch }
        data = content
    }

    /// Hashes the content while reading it in blocks, keeping its CRC-32C to check the second read against.
    private func readLarge() throws {
        let descriptor = try ObjectReadAhead.openUnchanged(item)
        defer { close(descriptor) }
        var hashes = Hashes(full: !fromSidecar)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        try ObjectReadAhead.readAll(descriptor, of: item, buffer: buffer) { hashes.update($0) }
        isCompressed = StoredContent.isCompressed(head: hashes.head)
        crc32c = hashes.digest?.crc32cValue ?? hashes.crc32c.value
        if let digest = hashes.digest {
            (metadata.sha256, metadata.md5, metadata.crc32c) = digest.finalize()
            if needsContentType { metadata.contentType = ContentTypeGuess.contentType(name: item.name, head: digest.head) }
        } else if Hex.lowercase(hashes.sha256.finalize()) != metadata.sha256 {
            throw sidecarMismatch
        }
    }

    private var sidecarMismatch: InputError {
        InputError(file: item.file, message: "does not match the SHA-256 in its metadata sidecar; the blob store is inconsistent")
    }
}

/// The hashes one read of a large object computes: all three (`digest`), or SHA-256 (to check a sidecar) and CRC-32C.
private struct Hashes {
    var digest: ObjectDigest?
    var sha256 = SHA256()
    var crc32c = CRC32C()
    var head: [UInt8] = []

    init(full: Bool) {
        digest = full ? ObjectDigest() : nil
    }

    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        if head.count < MediaType.sniffLength { head += bytes.prefix(MediaType.sniffLength - head.count) }
        if digest != nil {
            digest!.update(bytes)
        } else {
            sha256.update(bufferPointer: bytes)
            crc32c.update(bytes)
        }
    }
}

extension ObjectReadAhead {
    /// Opens the file of `item`, checking that its size and modification time are still those listed.
    fileprivate static func openUnchanged(_ item: ArchiveItem) throws -> Int32 {
        let descriptor = try SourceFile.open(item.file)
        var status = stat()
        guard fstat(descriptor, &status) == 0, Int64(status.st_size) == item.size,
            Timestamp(seconds: Int64(status.st_mtim.tv_sec), nanoseconds: Int32(status.st_mtim.tv_nsec)) == item.modificationTime
        else {
            close(descriptor)
            throw InputError(
                file: item.file, message: "changed while being archived (size or modification time differ from when it was listed)")
        }
        return descriptor
    }

    /// The whole content of a file of `item.size` bytes; fails when it holds more or fewer.
    fileprivate static func readWhole(_ descriptor: Int32, of item: ArchiveItem) throws -> [UInt8] {
        var failure: Error?
        // One byte more than expected, to notice a file that grew.
        let content = [UInt8](unsafeUninitializedCapacity: Int(item.size) + 1) { buffer, count in
            do {
                while count < buffer.count {
                    let n = try readSome(
                        descriptor, of: item, into: UnsafeMutableRawBufferPointer(UnsafeMutableBufferPointer(rebasing: buffer[count...])))
                    if n == 0 { break }
                    count += n
                }
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        guard content.count == Int(item.size) else {
            throw InputError(
                file: item.file,
                message: "changed while being archived (\(item.size) bytes when listed, \(content.count) or more when read)")
        }
        return content
    }

    /// Reads exactly `item.size` bytes in blocks of `buffer`, handing each to `body`.
    fileprivate static func readAll(
        _ descriptor: Int32, of item: ArchiveItem, buffer: UnsafeMutableRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        var remaining = item.size
        while remaining > 0 {
            let wanted = Int(min(Int64(buffer.count), remaining))
            let count = try readSome(descriptor, of: item, into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<wanted]))
            guard count > 0 else {
                throw InputError(file: item.file, message: "changed while being archived (ended \(remaining) bytes early)")
            }
            try body(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
            remaining -= Int64(count)
        }
    }

    /// One `read`, retried on EINTR.
    private static func readSome(_ descriptor: Int32, of item: ArchiveItem, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        while true {
            let count = read(descriptor, buffer.baseAddress, buffer.count)
            if count >= 0 { return count }
            if errno != EINTR { throw InputError(file: item.file, message: "cannot read: \(String(cString: strerror(errno)))") }
        }
    }
}
