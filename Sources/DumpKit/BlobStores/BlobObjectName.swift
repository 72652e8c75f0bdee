/// The rules an object name must follow before any store writes it or any archive takes it: a
/// bucket's rules (1-1024 bytes of UTF-8, no CR or LF), plus those that keep a directory store inside
/// its directory, let every segment be a file name (at most 255 bytes), so that a name is refused
/// before anything is written rather than by the file system midway, and let `restore` put the object
/// back under the same name (it refuses `..` between backslashes and strips a leading drive or `\`,
/// as bsdtar does: see `EntryPath`). `extract-blobs`, the stores and `archive` all check this one rule.
public enum BlobObjectName {
    /// The longest name, in bytes of UTF-8.
    public static let maximumLength = 1024
    /// The longest segment, in bytes: the file name limit of Linux file systems (`NAME_MAX`).
    public static let maximumSegmentLength = 255
    /// The first segment reserved for a store's own files (metadata, temporary files).
    public static let reservedSegment = ".dumpkit"

    /// Throws a `BlobNameError` saying what is wrong with `name`, if anything (the first of: empty,
    /// too long, a line break, NUL, absolute, a Windows prefix, a bad segment (empty, `.`, `..`, `..`
    /// between backslashes, too long) in name order, the reserved segment).
    public static func validate(_ name: String) throws(BlobNameError) {
        func fail(_ reason: String) throws(BlobNameError) { throw BlobNameError(name: name, reason: reason) }
        let bytes = name.utf8
        if bytes.isEmpty { try fail("is empty") }
        if bytes.count > maximumLength { try fail("is longer than \(maximumLength) bytes") }
        // One pass over the bytes; the rules are then reported in the order above.
        var lineBreak = false, nul = false
        var badSegment: String?
        var length = 0, dots = 0
        // The part of the segment since its last backslash, and whether the segment has one.
        var pieceLength = 0, pieceDots = 0, backslashes = false
        func endPiece(backslashFollows: Bool) {
            if badSegment == nil, backslashFollows || backslashes, pieceLength == 2, pieceDots == 2 {
                badSegment = "has a '..' between backslashes, which restore refuses (a separator on Windows)"
            }
            pieceLength = 0
            pieceDots = 0
        }
        func endSegment() {
            endPiece(backslashFollows: false)
            backslashes = false
            guard badSegment == nil else { return }
            if length == 0 {
                badSegment = "has an empty segment ('//' or a trailing '/')"
            } else if dots == length && length <= 2 {
                badSegment = length == 1 ? "has a '.' segment" : "has a '..' segment"
            } else if length > maximumSegmentLength {
                badSegment = "has a segment of \(length) bytes (a file name holds at most \(maximumSegmentLength))"
            }
        }
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "/"):
                endSegment()
                length = 0
                dots = 0
                continue
            case UInt8(ascii: "\\"):
                endPiece(backslashFollows: true)
                backslashes = true
                length += 1
                continue
            case 0x0A, 0x0D: lineBreak = true
            case 0: nul = true
            case UInt8(ascii: "."):
                dots += 1
                pieceDots += 1
            default: break
            }
            length += 1
            pieceLength += 1
        }
        endSegment()
        if lineBreak { try fail("contains a line break") }
        if nul { try fail("contains a NUL character") }
        if bytes.first == UInt8(ascii: "/") { try fail("is absolute (starts with '/')") }
        if bytes.first == UInt8(ascii: "\\") { try fail("starts with '\\', which archives strip (a Windows root)") }
        let first = Array(bytes.prefix(2))
        if first.count == 2, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first[0] | 0x20), first[1] == UInt8(ascii: ":") {
            try fail("starts with a drive letter ('\(Character(Unicode.Scalar(first[0]))):'), which archives strip")
        }
        if let badSegment { try fail(badSegment) }
        let reserved = reservedSegment.utf8
        if bytes.starts(with: reserved), bytes.count == reserved.count || bytes.dropFirst(reserved.count).first == UInt8(ascii: "/") {
            try fail("starts with '\(reservedSegment)/', which the store keeps for itself")
        }
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
