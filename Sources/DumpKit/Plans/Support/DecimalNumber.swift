import JSONStream

/// An exact decimal number read from number text: sign, digits and a power-of-ten exponent.
///
/// Used for conversions that must not round through `Double`: seconds <-> milliseconds shift the
/// exponent, and number comparisons are by exact value (`1.50` equals `1.5`).
struct DecimalNumber: Hashable {
    /// Whether the value is below zero (never set for zero).
    private(set) var negative: Bool
    /// Significant digits without leading or trailing zeros (empty for zero).
    private(set) var digits: [UInt8]
    /// The value is `digits * 10^exponent`.
    private(set) var exponent: Int

    /// Reads JSON number text, or with `lenient` also a leading `+`, leading zeros and surrounding
    /// spaces (`" 007 "`); `nil` when the text is not a number.
    init?(_ text: String, lenient: Bool = false) {
        // Read as UTF-8 bytes: every accepted text is ASCII, and any other character fails the
        // grammar below just as it would read character by character.
        var text = text
        guard let (negative, digits, exponent) = text.withUTF8({ Self.parse($0, lenient: lenient) }) else { return nil }
        self.negative = negative
        self.digits = digits
        self.exponent = exponent
    }

    /// Sign, normalised digits (no leading or trailing zeros) and exponent of number text.
    private static func parse(_ b: UnsafeBufferPointer<UInt8>, lenient: Bool) -> (Bool, [UInt8], Int)? {
        @inline(__always) func isDigit(_ c: UInt8) -> Bool { c &- 0x30 < 10 }
        var i = 0
        var n = b.count
        if lenient {
            while i < n && b[i] == 0x20 { i += 1 }
            while n > i && b[n - 1] == 0x20 { n -= 1 }
        }
        var negative = false
        if i < n && b[i] == UInt8(ascii: "-") {
            negative = true
            i += 1
        } else if lenient, i < n, b[i] == UInt8(ascii: "+") {
            i += 1
        }
        let intStart = i
        while i < n && isDigit(b[i]) { i += 1 }
        let intEnd = i
        guard intEnd > intStart else { return nil }
        if !lenient, intEnd - intStart > 1, b[intStart] == UInt8(ascii: "0") { return nil }
        var fracStart = i
        var fracEnd = i
        if i < n && b[i] == UInt8(ascii: ".") {
            i += 1
            fracStart = i
            while i < n && isDigit(b[i]) { i += 1 }
            fracEnd = i
            guard fracEnd > fracStart else { return nil }
        }
        var exp = 0
        if i < n && (b[i] == UInt8(ascii: "e") || b[i] == UInt8(ascii: "E")) {
            i += 1
            var expNegative = false
            if i < n && (b[i] == UInt8(ascii: "-") || b[i] == UInt8(ascii: "+")) {
                expNegative = b[i] == UInt8(ascii: "-")
                i += 1
            }
            let expStart = i
            while i < n && isDigit(b[i]) { i += 1 }
            guard i > expStart, i - expStart < 7 else { return nil }
            for j in expStart..<i { exp = exp * 10 + Int(b[j] - 0x30) }
            if expNegative { exp = -exp }
        }
        guard i == n else { return nil }
        // The digits of the integer and fraction parts, without leading and trailing zeros.
        let fractionCount = fracEnd - fracStart
        let total = (intEnd - intStart) + fractionCount
        @inline(__always) func digit(_ k: Int) -> UInt8 {
            k < intEnd - intStart ? b[intStart + k] - 0x30 : b[fracStart + k - (intEnd - intStart)] - 0x30
        }
        var first = 0
        while first < total && digit(first) == 0 { first += 1 }
        var last = total
        var e = exp - fractionCount
        while last > first && digit(last - 1) == 0 {
            last -= 1
            e += 1
        }
        if first == last { return (false, [], 0) }
        var digits: [UInt8] = []
        digits.reserveCapacity(last - first)
        for k in first..<last { digits.append(digit(k)) }
        return (negative, digits, e)
    }

    /// Builds a normalised number (no leading or trailing zero digits).
    init(negative: Bool, digits: [UInt8], exponent: Int) {
        var d = digits[...]
        while d.first == 0 { d = d.dropFirst() }
        var e = exponent
        while d.last == 0 {
            d = d.dropLast()
            e += 1
        }
        self.digits = Array(d)
        self.negative = negative && !d.isEmpty
        self.exponent = d.isEmpty ? 0 : e
    }

    init(_ value: Int64) { self.init(String(value))! }

    /// Whether the value has no fractional part.
    var isInteger: Bool { exponent >= 0 }

    /// The value times `10^power`.
    func shifted(by power: Int) -> DecimalNumber { DecimalNumber(negative: negative, digits: digits, exponent: exponent + power) }

    /// The nearest integer, halves rounded away from zero.
    func rounded() -> DecimalNumber {
        guard exponent < 0 else { return self }
        let keep = digits.count + exponent
        guard keep >= 0 else { return DecimalNumber(negative: negative, digits: [], exponent: 0) }
        var kept = Array(digits.prefix(keep))
        let roundUp = keep < digits.count && digits[keep] >= 5
        if roundUp {
            var i = kept.count - 1
            while i >= 0 && kept[i] == 9 {
                kept[i] = 0
                i -= 1
            }
            if i >= 0 { kept[i] += 1 } else { kept.insert(1, at: 0) }
        }
        return DecimalNumber(negative: negative, digits: kept, exponent: 0)
    }

    /// The value as an `Int64` when it is an integer that fits.
    var int64Value: Int64? {
        guard isInteger else { return nil }
        return Int64(text)
    }

    /// Plain decimal text without an exponent (`1482814956.123`, `-0.5`, `0`).
    var text: String {
        if digits.isEmpty { return "0" }
        var out: [UInt8] = []
        out.reserveCapacity(digits.count + max(exponent, 0) + max(-exponent - digits.count, 0) + 3)
        if negative { out.append(UInt8(ascii: "-")) }
        if exponent >= 0 {
            for d in digits { out.append(d + 0x30) }
            for _ in 0..<exponent { out.append(UInt8(ascii: "0")) }
        } else {
            let fractionDigits = -exponent
            if digits.count <= fractionDigits {
                out.append(UInt8(ascii: "0"))
                out.append(UInt8(ascii: "."))
                for _ in 0..<(fractionDigits - digits.count) { out.append(UInt8(ascii: "0")) }
                for d in digits { out.append(d + 0x30) }
            } else {
                let point = digits.count - fractionDigits
                for d in digits[..<point] { out.append(d + 0x30) }
                out.append(UInt8(ascii: "."))
                for d in digits[point...] { out.append(d + 0x30) }
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The value as a JSON number.
    var jsonNumber: JSONNumber { JSONNumber(text: text) }
}

extension Character {
    /// Whether this is one of the ASCII digits 0-9.
    var isASCIIDigit: Bool { asciiValue.map { $0 >= 0x30 && $0 <= 0x39 } ?? false }
}
