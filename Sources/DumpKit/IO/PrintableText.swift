extension String {
    /// The string with its control characters (C0, DEL, C1) written as `\u001B`, for text meant for a
    /// terminal or a CI log, where a key holding them could move the cursor or recolour the output.
    public var escapingControlCharacters: String {
        guard unicodeScalars.contains(where: Self.isControl) else { return self }
        var r = ""
        for c in unicodeScalars {
            if Self.isControl(c) {
                let hex = String(c.value, radix: 16, uppercase: true)
                r += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            } else {
                r.unicodeScalars.append(c)
            }
        }
        return r
    }

    private static func isControl(_ c: Unicode.Scalar) -> Bool { c.value < 0x20 || (c.value >= 0x7F && c.value < 0xA0) }
}
