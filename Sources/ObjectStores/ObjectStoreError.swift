import CloudHTTP

/// A request a store refused or could not be made (wrong credentials, a missing bucket, no permission,
/// a dropped connection after the last retry): one line naming the store URL, the endpoint, the
/// object, and the service's error code and message. The CLI exits with code 2.
public struct ObjectStoreError: Error, CustomStringConvertible, Sendable {
    /// The store's URL (`s3://bucket/prefix/`).
    public let store: String
    /// The endpoint the request went to (`http://127.0.0.1:8333`).
    public let endpoint: String
    /// The object concerned, if any.
    public let object: String?
    /// The HTTP status, when there was a response.
    public let status: Int?
    /// The service's error code (`SignatureDoesNotMatch`), when it gave one.
    public let code: String?
    public let message: String

    public init(store: String, endpoint: String, object: String? = nil, status: Int? = nil, code: String? = nil, message: String) {
        self.store = store
        self.endpoint = endpoint
        self.object = object
        self.status = status
        self.code = code
        self.message = message
    }

    /// `s3://bucket/key` when the store URL names just the object (a dump input or output: its
    /// prefix is `key/`), so that errors name the object as the user wrote it.
    private var objectURL: String? {
        guard let object, store.hasSuffix("/\(object)/") else { return nil }
        let bucket = store.dropLast(object.count + 2).split(separator: "://", maxSplits: 1)
        guard bucket.count == 2, !bucket[1].contains("/") else { return nil }
        return String(store.dropLast())
    }

    public var description: String {
        var s = "\(objectURL ?? store) (endpoint \(endpoint))"
        if let object, objectURL == nil { s += ", object \(String(reflecting: object))" }
        s += ": "
        if let status { s += "HTTP \(status) " }
        if let code { s += "\(code): " }
        return s + message
    }
}
