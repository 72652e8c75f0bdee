/// A bucket location: `s3://BUCKET/PREFIX` (any S3-compatible store) or `gs://BUCKET/PREFIX` (Google
/// Cloud Storage). Object names in the store are the prefix followed by the names DumpKit uses.
public struct ObjectStoreURL: Hashable, Sendable, CustomStringConvertible {
    public enum Scheme: String, Sendable {
        case s3
        case gs
    }

    public let scheme: Scheme
    public let bucket: String
    /// The key prefix, empty or ending in `/` (`images/`), so that `prefix + name` is the key.
    public let prefix: String

    /// Parses `location`; `nil` when it is not an `s3://` or `gs://` URL (a folder, then).
    public init?(_ location: String) throws(ObjectStoreURLError) {
        let scheme: Scheme
        if location.hasPrefix("s3://") {
            scheme = .s3
        } else if location.hasPrefix("gs://") {
            scheme = .gs
        } else {
            return nil
        }
        let rest = location.dropFirst(5)
        let bucket = String(rest.prefix { $0 != "/" })
        var prefix = String(rest.dropFirst(bucket.count).drop { $0 == "/" })
        guard (3...63).contains(bucket.utf8.count),
            bucket.utf8.allSatisfy({ ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D || $0 == 0x2E || $0 == 0x5F }),
            bucket.first != "-", bucket.first != ".", bucket.last != "-", bucket.last != "."
        else {
            throw ObjectStoreURLError(
                location: location,
                reason:
                    "the bucket name \"\(bucket)\" must be 3-63 lowercase letters, digits, '-', '.' or '_', beginning and ending with a letter or digit"
            )
        }
        guard !prefix.contains("//"), !prefix.split(separator: "/").contains(where: { $0 == "." || $0 == ".." }) else {
            throw ObjectStoreURLError(location: location, reason: "the prefix \"\(prefix)\" has an empty, '.' or '..' segment")
        }
        if !prefix.isEmpty, !prefix.hasSuffix("/") { prefix += "/" }
        self.scheme = scheme
        self.bucket = bucket
        self.prefix = prefix
    }

    /// `s3://bucket/prefix/`, as users wrote it (with the prefix's slash).
    public var description: String { "\(scheme.rawValue)://\(bucket)/\(prefix)" }

    /// The key of the object DumpKit calls `name`.
    public func key(_ name: String) -> String { prefix + name }

    /// The name of the object with `key`, or `nil` when the key is not below the prefix.
    public func name(ofKey key: String) -> String? {
        guard key.hasPrefix(prefix), key.utf8.count > prefix.utf8.count else { return nil }
        return String(key.dropFirst(prefix.count))
    }
}

/// A location that looks like a store URL but is not a valid one (exit code 2).
public struct ObjectStoreURLError: Error, CustomStringConvertible, Sendable {
    public let location: String
    public let reason: String
    public var description: String { "store URL \(location): \(reason)" }
}
