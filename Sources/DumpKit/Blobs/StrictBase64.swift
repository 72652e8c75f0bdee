import CPlatform

/// Strict, canonical base64 (RFC 4648 standard alphabet, with padding): the only form whose
/// re-encoding gives back the original text exactly.
///
/// Rejected: characters outside the alphabet (also line breaks and the URL-safe `-` `_`), a length
/// that is not a multiple of 4, padding anywhere but the last one or two characters, and non-zero
/// bits in the last character before the padding.
public enum StrictBase64 {
    /// The decoded size of `count` characters of canonical base64 whose text ends as `text` does
    /// (the padding is read from the last two characters), or `nil` for an impossible length.
    public static func decodedCount(_ text: UnsafeRawBufferPointer) -> Int? {
        let n = text.count
        guard n % 4 == 0 else { return nil }
        if n == 0 { return 0 }
        var pad = 0
        if text[n - 1] == UInt8(ascii: "=") { pad += 1 }
        if text[n - 2] == UInt8(ascii: "=") { pad += 1 }
        return n / 4 * 3 - pad
    }

    /// Decodes `text` into a new array, or returns `nil` if it is not canonical base64.
    public static func decode(_ text: UnsafeRawBufferPointer) -> [UInt8]? {
        guard let count = decodedCount(text) else { return nil }
        var ok = true
        let bytes = [UInt8](unsafeUninitializedCapacity: count + 3) { out, initialized in
            ok = decode(text, into: out.baseAddress!)
            initialized = ok ? count : 0
        }
        return ok ? bytes : nil
    }

    /// Whether `text` is canonical base64, without keeping the bytes.
    public static func isValid(_ text: UnsafeRawBufferPointer) -> Bool {
        guard let count = decodedCount(text) else { return false }
        if count == 0 { return true }
        // Check in slices through a small scratch buffer.
        let slice = 3 << 12
        let out = UnsafeMutablePointer<UInt8>.allocate(capacity: slice / 4 * 3 + 3)
        defer { out.deallocate() }
        var start = 0
        while start < text.count {
            let end = min(text.count, start + slice)
            let part = UnsafeRawBufferPointer(rebasing: text[start..<end])
            // Padding only in the last quad of the whole text, not of each slice.
            if !(end == text.count ? decode(part, into: out) : decodeQuads(part, into: out)) { return false }
            start = end
        }
        return true
    }

    /// Decodes canonical base64 (`text.count` a multiple of 4) into `out`, which must have room for
    /// the decoded size plus 3 bytes of slack. Returns false if `text` is not canonical.
    static func decode(_ text: UnsafeRawBufferPointer, into out: UnsafeMutablePointer<UInt8>) -> Bool {
        let n = text.count
        guard n > 0 else { return true }
        guard n % 4 == 0, let src = text.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return false }
        // All quads but the last: no padding allowed.
        guard decodeQuads(UnsafeRawBufferPointer(start: src, count: n - 4), into: out) else { return false }
        let i = n - 4
        let o = out + i / 4 * 3
        return table.withUnsafeBufferPointer { t in
            let d0 = t.baseAddress!, d1 = d0 + 256, d2 = d0 + 512, d3 = d0 + 768
            // The last quad: `xxxx`, `xxx=` or `xx==`, with the unused bits zero.
            let c2 = src[i + 2], c3 = src[i + 3]
            let pad = UInt8(ascii: "=")
            if c3 != pad {
                let a = d0[Int(src[i])] | d1[Int(src[i + 1])] | d2[Int(c2)] | d3[Int(c3)]
                guard a & 0x8000_0000 == 0 else { return false }
                o[0] = UInt8(truncatingIfNeeded: a >> 16)
                o[1] = UInt8(truncatingIfNeeded: a >> 8)
                o[2] = UInt8(truncatingIfNeeded: a)
            } else if c2 != pad {
                let a = d0[Int(src[i])] | d1[Int(src[i + 1])] | d2[Int(c2)]
                guard a & 0x8000_0000 == 0, a & 0xFF == 0 else { return false }
                o[0] = UInt8(truncatingIfNeeded: a >> 16)
                o[1] = UInt8(truncatingIfNeeded: a >> 8)
            } else {
                let a = d0[Int(src[i])] | d1[Int(src[i + 1])]
                guard a & 0x8000_0000 == 0, a & 0xFFFF == 0 else { return false }
                o[0] = UInt8(truncatingIfNeeded: a >> 16)
            }
            return true
        }
    }

    /// Decodes whole quads of base64 without padding (`text.count` a multiple of 4: a part of a
    /// text before its last quad) into `out`, which must have room for 3 bytes per quad plus 1.
    /// Returns false on a character outside the alphabet (also `=`).
    static func decodeQuads(_ text: UnsafeRawBufferPointer, into out: UnsafeMutablePointer<UInt8>) -> Bool {
        let n = text.count
        guard n > 0 else { return true }
        guard n % 4 == 0, let src = text.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return false }
        // Blocks of 64 characters with vector instructions where the CPU has them, up to the first
        // bad character; the rest (and any bad character) through the tables.
        let fast = dk_base64_decode_blocks(src, n, out)
        return table.withUnsafeBufferPointer { t in
            let d0 = t.baseAddress!, d1 = d0 + 256, d2 = d0 + 512, d3 = d0 + 768
            // Invalid characters set bit 31.
            var bad: UInt32 = 0
            var i = fast
            var o = out + fast / 4 * 3
            while i + 8 <= n {
                let a = d0[Int(src[i])] | d1[Int(src[i + 1])] | d2[Int(src[i + 2])] | d3[Int(src[i + 3])]
                let b = d0[Int(src[i + 4])] | d1[Int(src[i + 5])] | d2[Int(src[i + 6])] | d3[Int(src[i + 7])]
                bad |= a | b
                // Three bytes each, big-endian; the fourth byte written is overwritten next.
                UnsafeMutableRawPointer(o).storeBytes(of: (a << 8).bigEndian, as: UInt32.self)
                UnsafeMutableRawPointer(o + 3).storeBytes(of: (b << 8).bigEndian, as: UInt32.self)
                o += 6
                i += 8
            }
            while i < n {
                let a = d0[Int(src[i])] | d1[Int(src[i + 1])] | d2[Int(src[i + 2])] | d3[Int(src[i + 3])]
                bad |= a
                UnsafeMutableRawPointer(o).storeBytes(of: (a << 8).bigEndian, as: UInt32.self)
                o += 3
                i += 4
            }
            return bad & 0x8000_0000 == 0
        }
    }

    /// Four lookup tables, one per position in a quad, holding each character's bits already
    /// shifted into place; characters outside the alphabet map to bit 31.
    private static let table: [UInt32] = {
        var t = [UInt32](repeating: 0x8000_0000, count: 4 * 256)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        for (v, c) in alphabet.enumerated() {
            let v = UInt32(v)
            t[Int(c)] = v << 18
            t[256 + Int(c)] = v << 12
            t[512 + Int(c)] = v << 6
            t[768 + Int(c)] = v
        }
        return t
    }()
}
