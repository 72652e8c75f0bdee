/// A file embedded in a JSON string (a base64 data URI or bare base64), decoded, with its type and
/// what is needed to write the string back exactly.
public struct EmbeddedFile: Hashable, Sendable {
    /// How the file was written in the string.
    public enum Form: Hashable, Sendable {
        /// `data:<type>[;params];base64,<payload>`; `header` is everything before the payload.
        case dataURI(header: String)
        /// Base64 alone, without a header.
        case bare
    }

    /// Why a string that looked like an embedded file was left alone.
    public enum Skip: String, Hashable, Sendable, CaseIterable {
        /// Not canonical base64 (bad characters, truncated, missing padding, line breaks).
        case invalidBase64
        /// Valid base64 whose bytes are no known file type (and, for a data URI, declared as one
        /// whose bytes could have been recognised).
        case unknownType
    }

    /// What looking at one string found.
    public enum Scan: Sendable {
        /// Not an embedded file: too short, or ordinary text.
        case none
        /// It looked like one but is left exactly as it was.
        case skipped(Skip)
        /// A file to extract.
        case file(EmbeddedFile)
    }

    public var bytes: [UInt8]
    /// The type the bytes show (or, for a data URI whose bytes are no known type, the declared one).
    public var contentType: String
    public var fileExtension: String
    public var form: Form
    /// The type a data URI declared when its bytes are of another known type (the bytes win).
    public var mismatchedDeclaredType: String?
    /// The length of the string that held the file (its UTF-8 bytes).
    public var encodedBytes: Int

    /// Looks at one string's UTF-8 and decodes it if it embeds a file of at least `minimumBytes`.
    ///
    /// Data URIs may declare any type: the bytes decide when they are a known type, otherwise the
    /// declared type is kept, except that bytes that are not what a recognisable declared type
    /// (JPEG, PNG, PDF...) would look like are skipped as `unknownType`. Bare base64 is taken only
    /// when its bytes are a known type, and not at all with `dataURIsOnly`.
    public static func scan(_ s: UnsafeRawBufferPointer, minimumBytes: Int, dataURIsOnly: Bool = false) -> Scan {
        guard s.count >= minimumEncodedLength(minimumBytes) else { return .none }
        if s.count >= 5, s[0] == UInt8(ascii: "d"), s[1] == UInt8(ascii: "a"), s[2] == UInt8(ascii: "t"),
            s[3] == UInt8(ascii: "a"), s[4] == UInt8(ascii: ":")
        {
            guard let headerLength = Base64Sniffer.dataURIHeaderLength(s) else { return .none }
            let header = String(decoding: UnsafeRawBufferPointer(rebasing: s[0..<headerLength]), as: UTF8.self)
            let payload = UnsafeRawBufferPointer(rebasing: s[headerLength...])
            guard let bytes = StrictBase64.decode(payload) else { return .skipped(.invalidBase64) }
            return classify(bytes, header: header, minimumBytes: minimumBytes, encodedBytes: s.count)
        }
        guard !dataURIsOnly, let prefix = Base64Sniffer.decodePrefix(s) else { return .none }
        guard MediaType.detect(prefix) != nil else {
            // Valid base64 of a size worth extracting, but of no known type: worth counting.
            guard let n = StrictBase64.decodedCount(s), n >= minimumBytes, StrictBase64.isValid(s) else { return .none }
            return .skipped(.unknownType)
        }
        guard let bytes = StrictBase64.decode(s) else { return .skipped(.invalidBase64) }
        return classify(bytes, header: nil, minimumBytes: minimumBytes, encodedBytes: s.count)
    }

    /// What the decoded `bytes` of a string of `encodedBytes` are: a data URI's with its `header`
    /// (`data:...;base64,`), or bare base64's (`nil`).
    static func classify(_ bytes: [UInt8], header: String?, minimumBytes: Int, encodedBytes: Int) -> Scan {
        guard bytes.count >= minimumBytes else { return .none }
        let detected = MediaType.detect(bytes)
        guard let header else {
            guard let detected else { return .skipped(.unknownType) }
            return .file(
                EmbeddedFile(
                    bytes: bytes, contentType: detected.mimeType, fileExtension: detected.fileExtension,
                    form: .bare, mismatchedDeclaredType: nil, encodedBytes: encodedBytes))
        }
        let declared = declaredType(header)
        if let detected {
            let mismatch = declared.isEmpty || sameType(declared, detected.mimeType) ? nil : declared
            return .file(
                EmbeddedFile(
                    bytes: bytes, contentType: detected.mimeType, fileExtension: detected.fileExtension,
                    form: .dataURI(header: header), mismatchedDeclaredType: mismatch, encodedBytes: encodedBytes))
        }
        if declared.isEmpty || isRecognisable(declared) { return .skipped(.unknownType) }
        return .file(
            EmbeddedFile(
                bytes: bytes, contentType: declared, fileExtension: fileExtension(forType: declared),
                form: .dataURI(header: header), mismatchedDeclaredType: nil, encodedBytes: encodedBytes))
    }

    /// The string the file was read from (canonical base64 re-encodes to the same text).
    public var text: String {
        switch form {
        case .dataURI(let header): return bytes.withUnsafeBytes { Base64.encode($0, after: header) }
        case .bare: return bytes.withUnsafeBytes { Base64.encode($0, after: "") }
        }
    }

    /// The shortest base64 text that decodes to `bytes` bytes.
    public static func minimumEncodedLength(_ bytes: Int) -> Int { (max(0, bytes) + 2) / 3 * 4 }

    /// The type a data URI header declares (`image/png` in `data:image/png;base64,`), lower-cased.
    static func declaredType(_ header: String) -> String {
        let body = header.utf8.dropFirst(5)
        let end = body.firstIndex { $0 == UInt8(ascii: ";") || $0 == UInt8(ascii: ",") } ?? body.endIndex
        return String(decoding: body[..<end], as: UTF8.self).lowercased()
    }

    /// Whether two lower-cased mime types name the same kind of file (`image/jpg` is `image/jpeg`).
    static func sameType(_ declared: String, _ detected: String) -> Bool {
        canonicalType(declared) == detected
    }

    private static func canonicalType(_ t: String) -> String {
        switch t {
        case "image/jpg", "image/pjpeg": return MediaType.jpeg.mimeType
        case "image/heif", "image/heic-sequence", "image/heif-sequence": return MediaType.heic.mimeType
        case "image/avif-sequence": return MediaType.avif.mimeType
        case "application/x-pdf": return MediaType.pdf.mimeType
        case "application/mp4", "audio/mp4", "video/quicktime": return MediaType.mp4.mimeType
        default: return t
        }
    }

    /// Whether `MediaType.detect` would recognise a file of this declared type.
    private static func isRecognisable(_ t: String) -> Bool {
        let c = canonicalType(t)
        return [MediaType.jpeg, .png, .gif, .webp, .heic, .avif, .pdf, .mp4].contains { $0.mimeType == c }
    }

    /// A file extension for a declared type that magic bytes do not identify.
    static func fileExtension(forType t: String) -> String {
        switch t {
        case "image/svg+xml": return "svg"
        case "image/bmp", "image/x-ms-bmp": return "bmp"
        case "image/tiff": return "tiff"
        case "image/x-icon", "image/vnd.microsoft.icon": return "ico"
        case "text/plain": return "txt"
        case "text/html": return "html"
        case "text/csv": return "csv"
        case "application/json": return "json"
        case "application/zip": return "zip"
        case "audio/mpeg": return "mp3"
        case "audio/wav", "audio/x-wav": return "wav"
        case "audio/ogg": return "ogg"
        case "video/webm": return "webm"
        default: return "bin"
        }
    }
}
