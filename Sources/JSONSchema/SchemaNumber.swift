import JSONStream

/// A JSON number as an exact decimal, for comparisons, `multipleOf` and equality that do not round.
///
/// The value is `±digits × 10^exponent` with no leading or trailing zero digits, so every
/// mathematical value has one representation: `1.0`, `1`, `10e-1` and `0.1e1` are all equal.
struct ExactDecimal: Hashable, Sendable {
    /// Whether the value is below zero (never set for zero).
    var negative: Bool
    /// Decimal digit values 0...9; empty for zero.
    var digits: [UInt8]
    var exponent: Int

    /// Parses JSON number text (`-?int(.frac)?([eE][+-]?exp)?`); `nil` for anything else.
    init?(_ text: String) {
        var utf8 = text.utf8[...]
        var negative = false
        if utf8.first == UInt8(ascii: "-") {
            negative = true
            utf8 = utf8.dropFirst()
        }
        var digits: [UInt8] = []
        var exponent = 0
        var sawDigit = false
        var inFraction = false
        while let c = utf8.first {
            if c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") {
                sawDigit = true
                if !(digits.isEmpty && c == UInt8(ascii: "0")) { digits.append(c - UInt8(ascii: "0")) }
                if inFraction { exponent -= 1 }
            } else if c == UInt8(ascii: ".") && !inFraction {
                inFraction = true
            } else {
                break
            }
            utf8 = utf8.dropFirst()
        }
        guard sawDigit else { return nil }
        if let e = utf8.first, e == UInt8(ascii: "e") || e == UInt8(ascii: "E") {
            utf8 = utf8.dropFirst()
            var expNegative = false
            if utf8.first == UInt8(ascii: "-") || utf8.first == UInt8(ascii: "+") {
                expNegative = utf8.first == UInt8(ascii: "-")
                utf8 = utf8.dropFirst()
            }
            guard !utf8.isEmpty else { return nil }
            var e = 0
            for c in utf8 {
                guard c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") else { return nil }
                // Saturate: exponents this large already make the value 0 or "beyond any limit".
                e = min(e * 10 + Int(c - UInt8(ascii: "0")), 1 << 40)
            }
            exponent += expNegative ? -e : e
            utf8 = utf8[utf8.endIndex...]
        }
        guard utf8.isEmpty else { return nil }
        while let last = digits.last, last == 0 {
            digits.removeLast()
            exponent += 1
        }
        if digits.isEmpty {
            negative = false
            exponent = 0
        }
        self.negative = negative
        self.digits = digits
        self.exponent = exponent
    }

    var isZero: Bool { digits.isEmpty }

    /// Whether the value is a whole number (`1.0` and `1e2` are).
    var isInteger: Bool { exponent >= 0 }

    /// -1, 0 or 1 as `self` is below, equal to or above `other`.
    func compare(_ other: ExactDecimal) -> Int {
        if negative != other.negative { return negative ? -1 : 1 }
        if isZero || other.isZero {
            if isZero && other.isZero { return 0 }
            return isZero ? (other.negative ? 1 : -1) : (negative ? -1 : 1)
        }
        let magnitude = compareMagnitude(other)
        return negative ? -magnitude : magnitude
    }

    private func compareMagnitude(_ other: ExactDecimal) -> Int {
        let scale = digits.count + exponent, otherScale = other.digits.count + other.exponent
        if scale != otherScale { return scale < otherScale ? -1 : 1 }
        for (a, b) in zip(digits, other.digits) where a != b { return a < b ? -1 : 1 }
        if digits.count == other.digits.count { return 0 }
        return digits.count < other.digits.count ? -1 : 1
    }

    /// Whether `self` is an integer multiple of `divisor` (which must be above zero), exactly.
    func isMultiple(of divisor: ExactDecimal) -> Bool {
        if isZero { return true }
        // self = A·10^a, divisor = B·10^b. Neither A nor B ends in 0, so for a < b, B·10^(b-a) can
        // only divide A if A ended in zeros: impossible. Otherwise test A·10^(a-b) mod B == 0.
        guard exponent >= divisor.exponent else { return false }
        guard let b = divisor.mantissa else {
            return ExactDecimal.isWhole(doubleValue / divisor.doubleValue)
        }
        var remainder: UInt64 = 0
        for d in digits { remainder = ExactDecimal.mulAddMod(remainder, 10, UInt64(d), b) }
        let scale = ExactDecimal.powMod(10, exponent - divisor.exponent, b)
        return ExactDecimal.mulMod(remainder, scale, b) == 0
    }

    /// The digits as one integer when they fit in 19 decimal digits.
    private var mantissa: UInt64? {
        guard digits.count <= 19 else { return nil }
        var m: UInt64 = 0
        for d in digits {
            let (times10, o1) = m.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times10.addingReportingOverflow(UInt64(d))
            if o1 || o2 { return nil }
            m = sum
        }
        return m
    }

    /// The nearest `Double` (may be infinite or zero for extreme exponents).
    var doubleValue: Double {
        var text = negative ? "-" : ""
        text += digits.isEmpty ? "0" : String(decoding: digits.map { $0 + UInt8(ascii: "0") }, as: UTF8.self)
        text += "e\(exponent)"
        return Double(text) ?? .nan
    }

    private static func isWhole(_ q: Double) -> Bool { q.isFinite && q == q.rounded(.towardZero) }

    private static func mulMod(_ a: UInt64, _ b: UInt64, _ m: UInt64) -> UInt64 { mulAddMod(a, b, 0, m) }

    /// `(a·b + c) mod m` without overflow.
    private static func mulAddMod(_ a: UInt64, _ b: UInt64, _ c: UInt64, _ m: UInt64) -> UInt64 {
        var (high, low) = a.multipliedFullWidth(by: b)
        let (sum, carry) = low.addingReportingOverflow(c)
        if carry { high += 1 }
        low = sum
        return m.dividingFullWidth((high % m, low)).remainder
    }

    private static func powMod(_ base: UInt64, _ exponent: Int, _ m: UInt64) -> UInt64 {
        var result: UInt64 = 1 % m, b = base % m, e = exponent
        while e > 0 {
            if e & 1 == 1 { result = mulMod(result, b, m) }
            b = mulMod(b, b, m)
            e >>= 1
        }
        return result
    }
}

/// A numeric limit from a schema (`minimum`, `multipleOf`, ...), kept both as `Double` and exactly.
struct SchemaLimit: Sendable {
    let double: Double
    let exact: ExactDecimal
    /// The schema's own text, for messages.
    let text: String

    init?(_ number: JSONNumber) {
        guard let exact = ExactDecimal(number.text) else { return nil }
        self.exact = exact
        self.double = number.doubleValue
        self.text = number.text
    }
}

/// Number tests the evaluator runs on instance numbers.
extension JSONNumber {
    /// Compares with a schema limit, given this number's `Double` value: the doubles decide unless
    /// they tie, then the exact decimals do (rounding to `Double` is monotonic, so unequal doubles
    /// already order the exact values).
    func compare(_ double: Double, to limit: SchemaLimit) -> Int {
        if double < limit.double { return -1 }
        if double > limit.double { return 1 }
        guard let exact = ExactDecimal(text) else { return 0 }
        return exact.compare(limit.exact)
    }

    /// Whether the value is mathematically an integer (`1.0` and `1e2` are).
    var isMathematicalInteger: Bool {
        var text = text
        let literal = text.withUTF8 { bytes in
            !bytes.contains { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }
        }
        return literal || (ExactDecimal(text)?.isInteger ?? false)
    }

    /// The value as a `Double`, converting plain integers of up to 18 characters without `strtod`.
    var fastDoubleValue: Double {
        var text = text
        let integer: Int64? = text.withUTF8 { bytes in
            guard !bytes.isEmpty, bytes.count <= 18 else { return nil }
            let negative = bytes[0] == UInt8(ascii: "-")
            var value: Int64 = 0
            for c in bytes[(negative ? 1 : 0)...] {
                guard c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int64(c - UInt8(ascii: "0"))
            }
            return negative ? -value : value
        }
        return integer.map(Double.init) ?? doubleValue
    }
}
