import JSONStream

/// One REST request as the database sees it: method, database path, decoded query parameters,
/// bearer token and body.
public struct RESTRequest: Sendable {
    public var method: String
    /// The path segments below the root (`/users/jack.json` is `["users", "jack"]`).
    public var path: [String]
    public var query: [String: String]
    public var bearerToken: String?
    public var body: [UInt8]

    public init(method: String, path: [String], query: [String: String], bearerToken: String? = nil, body: [UInt8] = []) {
        self.method = method
        self.path = path
        self.query = query
        self.bearerToken = bearerToken
        self.body = body
    }

    /// Parses a request target such as `/users/jack.json?shallow=true&orderBy=%22%24key%22`; `nil`
    /// when the path does not end in `.json` (every REST URL does: "API Usage" in
    /// firebase.google.com/docs/reference/rest/database).
    public init?(method: String, target: String, authorization: String?, body: [UInt8]) {
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        var rawPath = String(parts[0])
        guard rawPath.hasSuffix(".json") else { return nil }
        rawPath.removeLast(".json".count)
        var segments: [String] = []
        for piece in rawPath.split(separator: "/") {
            guard let s = Self.percentDecoded(piece) else { return nil }
            segments.append(s)
        }
        var query: [String: String] = [:]
        if parts.count > 1 {
            for item in parts[1].split(separator: "&") {
                let kv = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard let key = Self.percentDecoded(kv[0]),
                    let value = Self.percentDecoded(kv.count > 1 ? kv[1] : "")
                else { return nil }
                query[key] = value
            }
        }
        var bearer: String? = nil
        if let authorization, authorization.lowercased().hasPrefix("bearer ") {
            bearer = String(authorization.dropFirst("bearer ".count))
        }
        self.init(method: method, path: segments, query: query, bearerToken: bearer, body: body)
    }

    /// `%XX` decoding (and `+` as a space, as in form-encoded query strings); `nil` for bad escapes or UTF-8.
    static func percentDecoded(_ s: Substring) -> String? {
        var bytes: [UInt8] = []
        var it = Array(s.utf8)[...]
        while let b = it.popFirst() {
            if b == UInt8(ascii: "%") {
                guard it.count >= 2, let hi = hexValue(it.popFirst()!), let lo = hexValue(it.popFirst()!) else { return nil }
                bytes.append(hi << 4 | lo)
            } else if b == UInt8(ascii: "+") {
                bytes.append(UInt8(ascii: " "))
            } else {
                bytes.append(b)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}

/// The database's answer: a status and a JSON body (empty for `204 No Content`).
public struct RESTResponse: Sendable {
    public var status: Int
    public var body: [UInt8]

    public init(status: Int, body: [UInt8]) {
        self.status = status
        self.body = body
    }

    /// `{"error": message}`, the shape of every error the REST API returns.
    static func error(_ status: Int, _ message: String) -> RESTResponse {
        let sink = MemoryByteSink()
        let writer = JSONWriter(sink: sink)
        try? writer.beginObject()
        try? writer.name("error")
        try? writer.string(message)
        try? writer.endObject()
        try? writer.flush()
        return RESTResponse(status: status, body: sink.bytes)
    }
}
