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
///
/// An object of a bucket (`ArchiveItem.remote`) is read by its `ArchiveObjectSource` instead: the read
/// starts when the object enters the window (the source bounds how many are in flight) and the writer
/// waits for it when the object's turn comes, hashing it then. One of up to `bufferLimit` bytes comes
/// whole; a larger one comes part by part (`RemoteStream`, a few parts ahead) and is hashed while it
/// is written (`copyRemote`), so it is read once. A read that finds another version than was listed
/// sets the object's `change` instead of its content.
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
        /// A bucket object that is no longer the version listed: it has no content and is left out.
        fileprivate(set) var change: ArchiveSourceChange?
        /// A bucket object's first read (the whole object, or its first part), started when it entered the window.
        fileprivate var pending: ArchiveSourceRead?
        /// The parts of a large bucket object, once its first has come.
        fileprivate var stream: RemoteStream?

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
        while submitted < items.count {
            if items[submitted].remote != nil {
                guard head == waiting.count || hasRoomForNext else { break }
                take().startRemote()
                continue
            }
            guard head == waiting.count || hasRoomForGroup else { break }
            var group = [take()]
            if group[0].isInMemory {
                while group.count < Self.groupSize, submitted < items.count, hasRoomForNext,
                    items[submitted].size <= Int64(Self.bufferLimit), items[submitted].remote == nil
                {
                    group.append(take())
                }
            }
            let ticket = pool.submit { [group] in Object.load(group) }
            for object in group { object.ticket = ticket }
        }
        guard head < waiting.count else { return nil }
        let object = waiting[head]!
        if let ticket = object.ticket {
            pool.wait(for: ticket)
        } else {
            object.finishRemote()
        }
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

    /// The memory an object takes while it waits: its content, or the block buffer that hashes a large
    /// file (the first part of a large bucket object).
    private static func cost(of item: ArchiveItem) -> Int {
        item.size <= Int64(bufferLimit) ? Int(item.size) : item.remote != nil ? RemoteStream.partSize : 1 << 20
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

extension ObjectReadAhead {
    /// What streaming a large bucket object did.
    enum RemoteCopy {
        /// Every byte was written and hashed, and agrees with what was known of the object.
        case complete
        /// The object changed: midway (`zeros` bytes of zeros then completed its entry), or its bytes
        /// disagree with the hashes known (the entry was written whole).
        case changed(ArchiveSourceChange, zeros: Int64)
    }

    /// Streams a large bucket object into `writer` part by part, hashing it (without a writer, only
    /// hashes it). A change found midway (another version, a size that differs) ends the entry with
    /// zeros, since its header already gave the size; bytes that disagree with the hashes known
    /// (the store's, or a first read's) are found only at the end. Either way the change is returned
    /// and the object's metadata is left as it was.
    static func copyRemote(_ object: Object, to writer: ArchiveWriter?, progress: ArchiveProgress?) throws -> RemoteCopy {
        let item = object.item
        var digest = ObjectDigest()
        var written: Int64 = 0
        do {
            while let part = try object.stream!.next() {
                guard written + Int64(part.count) <= item.size else {
                    throw object.changed("it has more bytes than the \(item.size) listed")
                }
                try part.withUnsafeBytes { bytes in
                    digest.update(bytes)
                    try writer?.write(bytes)
                }
                written += Int64(part.count)
                progress?.add(bytes: part.count)
            }
            guard written == item.size else { throw object.changed("it ended after \(written) of the \(item.size) bytes listed") }
            try object.settle(digest.finalize(), head: digest.head)
            return .complete
        } catch let change as ArchiveSourceChange {
            object.stream = nil
            guard let writer, written < item.size else { return .changed(change, zeros: 0) }
            let zeros = [UInt8](repeating: 0, count: 1 << 20)
            var remaining = item.size - written
            while remaining > 0 {
                let count = Int(min(Int64(zeros.count), remaining))
                try zeros.withUnsafeBytes { try writer.write(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
                remaining -= Int64(count)
            }
            return .changed(change, zeros: item.size - written)
        }
    }
}

extension ObjectReadAhead.Object {
    /// Starts reading a bucket object: all of it when it is kept in memory, else its first part.
    fileprivate func startRemote() {
        let remote = item.remote!
        let range: Range<Int64>? = isInMemory ? nil : 0..<Int64(RemoteStream.partSize)
        pending = remote.source.read(remote.object, range: range)
    }

    /// Waits for a bucket object's first read (on the writer's thread): a small object is then hashed
    /// and checked; a large one gets its stream, its first part in hand. A change is kept in `change`,
    /// another failure in `error`.
    fileprivate func finishRemote() {
        guard let read = pending, let remote = item.remote else { return }
        pending = nil
        do {
            let bytes = try read.wait()
            let head = Array(bytes.prefix(MediaType.sniffLength))
            isCompressed = StoredContent.isCompressed(head: head)
            if isInMemory {
                guard bytes.count == Int(item.size) else {
                    throw changed("\(bytes.count) bytes when read, \(item.size) when listed")
                }
                let digest = bytes.withUnsafeBytes { ContentDigest($0) }
                try settle((digest.sha256, digest.md5, digest.crc32c), head: head)
                data = bytes
            } else {
                if needsContentType { metadata.contentType = ContentTypeGuess.contentType(name: item.name, head: head) }
                if !fromSidecar {
                    // Its entry begins before its bytes are hashed: its attributes carry the hashes the
                    // store vouches for, if any (checked once the bytes have streamed by).
                    let o = remote.object
                    (metadata.sha256, metadata.md5, metadata.crc32c) = (o.sha256 ?? "", o.md5 ?? "", o.crc32c ?? "")
                }
                stream = RemoteStream(source: remote.source, object: remote.object, first: bytes)
            }
        } catch let change as ArchiveSourceChange {
            self.change = change
        } catch {
            self.error = error
        }
    }

    /// Takes the hashes of a bucket object's bytes: checked against those already known (from a first
    /// read, or the store's when it gave all three), else filled in with the content type still to be
    /// guessed; and checked against whatever hashes the store vouches for.
    fileprivate func settle(_ digest: (sha256: String, md5: String, crc32c: String), head: [UInt8]) throws {
        if fromSidecar {
            if digest.sha256 != metadata.sha256 {
                throw changed("SHA-256 \(digest.sha256) when read again, \(metadata.sha256) when first read")
            }
        } else {
            (metadata.sha256, metadata.md5, metadata.crc32c) = digest
            if needsContentType {
                metadata.contentType = ContentTypeGuess.contentType(name: item.name, head: head)
            }
        }
        if let remote = item.remote, let reason = remote.object.disagreement(with: digest) {
            throw changed("its bytes do not match: \(reason)")
        }
    }

    /// A change of this bucket object.
    fileprivate func changed(_ reason: String) -> ArchiveSourceChange {
        ArchiveSourceChange(location: item.remote?.source.location ?? item.folder, name: item.name, reason: reason)
    }

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

/// The parts of a large bucket object, read in order, `partsAhead` parts started ahead of the one the
/// writer takes.
final class RemoteStream {
    /// The bytes of one read.
    static let partSize = 8 << 20
    /// Reads started beyond the part being written.
    static let partsAhead = 2

    private let source: any ArchiveObjectSource
    private let object: ArchiveSourceObject
    private var first: [UInt8]?
    private var reads: [ArchiveSourceRead] = []
    /// Where the next read to start begins.
    private var offset: Int64

    init(source: any ArchiveObjectSource, object: ArchiveSourceObject, first: [UInt8]) {
        self.source = source
        self.object = object
        self.first = first
        offset = min(Int64(Self.partSize), object.size)
        refill()
    }

    /// The next part; `nil` after the last. Throws what its read failed with.
    func next() throws -> [UInt8]? {
        if let part = first {
            first = nil
            return part
        }
        guard !reads.isEmpty else { return nil }
        let read = reads.removeFirst()
        refill()
        return try read.wait()
    }

    private func refill() {
        while reads.count < Self.partsAhead, offset < object.size {
            let end = min(offset + Int64(Self.partSize), object.size)
            reads.append(source.read(object, range: offset..<end))
            offset = end
        }
    }
}
