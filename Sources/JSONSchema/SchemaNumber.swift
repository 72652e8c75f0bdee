import JSONStream

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
