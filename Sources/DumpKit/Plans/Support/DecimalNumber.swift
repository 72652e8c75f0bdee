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
        var s = Substring(text)
        if lenient { s = s.drop(while: { $0 == " " }) }
        if lenient { while s.last == " " { s = s.dropLast() } }
        var negative = false
        if s.first == "-" {
            negative = true
            s = s.dropFirst()
        } else if lenient, s.first == "+" {
            s = s.dropFirst()
        }
        let intPart = s.prefix(while: \.isASCIIDigit)
        guard !intPart.isEmpty else { return nil }
        if !lenient, intPart.count > 1, intPart.first == "0" { return nil }
        s = s.dropFirst(intPart.count)
        var fraction = Substring("")
        if s.first == "." {
            fraction = s.dropFirst().prefix(while: \.isASCIIDigit)
            guard !fraction.isEmpty else { return nil }
            s = s.dropFirst(1 + fraction.count)
        }
        var exp = 0
        if s.first == "e" || s.first == "E" {
            s = s.dropFirst()
            var expNegative = false
            if s.first == "-" || s.first == "+" {
                expNegative = s.first == "-"
                s = s.dropFirst()
            }
            let expDigits = s.prefix(while: \.isASCIIDigit)
            guard !expDigits.isEmpty, expDigits.count < 7, let e = Int(expDigits) else { return nil }
            exp = expNegative ? -e : e
            s = s.dropFirst(expDigits.count)
        }
        guard s.isEmpty else { return nil }
        let all = (intPart + fraction).utf8.map { $0 - 0x30 }
        self.init(negative: negative, digits: all, exponent: exp - fraction.count)
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
        var body = String(decoding: digits.map { $0 + 0x30 }, as: UTF8.self)
        if exponent >= 0 {
            body += String(repeating: "0", count: exponent)
        } else {
            let fractionDigits = -exponent
            if body.count <= fractionDigits {
                body = "0." + String(repeating: "0", count: fractionDigits - body.count) + body
            } else {
                body.insert(".", at: body.index(body.endIndex, offsetBy: -fractionDigits))
            }
        }
        return negative ? "-" + body : body
    }

    /// The value as a JSON number.
    var jsonNumber: JSONNumber { JSONNumber(text: text) }
}

extension Character {
    /// Whether this is one of the ASCII digits 0-9.
    var isASCIIDigit: Bool { asciiValue.map { $0 >= 0x30 && $0 <= 0x39 } ?? false }
}
