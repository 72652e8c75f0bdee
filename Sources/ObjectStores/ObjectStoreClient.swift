import CloudHTTP
import NIOCore

/// What DumpKit does with a bucket, the same for S3 (`S3Client`) and Cloud Storage (`GCSClient`):
/// the blob store and `copy` are written once against it.
public protocol ObjectStoreClient: Sendable {
    var url: ObjectStoreURL { get }
    /// The endpoint, as errors name it.
    var endpoint: String { get }
    /// The object's size, hashes and metadata, or `nil` when there is none.
    func head(key: String) async throws -> StoredObject?
    /// The bytes of `range` (all when `nil`) of the object, as `read` answers them: only of the version
    /// `version` names when given (S3: `If-Match` on the ETag; Cloud Storage: that `generation`, so a
    /// changed object is a 412 or 404), with the version and whole size the response reports.
    func read(key: String, range: Range<Int64>?, version: String?) async throws -> ObjectRead
    /// One page of the objects whose keys start with `prefix`, in byte order, after the page `token` names.
    func listPage(prefix: String, token: String?) async throws -> ListPage
    /// Whether a listing gives each object's metadata (Cloud Storage), or only key, size, ETag and time (S3).
    var listsMetadata: Bool { get }
    /// Writes `body` with `object`'s metadata in one request; with `createOnly` an existing object is
    /// left as it is (`.exists`).
    func put(key: String, body: ByteBuffer, object: StoredObject, createOnly: Bool) async throws -> CreateOutcome
    /// Starts an upload in parts of `object` to `key`; `nil` when a create-only upload finds an object there.
    func beginUpload(key: String, object: StoredObject, createOnly: Bool) async throws -> (any ObjectUpload)?
    /// How many parts of an upload go at once.
    var partsInFlight: Int { get }
    /// Whether an upload's last part goes with its completion (Cloud Storage: the chunk that states the
    /// total makes the object) rather than as a part before it (S3).
    var lastPartCompletes: Bool { get }
    /// The length of part `number` (from 1), which all but the last part have, of an upload of `size`
    /// bytes (`nil`: not known until its end).
    func partSize(_ number: Int, of size: Int64?) -> Int
    /// Sets the metadata of the object `existing` describes to `object`'s, keeping its bytes.
    func updateMetadata(key: String, object: StoredObject, existing: StoredObject) async throws
}

extension ObjectStoreClient {
    /// Objects up to this size are written in one request (`put`); larger ones in parts.
    public var singleRequestLimit: Int { 8 << 20 }

    /// Writes `size` bytes, read piece by piece with `read(offset, length)`, with `object`'s metadata:
    /// small objects in one request, large ones in parts that become the object only when all are in
    /// (any failure aborts the upload, so nothing appears and no part is left). With `createOnly` an
    /// existing object is left as it is (`.exists`). Memory: the parts in flight.
    public func create(
        key: String, size: Int64, object: StoredObject, createOnly: Bool,
        read: @escaping @Sendable (_ offset: Int64, _ length: Int) async throws -> ByteBuffer
    ) async throws -> CreateOutcome {
        if size <= Int64(singleRequestLimit) {
            return try await put(key: key, body: read(0, Int(size)), object: object, createOnly: createOnly)
        }
        guard let upload = try await beginUpload(key: key, object: object, createOnly: createOnly) else { return .exists }
        let partSize = Int64(partSize(1, of: size))
        let count = Int((size + partSize - 1) / partSize)
        let sent = lastPartCompletes ? count - 1 : count
        let store = url.description, endpoint = endpoint
        @Sendable func part(_ number: Int) async throws -> (offset: Int64, body: ByteBuffer) {
            let offset = Int64(number - 1) * partSize
            let length = Int(min(partSize, size - offset))
            let body = try await read(offset, length)
            guard body.readableBytes == length else {
                throw ObjectStoreError(
                    store: store, endpoint: endpoint, object: key,
                    message: "part \(number) has \(body.readableBytes) bytes, not \(length): the source changed while it was copied")
            }
            return (offset, body)
        }
        do {
            var parts: [UploadedPart] = []
            try await withThrowingTaskGroup(of: UploadedPart.self) { group in
                var next = 1
                func start(_ number: Int) {
                    group.addTask {
                        let (offset, body) = try await part(number)
                        return try await upload.send(part: number, at: offset, body)
                    }
                }
                while next <= min(sent, partsInFlight) { start(next); next += 1 }
                while let done = try await group.next() {
                    parts.append(done)
                    if next <= sent { start(next); next += 1 }
                }
            }
            let last = lastPartCompletes ? try await part(count).body : ByteBuffer()
            return try await upload.complete(parts, last: last, size: size)
        } catch {
            await upload.abort()
            throw error
        }
    }

    /// The object's bytes, all or `range` (end excluded), whatever its version: `read` without one,
    /// checked to be as long as asked.
    public func get(key: String, range: Range<Int64>?) async throws -> ByteBuffer {
        let body = try await read(key: key, range: range, version: nil).body
        if let range, body.readableBytes != range.count {
            throw ObjectStoreError(
                store: url.description, endpoint: endpoint, object: key,
                message: "asked for \(range.count) bytes at \(range.lowerBound), got \(body.readableBytes)")
        }
        return body
    }

    /// The object at `key`, looked at now; an error naming it when there is none. It blocks
    /// (`runBlocking`): call it from a thread of the caller's own.
    public func existing(key: String) throws -> StoredObject {
        guard let object = try runBlocking({ try await self.head(key: key) }) else {
            throw ObjectStoreError(store: url.description, endpoint: endpoint, object: key, status: 404, message: "no such object")
        }
        return object
    }

    /// Calls `body` with every object below the URL's prefix and its name, a page in memory at a time.
    /// It blocks (`runBlocking`): call it from a thread of the caller's own.
    public func eachObject(_ body: (StoredObject, String) throws -> Void) throws {
        var token: String?
        repeat {
            let t = token
            let page = try runBlocking { try await self.listPage(prefix: self.url.prefix, token: t) }
            for object in page.objects {
                if let name = url.name(ofKey: object.key) { try body(object, name) }
            }
            token = page.next
        } while token != nil
    }
}

/// A page of a listing and the token of the next one (`nil`: the last page).
public struct ListPage: Sendable {
    public var objects: [StoredObject]
    public var next: String?
}

/// The bytes a `read` got, and what the response says of the object they are of.
public struct ObjectRead: Sendable {
    public var body: ByteBuffer
    /// The version the bytes are of: S3's ETag (unquoted), Cloud Storage's generation.
    public var version: String?
    /// The whole object's size (a ranged read's `Content-Range` total).
    public var size: Int64?

    public init(body: ByteBuffer, version: String?, size: Int64?) {
        self.body = body
        self.version = version
        self.size = size
    }
}

/// What a write did.
public enum CreateOutcome: Sendable {
    case created
    /// An object of that key existed (a create-only write got 412): nothing was written.
    case exists
}

extension S3Client: ObjectStoreClient {
    public var listsMetadata: Bool { false }
    public var partsInFlight: Int { 4 }
    public var lastPartCompletes: Bool { false }

    public func partSize(_ number: Int, of size: Int64?) -> Int {
        size.map(Self.partSize(for:)) ?? Self.growingPartSize(number)
    }

    public func listPage(prefix: String, token: String?) async throws -> ListPage {
        try await listPage(prefix: prefix, token: token, maxKeys: 1000)
    }

    public func updateMetadata(key: String, object: StoredObject, existing: StoredObject) async throws {
        try await replaceMetadata(key: key, object: object, etag: existing.etag ?? "*")
    }
}

extension GCSClient: ObjectStoreClient {
    public var listsMetadata: Bool { true }
    public var partsInFlight: Int { 1 }
    public var lastPartCompletes: Bool { true }

    public func partSize(_ number: Int, of size: Int64?) -> Int { Self.resumableChunk }

    public func listPage(prefix: String, token: String?) async throws -> ListPage {
        try await listPage(prefix: prefix, token: token, maxResults: 1000)
    }

    public func updateMetadata(key: String, object: StoredObject, existing: StoredObject) async throws {
        try await patch(key: key, object: object, existing: existing)
    }
}
