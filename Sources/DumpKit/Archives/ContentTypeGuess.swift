/// The content type of an object that has no stored metadata: from its first bytes, else its name.
enum ContentTypeGuess {
    /// Types by lowercase file extension, for content that magic bytes do not identify.
    private static let byExtension: [String: String] = [
        "json": "application/json", "ndjson": "application/x-ndjson", "txt": "text/plain", "csv": "text/csv",
        "html": "text/html", "htm": "text/html", "css": "text/css", "js": "text/javascript", "xml": "application/xml",
        "svg": "image/svg+xml", "md": "text/markdown", "yaml": "application/yaml", "yml": "application/yaml",
        "jpg": "image/jpeg", "jpeg": "image/jpeg", "png": "image/png", "gif": "image/gif", "webp": "image/webp",
        "heic": "image/heic", "avif": "image/avif", "pdf": "application/pdf", "mp4": "video/mp4", "mov": "video/quicktime",
        "mp3": "audio/mpeg", "m4a": "audio/mp4", "wav": "audio/wav", "zip": "application/zip", "gz": "application/gzip",
        "zst": "application/zstd", "xz": "application/x-xz", "bz2": "application/x-bzip2", "tar": "application/x-tar",
    ]

    /// The length of the longest type `contentType(name:head:)` returns.
    static let longestType =
        ([MediaType.jpeg, .png, .gif, .webp, .heic, .avif, .pdf, .mp4].map(\.mimeType)
        + byExtension.values + ["application/octet-stream"]).map(\.utf8.count).max()!

    /// The type of an object named `name` whose content starts with `head`; `application/octet-stream`
    /// when neither says.
    static func contentType(name: String, head: [UInt8]) -> String {
        if let media = MediaType.detect(head) { return media.mimeType }
        let fileName = name.split(separator: "/").last ?? ""
        if let dot = fileName.lastIndex(of: "."), let type = byExtension[fileName[fileName.index(after: dot)...].lowercased()] {
            return type
        }
        return "application/octet-stream"
    }
}
