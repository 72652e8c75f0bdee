import CloudHTTP
import DumpKit
import Foundation
import NIOCore

/// `dumpkit copy SRC DST`: copies the objects of one store to another (a directory blob store with
/// its metadata sidecars, `s3://`, `gs://`), content and metadata, `jobs` objects in flight.
///
/// Nothing at the destination is ever deleted or replaced: an object already there with the same
/// content (equal size and MD5, CRC-32C or SHA-256) is skipped, its metadata brought up to date when
/// it differs; one with other content is a conflict, listed, and the run ends with exit code 1. Every
/// write is create-only, so a concurrent writer's object is never overwritten either. Bucket listings
/// are read a page at a time, and a directory source is walked in the same byte order. A bucket
/// destination is listed page by page in step with the source (`DestinationNames`), so only the
/// names it holds are looked at one by one: into an empty prefix each object is a single PUT.
/// Object bodies in memory are bounded by `memoryBudget` (`ByteBudget`): small objects are held
/// whole, large ones into a bucket go part by part (a part size times the parts in flight), and large
/// ones from a bucket into a directory come down a ranged read at a time into a file named when
/// complete (`DirectoryBlobStore.begin`).
public struct StoreCopier {
    public var source: String
    public var destination: String
    public var filter = PathFilter()
    /// Look and count, write nothing.
    public var dryRun = false
    /// Objects in flight (each one or two requests, or a part upload at a time).
    public var jobs = 64
    /// Bytes of object bodies held at once by all workers.
    public var memoryBudget = 192 << 20
    public var options: ObjectStoreOptions

    public init(source: String, destination: String, options: ObjectStoreOptions) {
        self.source = source
        self.destination = destination
        self.options = options
    }

    /// What a run did (or, dry, would do).
    public struct Summary: Sendable {
        public var listed = 0
        public var copied = 0
        public var copiedBytes: Int64 = 0
        public var skipped = 0
        public var skippedBytes: Int64 = 0
        public var metadataUpdated = 0
        /// Objects at the destination with other content (kept as they are), first 100 names.
        public var conflicts = 0
        public var conflictNames: [String] = []
        /// Names the destination cannot take (a directory refuses `..`, absolute names, NUL...), first 100.
        public var refused = 0
        public var refusedNames: [String] = []
    }

    /// Copies; `progress` is called after each object with the counts so far. Store errors (credentials,
    /// a missing bucket, a failed request after its retries) stop the run and are thrown.
    public func run(progress: (@Sendable (Summary) -> Void)? = nil) throws -> Summary {
        let from = try Endpoint(source, writable: false, destination: false, options: options)
        let to = try Endpoint(destination, writable: !dryRun, destination: true, options: options)
        let filter = self.filter, dryRun = self.dryRun, jobs = max(1, self.jobs)
        let budget = ByteBudget(total: memoryBudget)
        return try runBlocking {
            let present = to.bucketClient.map(DestinationNames.init)
            var summary = Summary()
            try await withThrowingTaskGroup(of: Outcome.self) { group in
                var inFlight = 0
                func take(_ outcome: Outcome) {
                    inFlight -= 1
                    summary.add(outcome)
                    progress?(summary)
                }
                try await from.listNames { names in
                    for name in names where filter.matches(name) {
                        summary.listed += 1
                        if inFlight >= jobs, let done = try await group.next() { take(done) }
                        inFlight += 1
                        let absent = try await present?.contains(name) == false
                        group.addTask { try await Self.copy(name, from: from, to: to, absent: absent, dryRun: dryRun, budget: budget) }
                    }
                }
                while let done = try await group.next() { take(done) }
            }
            return summary
        }
    }

    enum Outcome: Sendable {
        case copied(Int64)
        case skipped(Int64)
        case metadataUpdated
        case conflict(String)
        case refused(String)
    }

    /// Copies one object; `absent`: the destination's listing did not hold it, so it is not looked up
    /// (the create-only write finds one written since).
    private static func copy(
        _ name: String, from: Endpoint, to: Endpoint, absent: Bool, dryRun: Bool, budget: ByteBudget
    ) async throws -> Outcome {
        if case .directory = to.kind {
            do { try BlobObjectName.validate(name) } catch { return .refused(name) }
        } else if case .absentDirectory = to.kind {
            do { try BlobObjectName.validate(name) } catch { return .refused(name) }
        }
        guard let object = try await from.info(name) else { return .skipped(0) }  // gone since it was listed
        if !absent, let existing = try await to.info(name) {
            guard existing.holdsSameContent(as: object) else { return .conflict(name) }
            if object.metadataMatches(existing) { return .skipped(object.size) }
            if !dryRun {
                try await budget.holding(to.bytesHeld(for: object, from: from, updatingMetadata: true)) {
                    try await to.updateMetadata(name, object: object, existing: existing, from: from)
                }
            }
            return .metadataUpdated
        }
        if dryRun { return .copied(object.size) }
        let outcome = try await budget.holding(to.bytesHeld(for: object, from: from, updatingMetadata: false)) {
            try await to.write(name, object: object, from: from)
        }
        switch outcome {
        case .created: return .copied(object.size)
        case .exists:
            // There since the check: written by an attempt whose answer was lost (the retry's
            // create-only write then finds it), or by another writer. Only the latter is a conflict.
            guard let existing = try await to.info(name), existing.holdsSameContent(as: object) else { return .conflict(name) }
            return .copied(object.size)
        }
    }

    /// The names a bucket destination holds, read a listing page at a time as the source's names come
    /// in UTF-8 byte order (the order of both listings), so only one page is in memory. Should a
    /// store list in another order, a name it holds is taken for absent: the create-only write then
    /// finds it and compares it, as with an object written after a lookup.
    final class DestinationNames {
        private let client: any ObjectStoreClient
        private var page: [String] = []
        private var index = 0
        private var token: String?
        private var listedAll = false

        init(_ client: any ObjectStoreClient) { self.client = client }

        /// Whether the destination's listing holds `name`; names must come in increasing order.
        func contains(_ name: String) async throws -> Bool {
            while true {
                while index < page.count {
                    if page[index].utf8.lexicographicallyPrecedes(name.utf8) {
                        index += 1
                    } else {
                        return page[index].utf8.elementsEqual(name.utf8)
                    }
                }
                if listedAll { return false }
                let listed = try await client.listPage(prefix: client.url.prefix, token: token)
                page = listed.objects.compactMap { client.url.name(ofKey: $0.key) }
                index = 0
                token = listed.next
                listedAll = token == nil
            }
        }
    }

    /// One side of a copy: a directory blob store or a bucket.
    final class Endpoint: Sendable {
        enum Kind: Sendable {
            case directory(DirectoryBlobStore)
            /// A destination directory that does not exist yet, in a dry run: it holds nothing.
            case absentDirectory
            case bucket(any ObjectStoreClient)
        }

        let kind: Kind
        /// The location as given, for messages.
        let location: String

        init(_ location: String, writable: Bool, destination: Bool, options: ObjectStoreOptions) throws {
            self.location = location
            if let url = try ObjectStoreURL(location) {
                kind = .bucket(try options.client(for: url))
            } else if !writable, !FileManager.default.fileExists(atPath: location), destination {
                kind = .absentDirectory
            } else {
                kind = .directory(try DirectoryBlobStore(directory: location, writable: writable))
            }
        }

        /// The client when this side is a bucket.
        var bucketClient: (any ObjectStoreClient)? {
            if case .bucket(let client) = kind { return client }
            return nil
        }

        /// Calls `body` with the names of the objects, a listing page at a time.
        func listNames(_ body: ([String]) async throws -> Void) async throws {
            switch kind {
            case .absentDirectory:
                return
            case .directory(let store):
                // In byte order already, read a page at a time as a bucket's listing is.
                let names = try store.names()
                while true {
                    var page: [String] = []
                    while page.count < 1000, let name = try names.next() { page.append(name) }
                    if page.isEmpty { return }
                    try await body(page)
                }
            case .bucket(let client):
                var token: String?
                repeat {
                    let page = try await client.listPage(prefix: client.url.prefix, token: token)
                    try await body(page.objects.compactMap { client.url.name(ofKey: $0.key) })
                    token = page.next
                } while token != nil
            }
        }

        /// The object's size, hashes and metadata, or `nil`.
        func info(_ name: String) async throws -> StoredObject? {
            switch kind {
            case .absentDirectory:
                return nil
            case .directory(let store):
                return try store.metadata(name).map { StoredObject(key: name, metadata: $0) }
            case .bucket(let client):
                return try await client.head(key: client.url.key(name))
            }
        }

        /// The body bytes a write (or a metadata update) of `object` from `source` holds at once.
        func bytesHeld(for object: StoredObject, from source: Endpoint, updatingMetadata: Bool) -> Int {
            switch (kind, source.kind) {
            case (.bucket, _) where updatingMetadata:
                return 0
            case (.bucket(let client), .bucket), (.bucket(let client), .directory):
                guard object.size > Int64(client.singleRequestLimit) else { return Int(clamping: object.size) }
                return client.partSize(1, of: object.size) * client.partsInFlight
            case (.directory, .bucket) where !updatingMetadata && object.size > Int64(Self.streamedPart):
                return Self.streamedPart
            default:
                return Int(clamping: object.size)
            }
        }

        /// Objects larger than this are copied from a bucket into a directory a ranged read of this
        /// size at a time, never held whole.
        static let streamedPart = 8 << 20

        /// The whole content.
        func read(_ name: String) async throws -> ByteBuffer {
            switch kind {
            case .directory(let store): return ByteBuffer(bytes: try store.get(name))
            case .absentDirectory: throw BlobStoreError(store: location, name: name, message: "no such object")
            case .bucket(let client): return try await client.get(key: client.url.key(name), range: nil)
            }
        }

        /// Writes `object`'s content, read from `source`, create-only. Into a bucket, large objects
        /// are streamed a part at a time (ranged reads of a bucket, `pread` of a folder's file), with
        /// the hashes the source's listing or metadata gave; otherwise the content is read whole and
        /// hashed, so the destination records all three hashes.
        func write(_ name: String, object: StoredObject, from source: Endpoint) async throws -> CreateOutcome {
            var object = object
            if case .bucket(let client) = kind, case .directory(let store) = source.kind, object.size > Int64(client.singleRequestLimit) {
                guard let file = try store.file(name), file.size == object.size else {
                    throw BlobStoreError(
                        store: source.location, name: name, message: "the object is gone or changed size since it was listed")
                }
                var o = object
                o.key = client.url.key(name)
                return try await client.create(key: o.key, size: o.size, object: o, createOnly: true) { offset, length in
                    var part = ByteBuffer()
                    _ = try part.writeWithUnsafeMutableBytes(minimumWritableBytes: length) { raw in
                        var done = 0
                        while done < length {
                            let n = try file.read(
                                at: offset + Int64(done), into: UnsafeMutableRawBufferPointer(rebasing: raw[done..<length]))
                            if n == 0 { break }
                            done += n
                        }
                        return done
                    }
                    return part
                }
            }
            if case .bucket(let client) = kind, case .bucket(let sourceClient) = source.kind, object.size > Int64(client.singleRequestLimit)
            {
                let sourceKey = sourceClient.url.key(name)
                var o = object
                o.key = client.url.key(name)
                return try await client.create(key: o.key, size: o.size, object: o, createOnly: true) { offset, length in
                    try await sourceClient.get(key: sourceKey, range: offset..<(offset + Int64(length)))
                }
            }
            if case .directory(let store) = kind, case .bucket(let sourceClient) = source.kind, object.size > Int64(Self.streamedPart) {
                return try await stream(name, object: object, from: sourceClient, into: store, source: source.location)
            }
            let body = try await source.read(name)
            // A folder's sidecar holds the hashes DumpKit computed: once the SHA-256 matches, its MD5 and
            // CRC-32C are those of the bytes. (A bucket's MD5 may come from an ETag, which is no MD5
            // for some encryptions: computed.)
            var recorded: (String, String, String)?
            if case .directory = source.kind, let sha256 = object.sha256, let md5 = object.md5, let crc32c = object.crc32c {
                recorded = (sha256, md5, crc32c)
            }
            let digest = body.withUnsafeReadableBytes { ContentDigest($0, recorded: recorded) }
            guard digest.size == object.size else {
                throw BlobStoreError(
                    store: source.location, name: name,
                    message: "the object has \(digest.size) bytes, not the \(object.size) listed: it changed during the copy")
            }
            object.sha256 = digest.sha256
            object.md5 = digest.md5
            object.crc32c = digest.crc32c
            switch kind {
            case .directory(let store):
                let m = object.blobMetadata(name: name, digest: digest)
                do {
                    _ = try body.withUnsafeReadableBytes { try store.put($0, metadata: m, replacing: false) }
                    return .created
                } catch is BlobExistsError {
                    return .exists
                }
            case .absentDirectory:
                preconditionFailure("a dry run writes nothing")
            case .bucket(let client):
                var o = object
                o.key = client.url.key(name)
                return try await client.create(key: o.key, size: o.size, object: o, createOnly: true) { offset, length in
                    body.getSlice(at: Int(offset), length: length)!
                }
            }
        }

        /// Copies a large bucket object into a directory store a ranged read at a time, each of the
        /// version the first one read (a change midway is an error that names the object), into a
        /// file that gets its name only when complete.
        private func stream(
            _ name: String, object: StoredObject, from client: any ObjectStoreClient, into store: DirectoryBlobStore, source: String
        ) async throws -> CreateOutcome {
            let pending = try store.begin(name)
            defer { pending.abort() }
            let key = client.url.key(name)
            var version: String?
            while pending.size < object.size {
                let range = pending.size..<min(object.size, pending.size + Int64(Self.streamedPart))
                let read: ObjectRead
                do {
                    read = try await client.read(key: key, range: range, version: version)
                } catch let error as ObjectStoreError where error.status == 412 || error.status == 404 {
                    throw BlobStoreError(store: source, name: name, message: "the object changed or went away during the copy: \(error)")
                }
                guard read.body.readableBytes == range.count, read.size.map({ $0 == object.size }) ?? true else {
                    throw BlobStoreError(
                        store: source, name: name,
                        message:
                            "the object has \(read.size.map(String.init) ?? "other") bytes, not the \(object.size) listed: it changed during the copy"
                    )
                }
                version = version ?? read.version
                try read.body.withUnsafeReadableBytes { try pending.write($0) }
            }
            do {
                _ = try pending.commit(metadata: { object.blobMetadata(name: name, digest: $0) }, replacing: false)
                return .created
            } catch is BlobExistsError {
                return .exists
            }
        }

        /// Brings the metadata of an object with the same content up to date.
        func updateMetadata(_ name: String, object: StoredObject, existing: StoredObject, from source: Endpoint) async throws {
            switch kind {
            case .directory(let store):
                let body = try await source.read(name)
                var o = object
                let digest = body.withUnsafeReadableBytes { ContentDigest($0) }
                let m = o.blobMetadata(name: name, digest: digest)
                o.sha256 = digest.sha256
                _ = try body.withUnsafeReadableBytes { try store.put($0, metadata: m, replacing: false) }
            case .absentDirectory:
                preconditionFailure("a dry run writes nothing")
            case .bucket(let client):
                var o = object
                o.key = client.url.key(name)
                if o.sha256 == nil { o.sha256 = existing.sha256 }
                try await client.updateMetadata(key: o.key, object: o, existing: existing)
            }
        }
    }
}

extension StoreCopier.Summary {
    mutating func add(_ outcome: StoreCopier.Outcome) {
        switch outcome {
        case .copied(let bytes):
            copied += 1
            copiedBytes += bytes
        case .skipped(let bytes):
            skipped += 1
            skippedBytes += bytes
        case .metadataUpdated:
            metadataUpdated += 1
        case .conflict(let name):
            conflicts += 1
            if conflictNames.count < 100 { conflictNames.append(name) }
        case .refused(let name):
            refused += 1
            if refusedNames.count < 100 { refusedNames.append(name) }
        }
    }
}
