/// The rules an object name must follow before any store writes it: a bucket's rules (1-1024 bytes of
/// UTF-8, no CR or LF), plus those that keep a directory store inside its directory.
public enum BlobObjectName {
    /// The longest name, in bytes of UTF-8.
    public static let maximumLength = 1024
    /// The first segment reserved for a store's own files (metadata, temporary files).
    public static let reservedSegment = ".dumpkit"

    /// Throws a `BlobNameError` saying what is wrong with `name`, if anything.
    public static func validate(_ name: String) throws(BlobNameError) {
        func fail(_ reason: String) throws(BlobNameError) { throw BlobNameError(name: name, reason: reason) }
        let bytes = name.utf8
        if bytes.isEmpty { try fail("is empty") }
        if bytes.count > maximumLength { try fail("is longer than \(maximumLength) bytes") }
        if bytes.contains(where: { $0 == 0x0A || $0 == 0x0D }) { try fail("contains a line break") }
        if bytes.contains(0) { try fail("contains a NUL character") }
        if bytes.first == UInt8(ascii: "/") { try fail("is absolute (starts with '/')") }
        let segments = name.split(separator: "/", omittingEmptySubsequences: false)
        for segment in segments {
            if segment.isEmpty { try fail("has an empty segment ('//' or a trailing '/')") }
            if segment == "." || segment == ".." { try fail("has a '\(segment)' segment") }
        }
        if segments.first == Substring(reservedSegment) { try fail("starts with '\(reservedSegment)/', which the store keeps for itself") }
    }
}

/// An object name that a store must not write.
public struct BlobNameError: DataError, CustomStringConvertible, Sendable {
    public let name: String
    public let reason: String
    public var description: String {
        let shown = name.count > 120 ? String(name.prefix(120)) + "..." : name
        return "object name \(String(reflecting: shown)) \(reason)"
    }
}
