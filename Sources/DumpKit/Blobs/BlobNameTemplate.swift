import JSONStream

/// How an extracted object is named: text with placeholders for the value's path, the record's
/// captures, the field, the detected extension and the content hash.
///
/// Placeholders: `{path}` the value's keys from the root joined by `/` (`v1/todolist/-Kabc/image1`),
/// `{record}` the record's keys, `{field}` the value's own key, `{ext}` the extension of the detected
/// type (`jpg`), `{sha256}` the content's SHA-256 in hex, and `{name}` for any capture of the path
/// patterns (`{id}`). The built-in names win over captures of the same name.
public struct BlobNameTemplate: Hashable, Sendable, CustomStringConvertible {
    enum Part: Hashable, Sendable {
        case literal(String)
        case path, record, field, ext, sha256
        case capture(String)
    }

    /// The template as written.
    public let text: String
    let parts: [Part]

    /// `{path}.{ext}`: objects mirror the dump (`v1/todolist/-Kabc/image1.jpg`).
    public static let pathBased = try! BlobNameTemplate("{path}.{ext}")
    /// `sha256/{sha256}.{ext}`: one object per distinct content.
    public static let contentAddressed = try! BlobNameTemplate("sha256/{sha256}.{ext}")

    /// Parses a template; every `{` must open a placeholder closed by `}`.
    public init(_ text: String) throws(UsageError) {
        var parts: [Part] = []
        var rest = Substring(text)
        while let open = rest.firstIndex(of: "{") {
            if open > rest.startIndex { parts.append(.literal(String(rest[..<open]))) }
            guard let close = rest[open...].firstIndex(of: "}") else { throw UsageError("name template '\(text)': '{' without '}'") }
            let name = String(rest[rest.index(after: open)..<close])
            switch name {
            case "path": parts.append(.path)
            case "record": parts.append(.record)
            case "field": parts.append(.field)
            case "ext": parts.append(.ext)
            case "sha256": parts.append(.sha256)
            default:
                guard !name.isEmpty, !name.contains("{") else { throw UsageError("name template '\(text)': bad placeholder '{\(name)}'") }
                parts.append(.capture(name))
            }
            rest = rest[rest.index(after: close)...]
        }
        if rest.contains("}") { throw UsageError("name template '\(text)': '}' without '{'") }
        if !rest.isEmpty { parts.append(.literal(String(rest))) }
        guard !parts.isEmpty else { throw UsageError("name template is empty") }
        self.text = text
        self.parts = parts
    }

    public var description: String { text }

    /// The capture names the template uses.
    public var captureNames: [String] {
        parts.compactMap { if case .capture(let n) = $0 { return n } else { return nil } }
    }

    /// The object name for a value; throws if the template uses a capture the value's patterns
    /// did not make.
    public func render(path: [String], recordPath: [String], captures: [String: String], fileExtension: String, sha256: String)
        throws(BlobNameError) -> String
    {
        var out = ""
        for part in parts {
            switch part {
            case .literal(let s): out += s
            case .path: out += path.joined(separator: "/")
            case .record: out += recordPath.joined(separator: "/")
            case .field: out += path.last ?? ""
            case .ext: out += fileExtension
            case .sha256: out += sha256
            case .capture(let n):
                guard let v = captures[n] else {
                    throw BlobNameError(name: text, reason: "uses {\(n)}, which no path pattern captured at \(JSONPointer.string(path))")
                }
                out += v
            }
        }
        return out
    }
}
