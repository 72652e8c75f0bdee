/// An RFC 3986 URI reference split into its five components, with reference resolution.
///
/// Schemas identify themselves and each other with URIs (`$id`, `$ref`, `$schema`); this type does
/// only what that needs: parsing, resolving a reference against a base, removing dot segments, and
/// a normalised text form (lower-case scheme and host, no empty fragment) used as a lookup key.
package struct SchemaURI: Hashable, Sendable, CustomStringConvertible {
    var scheme: String?
    var authority: String?
    var path: String
    var query: String?
    var fragment: String?

    /// Splits `text` with the generic RFC 3986 (appendix B) grammar; never fails.
    package init(_ text: String) {
        var rest = Substring(text)
        if let hash = rest.firstIndex(of: "#") {
            fragment = String(rest[rest.index(after: hash)...])
            rest = rest[..<hash]
        }
        if let question = rest.firstIndex(of: "?") {
            query = String(rest[rest.index(after: question)...])
            rest = rest[..<question]
        }
        if let colon = rest.firstIndex(of: ":"), SchemaURI.isScheme(rest[..<colon]) {
            scheme = rest[..<colon].lowercased()
            rest = rest[rest.index(after: colon)...]
        }
        if rest.hasPrefix("//") {
            rest = rest.dropFirst(2)
            let end = rest.firstIndex(of: "/") ?? rest.endIndex
            authority = rest[..<end].lowercased()
            rest = rest[end...]
        }
        path = String(rest)
    }

    private init(scheme: String?, authority: String?, path: String, query: String?, fragment: String?) {
        self.scheme = scheme
        self.authority = authority
        self.path = path
        self.query = query
        self.fragment = fragment
    }

    private static func isScheme(_ s: Substring) -> Bool {
        guard let first = s.unicodeScalars.first, first.isASCII, first.properties.isAlphabetic else { return false }
        return s.unicodeScalars.allSatisfy { c in
            c.isASCII && (c.properties.isAlphabetic || ("0"..."9").contains(c) || c == "+" || c == "-" || c == ".")
        }
    }

    /// Whether the URI has a scheme (so it can serve as a base).
    package var isAbsolute: Bool { scheme != nil }

    /// The same URI without its fragment.
    package var withoutFragment: SchemaURI {
        SchemaURI(scheme: scheme, authority: authority, path: path, query: query, fragment: nil)
    }

    /// The text form; an empty fragment (`...#`) is dropped, as it names the same resource.
    package var description: String {
        var out = ""
        if let scheme { out += scheme + ":" }
        if let authority { out += "//" + authority }
        out += path
        if let query { out += "?" + query }
        if let fragment, !fragment.isEmpty { out += "#" + fragment }
        return out
    }

    /// Resolves `reference` against this base URI (RFC 3986 section 5.2.2).
    func resolving(_ reference: String) -> SchemaURI {
        let r = SchemaURI(reference)
        if r.scheme != nil {
            return SchemaURI(
                scheme: r.scheme, authority: r.authority, path: SchemaURI.removeDotSegments(r.path), query: r.query, fragment: r.fragment)
        }
        if r.authority != nil {
            return SchemaURI(
                scheme: scheme, authority: r.authority, path: SchemaURI.removeDotSegments(r.path), query: r.query, fragment: r.fragment)
        }
        if r.path.isEmpty {
            return SchemaURI(scheme: scheme, authority: authority, path: path, query: r.query ?? query, fragment: r.fragment)
        }
        let merged: String
        if r.path.hasPrefix("/") {
            merged = r.path
        } else if authority != nil && path.isEmpty {
            merged = "/" + r.path
        } else if let slash = path.lastIndex(of: "/") {
            merged = path[...slash] + r.path
        } else {
            merged = r.path
        }
        return SchemaURI(
            scheme: scheme, authority: authority, path: SchemaURI.removeDotSegments(merged), query: r.query, fragment: r.fragment)
    }

    /// RFC 3986 section 5.2.4: removes `.` and `..` segments from a path.
    static func removeDotSegments(_ path: String) -> String {
        guard path.contains(".") else { return path }
        var input = Substring(path)
        var output: [Substring] = []
        while !input.isEmpty {
            if input.hasPrefix("../") {
                input = input.dropFirst(3)
            } else if input.hasPrefix("./") {
                input = input.dropFirst(2)
            } else if input.hasPrefix("/./") {
                input = input.dropFirst(2)
            } else if input == "/." {
                input = "/"
            } else if input.hasPrefix("/../") || input == "/.." {
                input = input == "/.." ? "/" : input.dropFirst(3)
                if !output.isEmpty { output.removeLast() }
            } else if input == "." || input == ".." {
                input = ""
            } else {
                let start = input.hasPrefix("/") ? input.index(after: input.startIndex) : input.startIndex
                let end = input[start...].firstIndex(of: "/") ?? input.endIndex
                output.append(input[..<end])
                input = input[end...]
            }
        }
        return output.joined()
    }

    /// Decodes `%XX` escapes (as UTF-8); malformed escapes are kept as written.
    static func percentDecoded(_ text: String) -> String {
        guard text.contains("%") else { return text }
        var bytes: [UInt8] = []
        var utf8 = Array(text.utf8)[...]
        while let b = utf8.popFirst() {
            if b == UInt8(ascii: "%"), utf8.count >= 2,
                let hi = hexValue(utf8[utf8.startIndex]), let lo = hexValue(utf8[utf8.startIndex + 1])
            {
                bytes.append(hi << 4 | lo)
                utf8 = utf8.dropFirst(2)
            } else {
                bytes.append(b)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hexValue(_ b: UInt8) -> UInt8? {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return b - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return b - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return b - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
