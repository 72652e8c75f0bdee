/// A file type recognised from its first bytes (magic numbers).
public struct MediaType: Hashable, Sendable {
    public let mimeType: String
    public let fileExtension: String

    public static let jpeg = MediaType(mimeType: "image/jpeg", fileExtension: "jpg")
    public static let png = MediaType(mimeType: "image/png", fileExtension: "png")
    public static let gif = MediaType(mimeType: "image/gif", fileExtension: "gif")
    public static let webp = MediaType(mimeType: "image/webp", fileExtension: "webp")
    public static let heic = MediaType(mimeType: "image/heic", fileExtension: "heic")
    public static let avif = MediaType(mimeType: "image/avif", fileExtension: "avif")
    public static let pdf = MediaType(mimeType: "application/pdf", fileExtension: "pdf")
    public static let mp4 = MediaType(mimeType: "video/mp4", fileExtension: "mp4")

    /// Bytes needed to recognise every known type.
    public static let sniffLength = 16

    /// The type whose magic number starts `bytes`, if any.
    public static func detect(_ bytes: some Collection<UInt8>) -> MediaType? {
        let b = Array(bytes.prefix(sniffLength))
        func has(_ magic: [UInt8], at offset: Int = 0) -> Bool {
            b.count >= offset + magic.count && Array(b[offset..<(offset + magic.count)]) == magic
        }
        if has([0xFF, 0xD8, 0xFF]) { return .jpeg }
        if has([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if has(Array("GIF87a".utf8)) || has(Array("GIF89a".utf8)) { return .gif }
        if has(Array("RIFF".utf8)) && has(Array("WEBP".utf8), at: 8) { return .webp }
        if has(Array("%PDF-".utf8)) { return .pdf }
        if has(Array("ftyp".utf8), at: 4) {
            let brand = b.count >= 12 ? String(decoding: b[8..<12], as: UTF8.self) : ""
            switch brand {
            case "heic", "heix", "hevc", "hevx", "heim", "heis", "mif1", "msf1": return .heic
            case "avif", "avis": return .avif
            default: return .mp4
            }
        }
        return nil
    }
}
