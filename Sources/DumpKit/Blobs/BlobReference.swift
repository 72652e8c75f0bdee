import Foundation
import JSONStream

/// The shapes a reference to an extracted object can take in the dump.
public enum BlobReferenceStyle: String, Sendable, CaseIterable {
    /// `{"path", "contentType", "size", "sha256", "md5"}` (the default).
    case object
    /// Salada's `File`: `{"name", "url", "mimeType"}` with a Firebase download URL.
    case salada
    /// The object name as a string.
    case path
    /// The Firebase download URL as a string.
    case url

    /// Whether the style needs a bucket name (for download URLs).
    public var needsBucket: Bool { self == .salada || self == .url }
}

/// A reference that replaced an embedded file in the dump: the object it names and, where the
/// style has room for it, how the original string was written, so `inline-blobs` restores it
/// exactly.
///
/// Object and Salada references carry `"encoding": "base64"` when the original was bare base64, and
/// `"header"` when it was a data URI whose header is not `data:<contentType>;base64,` (a declared
/// type the bytes contradicted, or parameters). Path and URL references are bare strings: they
/// restore as `data:<contentType>;base64,` data URIs.
public struct BlobReference: Hashable, Sendable {
    /// The object name in the store.
    public var name: String
    public var contentType: String?
    public var size: Int64?
    public var sha256: String?
    public var md5: String?
    /// The download token of a URL.
    public var token: String?
    /// How the original string was written, when the reference says.
    public var form: EmbeddedFile.Form?

    public init(
        name: String, contentType: String?, size: Int64? = nil, sha256: String? = nil, md5: String? = nil, token: String? = nil,
        form: EmbeddedFile.Form? = nil
    ) {
        self.name = name
        self.contentType = contentType
        self.size = size
        self.sha256 = sha256
        self.md5 = md5
        self.token = token
        self.form = form
    }

    /// The data URI header `inline-blobs` writes back: the recorded one, or `data:<type>;base64,`
    /// (empty for bare base64).
    public func originalHeader(contentType fallback: String?) -> String {
        switch form {
        case .bare: return ""
        case .dataURI(let header): return header
        case nil: return "data:\(contentType ?? fallback ?? "application/octet-stream");base64,"
        }
    }

    /// The reference as it goes into the dump; keys are valid database keys. `bucket` is needed for
    /// the Salada and URL styles.
    public func jsonValue(style: BlobReferenceStyle, bucket: String?) -> JSONValue {
        switch style {
        case .path: return .string(name)
        case .url: return .string(Self.downloadURL(bucket: bucket ?? "", name: name, token: token ?? ""))
        case .object:
            var o = JSONObject()
            o["path"] = .string(name)
            if let contentType { o["contentType"] = .string(contentType) }
            if let size { o["size"] = .number(JSONNumber(size)) }
            if let sha256 { o["sha256"] = .string(sha256) }
            if let md5 { o["md5"] = .string(md5) }
            addForm(to: &o)
            return .object(o)
        case .salada:
            var o = JSONObject()
            o["name"] = .string(String(name.split(separator: "/").last ?? Substring(name)))
            o["url"] = .string(Self.downloadURL(bucket: bucket ?? "", name: name, token: token ?? ""))
            if let contentType { o["mimeType"] = .string(contentType) }
            addForm(to: &o)
            return .object(o)
        }
    }

    private func addForm(to o: inout JSONObject) {
        switch form {
        case .bare: o["encoding"] = .string("base64")
        case .dataURI(let header) where header != "data:\(contentType ?? "");base64,": o["header"] = .string(header)
        default: break
        }
    }

    /// Reads a reference of `style`, or `nil` when `value` is not one.
    public init?(_ value: JSONValue, style: BlobReferenceStyle) {
        switch (style, value) {
        case (.path, .string(let s)):
            guard (try? BlobObjectName.validate(s)) != nil else { return nil }
            self.init(name: s, contentType: nil)
        case (.url, .string(let s)):
            guard let (name, token) = Self.parseDownloadURL(s) else { return nil }
            self.init(name: name, contentType: nil, token: token)
        case (.object, .object(let o)):
            let allowed: Set<String> = ["path", "contentType", "size", "sha256", "md5", "encoding", "header"]
            guard o.keys.allSatisfy(allowed.contains), let name = o["path"]?.stringValue, let sha = o["sha256"]?.stringValue,
                let size = o["size"]?.numberValue?.int64Value, let form = Self.form(o)
            else { return nil }
            self.init(
                name: name, contentType: o["contentType"]?.stringValue, size: size, sha256: sha, md5: o["md5"]?.stringValue, form: form)
        case (.salada, .object(let o)):
            let allowed: Set<String> = ["name", "url", "mimeType", "encoding", "header"]
            guard o.keys.allSatisfy(allowed.contains), o["name"]?.stringValue != nil, let url = o["url"]?.stringValue,
                let (name, token) = Self.parseDownloadURL(url), let form = Self.form(o)
            else { return nil }
            self.init(name: name, contentType: o["mimeType"]?.stringValue, token: token, form: form)
        default:
            return nil
        }
    }

    /// The recorded form; `.some(nil)` when none is recorded, `nil` when the keys are malformed.
    private static func form(_ o: JSONObject) -> EmbeddedFile.Form?? {
        switch (o["encoding"], o["header"]) {
        case (nil, nil): return .some(nil)
        case (.string("base64")?, nil): return .some(.bare)
        case (nil, .string(let h)?) where h.hasPrefix("data:") && h.hasSuffix(";base64,"): return .some(.dataURI(header: h))
        default: return nil
        }
    }

    // MARK: - Download URLs

    static let urlPrefix = "https://firebasestorage.googleapis.com/v0/b/"

    /// `https://firebasestorage.googleapis.com/v0/b/<bucket>/o/<url-encoded name>?alt=media&token=<token>`.
    public static func downloadURL(bucket: String, name: String, token: String) -> String {
        "\(urlPrefix)\(encodeComponent(bucket))/o/\(encodeComponent(name))?alt=media&token=\(encodeComponent(token))"
    }

    /// The object name and token of a Firebase download URL.
    public static func parseDownloadURL(_ url: String) -> (name: String, token: String?)? {
        guard url.hasPrefix(urlPrefix) else { return nil }
        let rest = url.dropFirst(urlPrefix.count)
        guard let o = rest.range(of: "/o/") else { return nil }
        let afterO = rest[o.upperBound...]
        let query = afterO.firstIndex(of: "?")
        guard let name = String(afterO[..<(query ?? afterO.endIndex)]).removingPercentEncoding, !name.isEmpty else { return nil }
        var token: String?
        if let query {
            for item in afterO[afterO.index(after: query)...].split(separator: "&") where item.hasPrefix("token=") {
                token = String(item.dropFirst(6)).removingPercentEncoding
            }
        }
        return (name, token)
    }

    /// Percent-encodes like JavaScript's `encodeURIComponent`, as the Firebase SDKs do.
    static func encodeComponent(_ s: String) -> String {
        var out = ""
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "!"), UInt8(ascii: "~"),
                UInt8(ascii: "*"), UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"):
                out.unicodeScalars.append(Unicode.Scalar(b))
            default:
                out += "%" + String(b >> 4, radix: 16, uppercase: true) + String(b & 0xF, radix: 16, uppercase: true)
            }
        }
        return out
    }
}

extension BlobReference {
    /// What a `CandidateReader` should pick out to find references of `style`: flat objects with
    /// the style's keys, or strings that could be an object name or a download URL.
    public static func candidates(style: BlobReferenceStyle) -> CandidateReader.Selection {
        switch style {
        case .object, .salada:
            return .flatObjects { BlobReference(.object($0), style: style) != nil }
        case .path:
            return .strings { s in
                s.count > 0 && s.count <= BlobObjectName.maximumLength && s[0] != UInt8(ascii: "/") && !s.contains(0x0A)
                    && !s.contains(0x0D)
            }
        case .url:
            let prefix = Array(urlPrefix.utf8)
            return .strings { s in s.count > prefix.count && s.starts(with: prefix) }
        }
    }
}
