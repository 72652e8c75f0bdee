import JSONStream

/// What a store keeps about one object, as Cloud Storage reports it; the directory store writes it as
/// a sidecar JSON file, archives carry it in their manifest.
public struct BlobMetadata: Hashable, Sendable {
    /// The object name (`v1/todolist/-Kabc/image1.jpg`), 1-1024 bytes of UTF-8, no CR/LF.
    public var name: String
    public var size: Int64
    public var contentType: String?
    /// SHA-256 of the content, lowercase hex.
    public var sha256: String
    /// MD5 of the content, base64 (as buckets report `md5Hash`).
    public var md5: String
    /// CRC-32C of the content, base64 of the big-endian value (as buckets report `crc32c`).
    public var crc32c: String
    /// Custom metadata, e.g. `firebaseStorageDownloadTokens`.
    public var customMetadata: [String: String]
    public var cacheControl: String?
    public var contentDisposition: String?
    public var contentEncoding: String?
    public var contentLanguage: String?
    /// Modification time, milliseconds since the epoch.
    public var updated: Int64?

    public init(
        name: String, size: Int64, contentType: String?, sha256: String, md5: String, crc32c: String,
        customMetadata: [String: String] = [:], cacheControl: String? = nil, contentDisposition: String? = nil,
        contentEncoding: String? = nil, contentLanguage: String? = nil, updated: Int64? = nil
    ) {
        self.name = name
        self.size = size
        self.contentType = contentType
        self.sha256 = sha256
        self.md5 = md5
        self.crc32c = crc32c
        self.customMetadata = customMetadata
        self.cacheControl = cacheControl
        self.contentDisposition = contentDisposition
        self.contentEncoding = contentEncoding
        self.contentLanguage = contentLanguage
        self.updated = updated
    }

    /// The metadata as a JSON object with stable member order (for sidecars and manifests).
    public var jsonValue: JSONValue {
        var members: [JSONObject.Member] = [.init(key: "name", value: .string(name)), .init(key: "size", value: .number(JSONNumber(size)))]
        members.reserveCapacity(13)
        func add(_ key: String, _ value: String?) {
            if let value { members.append(.init(key: key, value: .string(value))) }
        }
        add("contentType", contentType)
        add("sha256", sha256)
        add("md5", md5)
        add("crc32c", crc32c)
        if !customMetadata.isEmpty {
            let custom = customMetadata.keys.sorted().map { JSONObject.Member(key: $0, value: .string(customMetadata[$0]!)) }
            members.append(.init(key: "metadata", value: .object(JSONObject(custom))))
        }
        add("cacheControl", cacheControl)
        add("contentDisposition", contentDisposition)
        add("contentEncoding", contentEncoding)
        add("contentLanguage", contentLanguage)
        if let updated { members.append(.init(key: "updated", value: .number(JSONNumber(updated)))) }
        return .object(JSONObject(members))
    }

    /// Reads metadata written by `jsonValue`; fails with a message naming the bad member.
    public init(json: JSONValue) throws(BlobMetadataError) {
        guard let o = json.objectValue else { throw BlobMetadataError("metadata must be an object") }
        func string(_ k: String) throws(BlobMetadataError) -> String? {
            guard let v = o[k] else { return nil }
            guard let s = v.stringValue else { throw BlobMetadataError("\"\(k)\" must be a string") }
            return s
        }
        func required(_ k: String) throws(BlobMetadataError) -> String {
            guard let s = try string(k) else { throw BlobMetadataError("missing \"\(k)\"") }
            return s
        }
        guard let size = o["size"]?.numberValue?.int64Value, size >= 0 else {
            throw BlobMetadataError("\"size\" must be a non-negative integer")
        }
        var custom: [String: String] = [:]
        if let m = o["metadata"] {
            guard let mo = m.objectValue else { throw BlobMetadataError("\"metadata\" must be an object") }
            for member in mo {
                guard let s = member.value.stringValue else { throw BlobMetadataError("metadata \"\(member.key)\" must be a string") }
                custom[member.key] = s
            }
        }
        self.init(
            name: try required("name"), size: size, contentType: try string("contentType"), sha256: try required("sha256"),
            md5: try required("md5"), crc32c: try required("crc32c"), customMetadata: custom,
            cacheControl: try string("cacheControl"), contentDisposition: try string("contentDisposition"),
            contentEncoding: try string("contentEncoding"), contentLanguage: try string("contentLanguage"),
            updated: o["updated"]?.numberValue?.int64Value)
    }
}

/// Metadata that does not have the expected shape.
public struct BlobMetadataError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ message: String) { description = message }
}
