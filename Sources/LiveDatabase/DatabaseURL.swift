import Foundation

/// A location in a live Realtime Database: the database (`https://NS.firebaseio.com` or
/// `https://NS.REGION.firebasedatabase.app`) and a path in it, and where requests for it go.
///
/// With `FIREBASE_DATABASE_EMULATOR_HOST=host:port` (the convention of Firebase's SDKs and the
/// emulator) requests go to `http://host:port/PATH.json?ns=NS` instead, without credentials.
public struct DatabaseURL: Sendable, Equatable, CustomStringConvertible {
    /// The database's name, `NS` in its host name.
    public let namespace: String
    /// `https://NS.firebaseio.com` (no trailing slash).
    public let databaseOrigin: String
    /// The path below the root, as segments.
    public let path: [String]
    /// `host:port` of an emulator (or the project's test server) when requests go there.
    public let emulatorHost: String?

    /// A database URL that is not one.
    public struct Invalid: Error, CustomStringConvertible, Sendable {
        public let url: String
        public let reason: String
        public var description: String { "\(url): not a Realtime Database URL: \(reason)" }
    }

    /// Parses `https://NS.firebaseio.com/PATH` or `https://NS.REGION.firebasedatabase.app/PATH`
    /// (a trailing `.json` is ignored); `emulatorHost` from `FIREBASE_DATABASE_EMULATOR_HOST`.
    public init(_ text: String, emulatorHost: String? = ProcessInfo.processInfo.environment["FIREBASE_DATABASE_EMULATOR_HOST"]) throws {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            let host = components.host?.lowercased(), !host.isEmpty
        else {
            throw Invalid(url: text, reason: "expected https://NAME.firebaseio.com or https://NAME.REGION.firebasedatabase.app")
        }
        guard scheme == "https" || (scheme == "http" && emulatorHost != nil) else {
            throw Invalid(url: text, reason: "the REST API answers HTTPS only")
        }
        let labels = host.split(separator: ".")
        let isFirebaseIO = labels.count == 3 && host.hasSuffix(".firebaseio.com")
        let isRegional = labels.count == 4 && host.hasSuffix(".firebasedatabase.app")
        guard isFirebaseIO || isRegional, let ns = labels.first, !ns.isEmpty else {
            throw Invalid(url: text, reason: "expected https://NAME.firebaseio.com or https://NAME.REGION.firebasedatabase.app")
        }
        guard components.query == nil, components.fragment == nil else {
            throw Invalid(url: text, reason: "put options in flags, not in a query string")
        }
        var rawPath = components.percentEncodedPath
        if rawPath.hasSuffix(".json") { rawPath.removeLast(".json".count) }
        var segments: [String] = []
        for piece in rawPath.split(separator: "/") {
            guard let s = String(piece).removingPercentEncoding else { throw Invalid(url: text, reason: "bad percent escape in \(piece)") }
            if let bad = s.first(where: { ".$#[]".contains($0) || $0.asciiValue.map { $0 < 0x20 || $0 == 0x7F } == true }) {
                throw Invalid(url: text, reason: "path segment \(s) holds \(bad), which keys cannot")
            }
            segments.append(s)
        }
        namespace = String(ns)
        databaseOrigin = "https://\(host)"
        path = segments
        if let emulatorHost, !emulatorHost.isEmpty {
            self.emulatorHost = emulatorHost
        } else {
            self.emulatorHost = nil
        }
    }

    private init(namespace: String, databaseOrigin: String, path: [String], emulatorHost: String?) {
        self.namespace = namespace
        self.databaseOrigin = databaseOrigin
        self.path = path
        self.emulatorHost = emulatorHost
    }

    /// The location `relative` below this one.
    public func appending(_ relative: [String]) -> DatabaseURL {
        DatabaseURL(namespace: namespace, databaseOrigin: databaseOrigin, path: path + relative, emulatorHost: emulatorHost)
    }

    /// The database's root (where `/.settings/rules.json` is).
    public var root: DatabaseURL {
        DatabaseURL(namespace: namespace, databaseOrigin: databaseOrigin, path: [], emulatorHost: emulatorHost)
    }

    /// Whether credentials are sent (never to an emulator).
    public var sendsCredentials: Bool { emulatorHost == nil }

    /// The REST URL of `path + relative` with `query` (values as given: JSON-encoded where the API wants JSON).
    public func restURL(_ relative: [String] = [], query: [(String, String)] = []) -> String {
        var url = emulatorHost.map { "http://\($0)" } ?? databaseOrigin
        url += "/" + (path + relative).map(Self.escapeSegment).joined(separator: "/") + ".json"
        var items = query
        if emulatorHost != nil { items.insert(("ns", namespace), at: 0) }
        if !items.isEmpty {
            url += "?" + items.map { "\($0.0)=\(Self.escapeQueryValue($0.1))" }.joined(separator: "&")
        }
        return url
    }

    /// The location for people and errors: `https://NS.firebaseio.com/a/b`.
    public var description: String {
        databaseOrigin + (path.isEmpty ? "/" : "/" + path.map(Self.escapeSegment).joined(separator: "/"))
    }

    /// RFC 3986's unreserved characters. (A key cannot hold `.`, so `.` and `..` never stand as
    /// segments; `.settings`, `.priority` and `.value` are sent as they are written.)
    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_~.")

    static func escapeSegment(_ s: String) -> String {
        s.addingPercentEncoding(withAllowedCharacters: unreserved) ?? s
    }

    static func escapeQueryValue(_ s: String) -> String {
        s.addingPercentEncoding(withAllowedCharacters: unreserved) ?? s
    }
}
