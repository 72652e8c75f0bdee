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
    /// Writes `size` bytes, read piece by piece with `read(offset, length)`, with `object`'s metadata:
    /// small objects in one request, large ones in parts that become the object only when all are in.
    /// With `createOnly` an existing object is left as it is (`.exists`).
    func create(
        key: String, size: Int64, object: StoredObject, createOnly: Bool,
        read: @escaping @Sendable (_ offset: Int64, _ length: Int) async throws -> ByteBuffer
    ) async throws -> CreateOutcome
    /// Sets the metadata of the object `existing` describes to `object`'s, keeping its bytes.
    func updateMetadata(key: String, object: StoredObject, existing: StoredObject) async throws
}

extension ObjectStoreClient {
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

    public func listPage(prefix: String, token: String?) async throws -> ListPage {
        try await listPage(prefix: prefix, token: token, maxKeys: 1000)
    }

    public func create(
        key: String, size: Int64, object: StoredObject, createOnly: Bool,
        read: @escaping @Sendable (Int64, Int) async throws -> ByteBuffer
    ) async throws -> CreateOutcome {
        if size <= Int64(Self.singlePutLimit) {
            return try await put(key: key, body: read(0, Int(size)), object: object, createOnly: createOnly)
        }
        return try await multipartUpload(key: key, object: object, size: size, createOnly: createOnly, readPart: read)
    }

    public func updateMetadata(key: String, object: StoredObject, existing: StoredObject) async throws {
        try await replaceMetadata(key: key, object: object, etag: existing.etag ?? "*")
    }
}

extension GCSClient: ObjectStoreClient {
    public var listsMetadata: Bool { true }

    public func listPage(prefix: String, token: String?) async throws -> ListPage {
        try await listPage(prefix: prefix, token: token, maxResults: 1000)
    }

    public func create(
        key: String, size: Int64, object: StoredObject, createOnly: Bool,
        read: @escaping @Sendable (Int64, Int) async throws -> ByteBuffer
    ) async throws -> CreateOutcome {
        if size <= Int64(Self.multipartLimit) {
            return try await upload(key: key, body: read(0, Int(size)), object: object, createOnly: createOnly)
        }
        return try await resumableUpload(key: key, object: object, size: size, createOnly: createOnly, readChunk: read)
    }

    public func updateMetadata(key: String, object: StoredObject, existing: StoredObject) async throws {
        try await patch(key: key, object: object, existing: existing)
    }
}
