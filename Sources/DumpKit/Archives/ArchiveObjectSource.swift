import Foundation

/// A bucket that `archive` and `backup` read objects from other than a directory: a bucket of an
/// object store (`s3://`, `gs://`). The ObjectStores module implements it over its HTTP clients and the
/// CLI hands it in through an `ArchiveSourceOpener`, as `BlobStoreOpener` does for blob stores, so that
/// DumpKit does not depend on HTTP.
///
/// The archive lists the objects (`list`), completes their metadata where the listing lacks it
/// (`describe`) before the manifest is written, then reads their bytes (`read`) a window ahead of the
/// archive writer. Every read must find the version that was listed: one that finds another (an ETag or
/// generation that differs, another size, an object gone) fails with an `ArchiveSourceChange`, which
/// the archive reports instead of archiving the object as if it were consistent.
public protocol ArchiveObjectSource: Sendable {
    /// The location as messages name it (`s3://bucket/prefix/`).
    var location: String { get }

    /// Calls `body` with every object below the location, a listing page at a time (any order: the
    /// archive sorts them), its name relative to the location.
    func list(_ body: (ArchiveSourceObject) throws -> Void) throws

    /// `objects` with their metadata (content type, cache control, custom metadata...) where the
    /// listing did not give it (S3 lists no metadata: a HEAD each, several at once), in their order;
    /// `progress` is told of each object done. An object that changed or went away since it was
    /// listed is an `ArchiveSourceChange`; a failing request (credentials, a missing bucket) throws.
    func describe(_ objects: [ArchiveSourceObject], progress: @escaping @Sendable () -> Void) throws
        -> [Result<ArchiveSourceObject, ArchiveSourceChange>]

    /// Starts reading `range` of `object` (all of it when `nil`) and returns at once; the read gives
    /// the bytes, or fails with an `ArchiveSourceChange` when the object is no longer the version
    /// listed, or with the store's error. The source bounds how many reads are in flight at once.
    func read(_ object: ArchiveSourceObject, range: Range<Int64>?) -> ArchiveSourceRead
}

/// Opens the source an `archive` or `backup` bucket location names when it is not a directory (an
/// `s3://` or `gs://` URL, through the ObjectStores module), or returns `nil` for a directory.
public typealias ArchiveSourceOpener = @Sendable (_ location: String) throws -> (any ArchiveObjectSource)?

extension ArchiveJob {
    /// The library's default opener: every location is a directory; a bucket URL is refused with a
    /// message (the ObjectStores module opens them).
    public static let openDirectoriesOnly: ArchiveSourceOpener = { location in
        if location.hasPrefix("s3://") || location.hasPrefix("gs://") {
            throw UsageError(
                "\(location): reading a bucket needs the ObjectStores module's opener (ObjectStoreOptions.archiveSourceOpener)")
        }
        return nil
    }
}

/// One object of an `ArchiveObjectSource`: what its listing says, and its metadata once described.
public struct ArchiveSourceObject: Sendable, Equatable {
    /// The name relative to the source's location (the key without the prefix).
    public var name: String
    public var size: Int64
    /// What identifies this version of the content: S3's ETag, Cloud Storage's generation.
    public var version: String?
    /// Modification time, milliseconds since the epoch.
    public var updated: Int64?
    /// Whether the fields below are the store's (else `describe` asks for them).
    public var described: Bool
    public var contentType: String?
    public var cacheControl: String?
    public var contentDisposition: String?
    public var contentEncoding: String?
    public var contentLanguage: String?
    /// Custom metadata, keys spelled as the store gives them (S3 lower-cases them; the ObjectStores
    /// module gives Firebase's known keys their spelling back).
    public var customMetadata: [String: String]
    /// Hashes the store keeps for the content and vouches for (computed by the store, or recorded by
    /// DumpKit when it wrote the object): the bytes read are checked against them, and a two-pass
    /// archive takes them instead of reading the object twice when all three are known.
    public var sha256: String?
    public var md5: String?
    public var crc32c: String?

    public init(
        name: String, size: Int64, version: String? = nil, updated: Int64? = nil, described: Bool = false, contentType: String? = nil,
        cacheControl: String? = nil, contentDisposition: String? = nil, contentEncoding: String? = nil, contentLanguage: String? = nil,
        customMetadata: [String: String] = [:], sha256: String? = nil, md5: String? = nil, crc32c: String? = nil
    ) {
        self.name = name
        self.size = size
        self.version = version
        self.updated = updated
        self.described = described
        self.contentType = contentType
        self.cacheControl = cacheControl
        self.contentDisposition = contentDisposition
        self.contentEncoding = contentEncoding
        self.contentLanguage = contentLanguage
        self.customMetadata = customMetadata
        self.sha256 = sha256
        self.md5 = md5
        self.crc32c = crc32c
    }

    /// The object's metadata as the manifest records it; hashes the store does not give all three of
    /// are left empty, to be computed from the bytes.
    var blobMetadata: BlobMetadata {
        let complete = sha256 != nil && md5 != nil && crc32c != nil
        return BlobMetadata(
            name: name, size: size, contentType: contentType, sha256: complete ? sha256! : "", md5: complete ? md5! : "",
            crc32c: complete ? crc32c! : "", customMetadata: customMetadata, cacheControl: cacheControl,
            contentDisposition: contentDisposition, contentEncoding: contentEncoding, contentLanguage: contentLanguage, updated: updated)
    }

    /// Whether the store gave all three hashes.
    var hasAllHashes: Bool { sha256 != nil && md5 != nil && crc32c != nil }

    /// Why `digest` (of the bytes read) is not what the store says the content is, or `nil`.
    func disagreement(with digest: (sha256: String, md5: String, crc32c: String)) -> String? {
        if let sha256, sha256 != digest.sha256 { return "SHA-256 \(digest.sha256), the store records \(sha256)" }
        if let md5, md5 != digest.md5 { return "MD5 \(digest.md5), the store reports \(md5)" }
        if let crc32c, crc32c != digest.crc32c { return "CRC-32C \(digest.crc32c), the store reports \(crc32c)" }
        return nil
    }
}

/// An object of a bucket that changed while it was being archived: another version, another size,
/// gone, or bytes that disagree with the hashes the store reports. `archive` reports each (exit code 1)
/// and leaves it out of the archive (see `ArchiveJob.Summary.changed`).
public struct ArchiveSourceChange: Error, CustomStringConvertible, Sendable, Equatable {
    /// The source's location (`gs://bucket/prefix/`).
    public let location: String
    /// The object's name, relative to the location.
    public let name: String
    /// What differs (`ETag "b1..." when listed, "9f..." when read`).
    public let reason: String
    /// What became of the object in the archive.
    public var outcome: String

    public init(location: String, name: String, reason: String, outcome: String = "left out of the archive") {
        self.location = location
        self.name = name
        self.reason = reason
        self.outcome = outcome
    }

    public var description: String {
        "\(location): object \(String(reflecting: name)) changed while it was being archived (\(reason)); \(outcome)"
    }
}

/// A read an `ArchiveObjectSource` has started: `wait()` blocks until its bytes are there. The source
/// calls `complete` once, from any thread.
public final class ArchiveSourceRead: @unchecked Sendable {
    private let condition = NSCondition()
    private var result: Result<[UInt8], any Error>?

    public init() {}

    /// A read that is already done.
    public convenience init(_ result: Result<[UInt8], any Error>) {
        self.init()
        self.result = result
    }

    /// Hands over the bytes or the failure; later calls are ignored.
    public func complete(_ result: Result<[UInt8], any Error>) {
        condition.withLock {
            guard self.result == nil else { return }
            self.result = result
            condition.broadcast()
        }
    }

    /// The bytes, once they are there; throws what the read failed with.
    public func wait() throws -> [UInt8] {
        try condition.withLock {
            while result == nil { condition.wait() }
            return try result!.get()
        }
    }
}
