import CloudHTTP
import DumpKit
import NIOCore

/// A `BlobStore` in a bucket (S3-compatible or Cloud Storage, through its `ObjectStoreClient`), under
/// the store URL's prefix. Called from pipeline worker threads; each call runs its requests on the
/// shared HTTP client and waits (`runBlocking`), so many workers keep many requests in flight.
///
/// Safety comes from the server, not from local locks: every write is create-only (`If-None-Match: *`
/// on S3, `ifGenerationMatch=0` on GCS), so an object that exists is never replaced by accident, even
/// by another process. When a create finds an object, its size and hashes decide: the same content
/// keeps it (its metadata updated if it differs, only while it is still the object that was read),
/// other content is replaced only with `replacing`, else `BlobExistsError`. Large objects go as
/// multipart/resumable uploads that appear only when complete.
public final class BucketBlobStore: BlobStore {
    public let client: any ObjectStoreClient

    public init(client: any ObjectStoreClient) {
        self.client = client
    }

    public var description: String { "bucket \(client.url)" }

    public func put(_ content: UnsafeRawBufferPointer, metadata: BlobMetadata, replacing: Bool) throws -> BlobPutOutcome {
        try BlobObjectName.validate(metadata.name)
        let body = ByteBuffer(bytes: content)
        let client = self.client, store = description
        return try runBlocking {
            try await Self.put(body, metadata: metadata, replacing: replacing, client: client, store: store)
        }
    }

    private static func put(_ body: ByteBuffer, metadata: BlobMetadata, replacing: Bool, client: any ObjectStoreClient, store: String)
        async throws -> BlobPutOutcome
    {
        let key = client.url.key(metadata.name)
        let object = StoredObject(key: key, metadata: metadata)
        let read: @Sendable (Int64, Int) async throws -> ByteBuffer = { offset, length in body.getSlice(at: Int(offset), length: length)! }
        var found: StoredObject?
        for _ in 0..<3 where found == nil {
            if try await client.create(key: key, size: metadata.size, object: object, createOnly: true, read: read) == .created {
                return .stored
            }
            // Nil when it was deleted between the create and the look: create again.
            found = try await client.head(key: key)
        }
        guard let existing = found else {
            throw BlobStoreError(
                store: store, name: metadata.name, message: "the object keeps appearing and disappearing while it is written")
        }
        guard replacing, !existing.holdsSameContent(as: object) else {
            return try await keep(existing, object: object, metadata: metadata, client: client, store: store)
        }
        _ = try await client.create(key: key, size: metadata.size, object: object, createOnly: false, read: read)
        return .replaced
    }

    /// Objects up to the size one request sends are gathered and put whole; larger ones go up part
    /// by part as they come (`ObjectOutput`, create-only where nothing was found), and appear only
    /// when complete and checked; an object already there is read by its hashes, not its bytes.
    public func put(
        streaming metadata: BlobMetadata, replacing: Bool, fill: (_ write: (UnsafeRawBufferPointer) throws -> Void) throws -> Void
    ) throws -> BlobPutOutcome {
        try BlobObjectName.validate(metadata.name)
        let client = self.client, store = description
        let key = client.url.key(metadata.name)
        if metadata.size <= Int64(client.singleRequestLimit) {
            var body: [UInt8] = []
            body.reserveCapacity(Int(metadata.size))
            try fill {
                // More bytes than described: refused before they are held.
                guard body.count + $0.count <= Int(metadata.size) else {
                    throw BlobContentMismatch(store: store, name: metadata.name, difference: "size is over \(metadata.size) bytes")
                }
                body.append(contentsOf: $0)
            }
            try body.withUnsafeBytes { try BlobContentMismatch.check(ContentDigest($0), against: metadata, store: store) }
            return try body.withUnsafeBytes { try put($0, metadata: metadata, replacing: replacing) }
        }
        let existing = try runBlocking { try await client.head(key: key) }
        let object = StoredObject(key: key, metadata: metadata)
        if let existing, existing.holdsSameContent(as: object) || !replacing {
            // Nothing to send: the bytes are only checked.
            var digest = ObjectDigest()
            try fill { digest.update($0) }
            try BlobContentMismatch.check(ContentDigest(digest), against: metadata, store: store)
            return try runBlocking { try await Self.keep(existing, object: object, metadata: metadata, client: client, store: store) }
        }
        let output = ObjectOutput(client: client, key: key, object: object)
        output.createOnly = existing == nil
        do {
            var digest = ObjectDigest()
            try fill {
                digest.update($0)
                try output.write($0)
            }
            try BlobContentMismatch.check(ContentDigest(digest), against: metadata, store: store)
            try output.publish()
        } catch {
            output.abort()
            throw error
        }
        guard output.outcome == .exists else { return existing == nil ? .stored : .replaced }
        // Another writer created it since the look: its content decides, as for `put`.
        guard let found = try runBlocking({ try await client.head(key: key) }) else {
            throw BlobStoreError(
                store: store, name: metadata.name, message: "the object keeps appearing and disappearing while it is written")
        }
        guard found.holdsSameContent(as: object) else {
            throw BlobStoreError(
                store: store, name: metadata.name, message: "another writer created the object with other content while it was written")
        }
        return try runBlocking { try await Self.keep(found, object: object, metadata: metadata, client: client, store: store) }
    }

    /// What a write of `metadata` does to an object already there: the same content keeps it (its
    /// metadata brought up to date); other content is `BlobExistsError`.
    private static func keep(
        _ existing: StoredObject, object: StoredObject, metadata: BlobMetadata, client: any ObjectStoreClient, store: String
    )
        async throws -> BlobPutOutcome
    {
        guard existing.holdsSameContent(as: object) else {
            throw BlobExistsError(
                store: store, name: metadata.name,
                existingSHA256: existing.sha256 ?? "not recorded (size \(existing.size), MD5 \(existing.md5 ?? "unknown"))",
                newSHA256: metadata.sha256)
        }
        if existing.sha256 != nil, object.metadataMatches(existing) { return .unchanged }
        try await client.updateMetadata(key: object.key, object: object, existing: existing)
        return .stored
    }

    /// Nothing to do: a store acknowledges a write only once it is durable.
    public func sync() throws {}

    public func get(_ name: String) throws -> [UInt8] {
        let client = self.client, store = description
        return try runBlocking {
            do {
                let body = try await client.get(key: client.url.key(name), range: nil)
                return Array(body.readableBytesView)
            } catch let e as ObjectStoreError where e.status == 404 {
                throw BlobStoreError(store: store, name: name, message: "no such object")
            }
        }
    }

    /// The object's metadata; an object without DumpKit's hash record (written by another tool) is
    /// read once and hashed to complete it.
    public func metadata(_ name: String) throws -> BlobMetadata? {
        let client = self.client
        return try runBlocking {
            let key = client.url.key(name)
            guard let object = try await client.head(key: key) else { return nil }
            if let complete = object.blobMetadata(name: name) { return complete }
            let body = try await client.get(key: key, range: nil)
            return object.blobMetadata(name: name, digest: body.withUnsafeReadableBytes { ContentDigest($0) })
        }
    }

    public func exists(_ name: String) throws -> Bool {
        let client = self.client
        return try runBlocking { try await client.head(key: client.url.key(name)) != nil }
    }

    /// Every object below the prefix, a page (1,000 names) in memory at a time.
    public func list(_ body: (String) throws -> Void) throws {
        try client.eachObject { _, name in try body(name) }
    }
}
