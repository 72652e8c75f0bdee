/// A path relative to an extraction destination, made from an entry's stored path so that it can
/// only name something inside the destination.
///
/// The stored path is cleaned the way bsdtar cleans it: a leading `/`, a Windows drive (`c:`), a device
/// or UNC prefix (`//?/`, `//./`, `//?/UNC/`) and leading `/..` are removed, with `\` counted as a
/// separator in those prefixes. Empty and `.` components are dropped. What remains must not contain a
/// `..` component, with either `/` or `\` as the separator, or the path is refused. Backslashes inside
/// a name are otherwise kept: on Linux they are ordinary characters, and object names may hold them.
public struct EntryPath: Hashable, Sendable, CustomStringConvertible {
    /// The names from the destination down, none empty, `.` or `..`, none containing `/`.
    public let components: [String]
    /// The prefix that was removed (`/`, `c:/`, `//?/UNC/`), if any, so callers can say so.
    public let removedPrefix: String?

    /// Cleans `stored`; throws when it climbs out with `..` after its prefix is removed.
    public init(sanitizing stored: String) throws(UnsafePathError) {
        let bytes = Array(stored.utf8)
        let start = Self.prefixLength(bytes)
        var components: [String] = []
        for piece in bytes[start...].split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true) {
            if piece.elementsEqual(".".utf8) { continue }
            if piece.split(separator: UInt8(ascii: "\\"), omittingEmptySubsequences: false).contains(where: { $0.elementsEqual("..".utf8) })
            {
                throw UnsafePathError(path: stored, reason: "the path contains a '..' component")
            }
            components.append(String(decoding: piece, as: UTF8.self))
        }
        self.components = components
        removedPrefix = start > 0 ? String(decoding: bytes[..<start], as: UTF8.self) : nil
    }

    /// A path from components that are already known to be plain names (no `/`, not `.` or `..`).
    public init(components: [String]) throws(UnsafePathError) {
        for name in components where name.isEmpty || name == "." || name == ".." || name.utf8.contains(UInt8(ascii: "/")) {
            throw UnsafePathError(path: components.joined(separator: "/"), reason: "'\(name)' is not a plain name")
        }
        self.components = components
        removedPrefix = nil
    }

    /// The path with `/` separators; empty for the destination itself.
    public var description: String { components.joined(separator: "/") }

    /// The last name, or `nil` for the destination itself.
    public var name: String? { components.last }

    /// The path of the directory holding this one.
    public var parentComponents: ArraySlice<String> { components.dropLast() }

    /// How many leading bytes of `p` are an absolute or Windows prefix (bsdtar's `strip_absolute_path`).
    private static func prefixLength(_ p: [UInt8]) -> Int {
        func at(_ i: Int) -> UInt8 { i < p.count ? p[i] : 0 }
        func isSeparator(_ i: Int) -> Bool { at(i) == UInt8(ascii: "/") || at(i) == UInt8(ascii: "\\") }
        func isLetter(_ i: Int) -> Bool { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(at(i) | 0x20) }
        var i = 0
        // "//./", "//?/" and "//?/UNC/": Windows device and long-path prefixes.
        if isSeparator(0), isSeparator(1), at(2) == UInt8(ascii: ".") || at(2) == UInt8(ascii: "?"), isSeparator(3) {
            if at(2) == UInt8(ascii: "?"), at(4) | 0x20 == UInt8(ascii: "u"), at(5) | 0x20 == UInt8(ascii: "n"),
                at(6) | 0x20 == UInt8(ascii: "c"), isSeparator(7)
            {
                i = 8
            } else {
                i = 4
            }
        }
        var before: Int
        repeat {
            before = i
            // A drive letter: "c:".
            if isLetter(i), at(i + 1) == UInt8(ascii: ":") { i += 2 }
            // Leading separators, "/.." and "/." (at the root, ".." is the root).
            while isSeparator(i) {
                if at(i + 1) == UInt8(ascii: "."), at(i + 2) == UInt8(ascii: "."), isSeparator(i + 3) {
                    i += 3
                } else if at(i + 1) == UInt8(ascii: "."), isSeparator(i + 2) {
                    i += 2
                } else {
                    i += 1
                }
            }
        } while i != before
        return i
    }
}

/// An entry path that would leave the destination.
public struct UnsafePathError: Error, CustomStringConvertible, Sendable {
    /// The path as stored.
    public let path: String
    /// Why it is refused.
    public let reason: String

    public var description: String { "\(path): \(reason)" }
}
