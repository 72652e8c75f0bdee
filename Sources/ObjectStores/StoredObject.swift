import DumpKit

/// What a store reports about one object: size, hashes and the metadata Cloud Storage keeps, in one
/// shape for S3 and GCS. Listings fill only what they return (S3: key, size, ETag, time).
public struct StoredObject: Sendable, Hashable {
    /// The object's key in the bucket (the store URL's prefix included).
    public var key: String
    public var size: Int64
    /// The ETag as the store gives it, without quotes (S3: the hex MD5 for single-part uploads).
    public var etag: String?
    /// The Cloud Storage generation (conditions metadata updates on the object that was read).
    public var generation: String?
    /// MD5 of the content, base64 (GCS `md5Hash`, a single-part S3 ETag, or DumpKit's own record).
    public var md5: String?
    /// CRC-32C, base64 of the big-endian value (GCS `crc32c`, or DumpKit's own record).
    public var crc32c: String?
    /// SHA-256, lowercase hex, as DumpKit recorded it when it wrote the object.
    public var sha256: String?
    public var contentType: String?
    public var cacheControl: String?
    public var contentDisposition: String?
    public var contentEncoding: String?
    public var contentLanguage: String?
    /// Custom metadata with its keys spelled as Firebase and GCS spell them (`firebaseStorageDownloadTokens`).
    public var customMetadata: [String: String] = [:]
    /// Modification time, milliseconds since the epoch.
    public var updated: Int64?

    public init(key: String, size: Int64) {
        self.key = key
        self.size = size
    }

    /// The metadata a `BlobStore` reports, when the store knows all three hashes.
    public func blobMetadata(name: String) -> BlobMetadata? {
        guard let sha256, let md5, let crc32c else { return nil }
        return BlobMetadata(
            name: name, size: size, contentType: contentType, sha256: sha256, md5: md5, crc32c: crc32c,
            customMetadata: customMetadata, cacheControl: cacheControl, contentDisposition: contentDisposition,
            contentEncoding: contentEncoding, contentLanguage: contentLanguage, updated: updated)
    }

    /// The object's metadata as a blob store keeps it, with the hashes of its bytes (`digest`) where
    /// the store's listing did not give them all.
    public func blobMetadata(name: String, digest: ContentDigest) -> BlobMetadata {
        var m = digest.metadata(name: name, contentType: contentType, customMetadata: customMetadata)
        m.cacheControl = cacheControl
        m.contentDisposition = contentDisposition
        m.contentEncoding = contentEncoding
        m.contentLanguage = contentLanguage
        m.updated = updated
        return m
    }

    /// Whether this object has the bytes of `other`: by SHA-256 where both have it, else by size and
    /// MD5 or CRC-32C.
    public func holdsSameContent(as other: StoredObject) -> Bool {
        sha256.flatMap { a in other.sha256.map { $0 == a && size == other.size } }
            ?? hasSameContent(size: other.size, md5: other.md5, crc32c: other.crc32c)
    }

    /// Whether the content is the same as that of an object of `size` with these hashes: equal sizes
    /// and an equal MD5 or CRC-32C (false when neither can be compared).
    public func hasSameContent(size: Int64, md5: String?, crc32c: String?) -> Bool {
        guard self.size == size else { return false }
        if let a = self.md5, let b = md5 { return a == b }
        if let a = self.crc32c, let b = crc32c { return a == b }
        return false
    }

    /// Whether `existing` (an object with the same content) already has this object's content type,
    /// cache control, content disposition/encoding/language and custom metadata, so that no metadata
    /// update is needed. Without a content type of its own (or a generic one) this object accepts any:
    /// stores give such objects a default or guess one from the name.
    public func metadataMatches(_ existing: StoredObject) -> Bool {
        var mine = describingMetadata, theirs = existing.describingMetadata
        if Self.isGeneric(contentType) { theirs["contentType"] = nil }
        mine["contentType"] = Self.isGeneric(contentType) ? nil : contentType
        return mine == theirs
    }

    private static func isGeneric(_ type: String?) -> Bool {
        type.map { ["application/octet-stream", "binary/octet-stream"].contains($0) } ?? true
    }

    private var describingMetadata: [String: String] {
        var all = customMetadata.mapKeys { "x:" + $0 }
        all["contentType"] = contentType
        all["cacheControl"] = cacheControl
        all["contentDisposition"] = contentDisposition
        all["contentEncoding"] = contentEncoding
        all["contentLanguage"] = contentLanguage
        return all
    }
}

extension StoredObject {
    /// An object described by `metadata`, stored under `key`.
    public init(key: String, metadata m: BlobMetadata) {
        self.init(key: key, size: m.size)
        md5 = m.md5
        crc32c = m.crc32c
        sha256 = m.sha256
        contentType = m.contentType
        cacheControl = m.cacheControl
        contentDisposition = m.contentDisposition
        contentEncoding = m.contentEncoding
        contentLanguage = m.contentLanguage
        customMetadata = m.customMetadata
        updated = m.updated
    }
}

/// The custom-metadata keys DumpKit reads and writes beside the user's own.
public enum MetadataKeys {
    /// DumpKit's record of the content's SHA-256 (hex): stores report MD5 and CRC-32C at best, and
    /// blob references name the SHA-256.
    public static let sha256 = "dumpkit-sha256"
    /// DumpKit's record of MD5 (base64) and CRC-32C (base64), for S3 objects whose ETag is not an MD5.
    public static let md5 = "dumpkit-md5"
    public static let crc32c = "dumpkit-crc32c"

    /// Keys whose spelling matters and that S3 (which lower-cases `x-amz-meta-*`) loses.
    public static let knownSpellings = ["firebaseStorageDownloadTokens"]

    /// The key as Firebase spells it, for a key S3 returned in lower case.
    public static func restoringCase(_ key: String) -> String {
        knownSpellings.first { $0.lowercased() == key } ?? key
    }

    /// Moves DumpKit's own keys out of `object.customMetadata` into its hash fields.
    static func takeHashes(_ object: inout StoredObject) {
        if let v = object.customMetadata.removeValue(forKey: sha256) { object.sha256 = v }
        if let v = object.customMetadata.removeValue(forKey: md5), object.md5 == nil { object.md5 = v }
        if let v = object.customMetadata.removeValue(forKey: crc32c), object.crc32c == nil { object.crc32c = v }
    }
}

extension Dictionary {
    func mapKeys(_ transform: (Key) -> String) -> [String: Value] {
        Dictionary<String, Value>(uniqueKeysWithValues: map { (transform($0.key), $0.value) })
    }
}
