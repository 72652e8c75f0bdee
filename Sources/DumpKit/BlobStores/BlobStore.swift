/// A place that keeps extracted files as named objects with metadata: a directory mirroring a
/// bucket (`DirectoryBlobStore`) now, S3-compatible object storage next.
///
/// Implementations are safe to call from several threads at once. Writes are atomic (a reader sees
/// the old object or the new one, never a part) and idempotent (putting the same bytes and metadata
/// again writes nothing). Names are checked with `BlobObjectName.validate` before anything is
/// written.
public protocol BlobStore: AnyObject, Sendable {
    /// A short description for messages (`directory blobs/`).
    var description: String { get }
    /// Stores `content` under `metadata.name`, unless an object with that name, this SHA-256 and this
    /// metadata is already there.
    func put(_ content: UnsafeRawBufferPointer, metadata: BlobMetadata) throws -> BlobPutOutcome
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
    /// The object was written (new, or replacing different content or metadata).
    case stored
    /// The same content and metadata were already there; nothing was written.
    case unchanged
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
