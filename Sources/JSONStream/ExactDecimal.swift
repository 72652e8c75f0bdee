/// A number as an exact decimal: sign, digits and a power-of-ten exponent, for comparisons,
/// equality, `multipleOf` and unit conversions that must not round through `Double`.
///
/// The value is `±digits × 10^exponent` with no leading or trailing zero digits, so every
/// mathematical value has one representation: `1.0`, `1`, `10e-1` and `0.1e1` are all equal.
public struct ExactDecimal: Hashable, Sendable {
    /// Whether the value is below zero (never set for zero).
    public private(set) var negative: Bool
    /// Decimal digit values 0...9 without leading or trailing zeros; empty for zero.
    public private(set) var digits: [UInt8]
    /// The value is `digits × 10^exponent`.
    public private(set) var exponent: Int

    /// Exponents are saturated here: beyond it a value is already zero or past any limit.
    private static let exponentBound = 1 << 40
    /// The largest exponent `text` writes out in plain digits (a million zeros); beyond it `text`
    /// uses exponent notation.
    private static let plainExponentLimit = 999_999

    /// Reads JSON number text (`-?int(.frac)?([eE][+-]?exp)?`), or with `lenient` also a leading
    /// `+`, leading zeros and surrounding spaces (`" 007 "`); `nil` when the text is not a number.
    public init?(_ text: String, lenient: Bool = false) {
        // Read as UTF-8 bytes: every accepted text is ASCII, and any other character fails the
        // grammar just as it would read character by character.
        var text = text
        guard let (negative, digits, exponent) = text.withUTF8({ Self.parse($0, lenient: lenient) }) else { return nil }
        self.negative = negative
        self.digits = digits
        self.exponent = exponent
    }

    /// Builds a normalised number (no leading or trailing zero digits).
    public init(negative: Bool, digits: [UInt8], exponent: Int) {
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

    public init(_ value: Int64) { self.init(String(value))! }

    /// Sign, normalised digits and exponent of number text.
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
            while i < n && isDigit(b[i]) {
                exp = min(exp * 10 + Int(b[i] - 0x30), exponentBound)
                i += 1
            }
            guard i > expStart else { return nil }
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

    public var isZero: Bool { digits.isEmpty }

    /// Whether the value has no fractional part (`1.0` and `1e2` have none).
    public var isInteger: Bool { exponent >= 0 }

    /// -1, 0 or 1 as `self` is below, equal to or above `other`.
    public func compare(_ other: ExactDecimal) -> Int {
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
    public func isMultiple(of divisor: ExactDecimal) -> Bool {
        if isZero { return true }
        // self = A·10^a, divisor = B·10^b. Neither A nor B ends in 0, so for a < b, B·10^(b-a) can
        // only divide A if A ended in zeros: impossible. Otherwise test A·10^(a-b) mod B == 0.
        guard exponent >= divisor.exponent else { return false }
        guard let b = divisor.mantissa else {
            let q = doubleValue / divisor.doubleValue
            return q.isFinite && q == q.rounded(.towardZero)
        }
        var remainder: UInt64 = 0
        for d in digits { remainder = Self.mulAddMod(remainder, 10, UInt64(d), b) }
        let scale = Self.powMod(10, exponent - divisor.exponent, b)
        return Self.mulAddMod(remainder, scale, 0, b) == 0
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
            if e & 1 == 1 { result = mulAddMod(result, b, 0, m) }
            b = mulAddMod(b, b, 0, m)
            e >>= 1
        }
        return result
    }

    /// The nearest `Double` (may be infinite or zero for extreme exponents).
    public var doubleValue: Double {
        var text = negative ? "-" : ""
        text += digits.isEmpty ? "0" : String(decoding: digits.map { $0 + 0x30 }, as: UTF8.self)
        text += "e\(exponent)"
        return Double(text) ?? .nan
    }

    /// The value times `10^power`.
    public func shifted(by power: Int) -> ExactDecimal {
        ExactDecimal(negative: negative, digits: digits, exponent: exponent + power)
    }

    /// The nearest integer, halves rounded away from zero.
    public func rounded() -> ExactDecimal {
        guard exponent < 0 else { return self }
        let keep = digits.count + exponent
        guard keep >= 0 else { return ExactDecimal(negative: negative, digits: [], exponent: 0) }
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
        return ExactDecimal(negative: negative, digits: kept, exponent: 0)
    }

    /// The value as an `Int64` when it is an integer that fits.
    public var int64Value: Int64? {
        guard isInteger, exponent <= 19 else { return nil }
        return Int64(text)
    }

    /// Decimal text: plain digits (`1482814956.123`, `-0.5`, `0`, `100`), or exponent notation
    /// (`1e2000000`) when plain digits would need over a million zeros.
    public var text: String {
        if digits.isEmpty { return "0" }
        if exponent > Self.plainExponentLimit || -exponent - digits.count > Self.plainExponentLimit {
            return (negative ? "-" : "") + String(decoding: digits.map { $0 + 0x30 }, as: UTF8.self) + "e\(exponent)"
        }
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
    public var jsonNumber: JSONNumber { JSONNumber(text: text) }
}
