/// A place that keeps extracted files as named objects with metadata: a directory mirroring a
/// bucket (`DirectoryBlobStore`), or a bucket itself (`BucketBlobStore` of the ObjectStores module,
/// S3-compatible or Cloud Storage, which the library does not depend on).
///
/// Implementations are safe to call from several threads at once. Writes are atomic (a reader sees
/// the old object or the new one, never a part) and idempotent (putting the same bytes and metadata
/// again writes nothing). An object is never replaced by other bytes unless the caller asks for it.
/// Names are checked with `BlobObjectName.validate` before anything is written.
public protocol BlobStore: AnyObject, Sendable {
    /// A short description for messages (`directory blobs/`).
    var description: String { get }
    /// Stores `content` under `metadata.name`. An object of that name with the same bytes is kept (its
    /// metadata written if it differs); one with other bytes is replaced only when `replacing`, else
    /// `BlobExistsError` is thrown and nothing is written. The object and its metadata are written as
    /// one unit: concurrent writers of a name, in this process or others, take turns.
    func put(_ content: UnsafeRawBufferPointer, metadata: BlobMetadata, replacing: Bool) throws -> BlobPutOutcome
    /// Stores an object whose bytes come in pieces, never held whole: `fill` hands each piece, in
    /// order, to the function it is given. The bytes must have the size and hashes `metadata` gives
    /// (SHA-256, MD5 and CRC-32C), else nothing is stored and `BlobContentMismatch` is thrown.
    /// Otherwise as `put`; the object appears only once all of it is there.
    func put(
        streaming metadata: BlobMetadata, replacing: Bool, fill: (_ write: (UnsafeRawBufferPointer) throws -> Void) throws -> Void
    ) throws -> BlobPutOutcome
    /// Makes every object written so far durable (it survives a power cut); called before committing
    /// anything that names them.
    func sync() throws
    /// The content of the object called `name`; throws `BlobStoreError` when there is none.
    func get(_ name: String) throws -> [UInt8]
    /// The metadata of the object called `name`, or `nil` when there is none.
    func metadata(_ name: String) throws -> BlobMetadata?
    /// Whether an object called `name` exists.
    func exists(_ name: String) throws -> Bool
    /// Calls `body` with the name of every object, in no particular order.
    func list(_ body: (String) throws -> Void) throws
}

/// What `BlobStore.put` did.
public enum BlobPutOutcome: Sendable {
    /// The object was written (new), or its bytes were there and only its metadata was written.
    case stored
    /// An object with other bytes was replaced (`replacing`).
    case replaced
    /// The same content and metadata were already there; nothing was written.
    case unchanged
}

/// Bytes brought to `BlobStore.put(streaming:)` that are not those its metadata describes: nothing
/// was stored (exit code 1).
public struct BlobContentMismatch: DataError, CustomStringConvertible, Sendable {
    public let store: String
    public let name: String
    /// What differs (`SHA-256 ... , not ...`).
    public let difference: String

    public var description: String { "blob store \(store): object \(String(reflecting: name)) not stored: its \(difference)" }

    package init(store: String, name: String, difference: String) {
        self.store = store
        self.name = name
        self.difference = difference
    }

    /// Checks `digest` (of the bytes brought) against `metadata`; throws what differs first.
    package static func check(_ digest: ContentDigest, against metadata: BlobMetadata, store: String) throws {
        let difference =
            digest.size != metadata.size
            ? "size is \(digest.size) bytes, not \(metadata.size)"
            : digest.sha256 != metadata.sha256
                ? "SHA-256 is \(digest.sha256), not \(metadata.sha256)"
                : digest.md5 != metadata.md5
                    ? "MD5 is \(digest.md5), not \(metadata.md5)"
                    : digest.crc32c != metadata.crc32c ? "CRC-32C is \(digest.crc32c), not \(metadata.crc32c)" : nil
        if let difference { throw BlobContentMismatch(store: store, name: metadata.name, difference: difference) }
    }
}

/// An object that exists with other bytes than those a `put` brings, which it did not replace
/// (exit code 1: the run would otherwise change what other references point at).
public struct BlobExistsError: DataError, CustomStringConvertible, Sendable {
    public let store: String
    public let name: String
    /// The SHA-256 (hex) of the bytes there, and of those brought.
    public let existingSHA256: String
    public let newSHA256: String

    public init(store: String, name: String, existingSHA256: String, newSHA256: String) {
        self.store = store
        self.name = name
        self.existingSHA256 = existingSHA256
        self.newSHA256 = newSHA256
    }

    public var description: String {
        "blob store \(store): object \(String(reflecting: name)) already exists with other content (SHA-256 \(existingSHA256), not \(newSHA256))"
    }
}

/// A store that cannot be opened, read or written (exit code 2, like other input and output errors).
public struct BlobStoreError: Error, CustomStringConvertible, Sendable {
    /// The store (its directory, or its URL).
    public let store: String
    /// The object concerned, if any.
    public let name: String?
    public let message: String

    public init(store: String, name: String? = nil, message: String) {
        self.store = store
        self.name = name
        self.message = message
    }

    public var description: String {
        if let name { return "blob store \(store): \(name): \(message)" }
        return "blob store \(store): \(message)"
    }
}
