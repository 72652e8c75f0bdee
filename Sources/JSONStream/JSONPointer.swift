/// RFC 6901 JSON Pointers: building, escaping and parsing the `/a/b~1c` form.
public enum JSONPointer {
    /// Escapes one reference token (`~` -> `~0`, `/` -> `~1`).
    public static func escape(_ token: String) -> String {
        guard token.utf8.contains(where: { $0 == UInt8(ascii: "~") || $0 == UInt8(ascii: "/") }) else { return token }
        return token.replacingAll("~", with: "~0").replacingAll("/", with: "~1")
    }

    /// Unescapes one reference token (`~1` -> `/`, `~0` -> `~`).
    public static func unescape(_ token: String) -> String {
        guard token.utf8.contains(UInt8(ascii: "~")) else { return token }
        return token.replacingAll("~1", with: "/").replacingAll("~0", with: "~")
    }

    /// The pointer text for a list of unescaped segments; the empty list is the root, `""`.
    public static func string(_ segments: some Sequence<String>) -> String {
        var out = ""
        for s in segments {
            out += "/"
            out += escape(s)
        }
        return out
    }

    /// The unescaped segments of a pointer; `nil` when it neither is empty nor starts with `/`.
    public static func segments(_ pointer: String) -> [String]? {
        if pointer.isEmpty { return [] }
        guard pointer.hasPrefix("/") else { return nil }
        return pointer.dropFirst().split(separator: "/", omittingEmptySubsequences: false).map { unescape(String($0)) }
    }
}

extension String {
    /// Replaces every occurrence of `target` (no Foundation needed).
    func replacingAll(_ target: String, with replacement: String) -> String {
        var result = ""
        var rest = self[...]
        while let r = rest.range(of: target) {
            result += rest[..<r.lowerBound]
            result += replacement
            rest = rest[r.upperBound...]
        }
        result += rest
        return result
    }
}

extension Substring {
    fileprivate func range(of target: String) -> Range<Index>? {
        guard !target.isEmpty else { return nil }
        var i = startIndex
        while i < endIndex {
            if self[i...].hasPrefix(target) { return i..<index(i, offsetBy: target.count) }
            i = index(after: i)
        }
        return nil
    }
}
