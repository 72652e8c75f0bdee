/// Recognises strings that embed a file: `data:<mime>;base64,...` URIs, and bare base64 whose
/// decoded first bytes are a known file type.
public enum Base64Sniffer {
    /// Bare base64 shorter than this many characters is never taken for a file (ids, tokens).
    public static let minimumBareLength = 128

    /// Whether `s` (UTF-8) looks like an embedded file, judged from its first characters only.
    public static func looksLikeEmbeddedFile(_ s: UnsafeRawBufferPointer) -> Bool {
        if s.count >= 5, s[0] == UInt8(ascii: "d"), s[1] == UInt8(ascii: "a"), s[2] == UInt8(ascii: "t"),
            s[3] == UInt8(ascii: "a"), s[4] == UInt8(ascii: ":")
        {
            return dataURIHeaderLength(s) != nil
        }
        guard s.count >= minimumBareLength else { return false }
        return decodePrefix(s).flatMap { MediaType.detect($0) } != nil
    }

    /// The length of `data:<mime>[;params];base64,` at the start of `s`, if it is such a URI.
    public static func dataURIHeaderLength(_ s: UnsafeRawBufferPointer) -> Int? {
        let limit = min(s.count, 256)
        var i = 5
        while i < limit, s[i] != UInt8(ascii: ",") { i += 1 }
        guard i < limit else { return nil }
        let marker = Array(";base64".utf8)
        guard i >= 5 + marker.count, Array(s[(i - marker.count)..<i]) == marker else { return nil }
        return i + 1
    }

    /// Decodes the first 24 base64 characters (18 bytes) of `s`, or `nil` if they are not base64.
    static func decodePrefix(_ s: UnsafeRawBufferPointer) -> [UInt8]? {
        guard s.count >= 24 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(18)
        var acc: UInt32 = 0
        for i in 0..<24 {
            guard let v = value(of: s[i]) else { return nil }
            acc = acc << 6 | UInt32(v)
            if i % 4 == 3 {
                out.append(UInt8(acc >> 16 & 0xFF))
                out.append(UInt8(acc >> 8 & 0xFF))
                out.append(UInt8(acc & 0xFF))
                acc = 0
            }
        }
        return out
    }

    @inline(__always)
    static func value(of c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return c - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return c - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"), UInt8(ascii: "-"): return 62
        case UInt8(ascii: "/"), UInt8(ascii: "_"): return 63
        default: return nil
        }
    }
}
