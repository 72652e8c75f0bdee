/// A character class: ranges and class escapes (`\d`, `\p{L}`, ...), possibly negated.
package struct ScalarSet: Sendable {
    /// One entry of a class: a scalar range or a class escape.
    package enum Item: Sendable {
        case range(UInt32, UInt32)
        case builtin(BuiltinClass, negated: Bool)
    }

    package enum BuiltinClass: Sendable {
        /// `\d`: ASCII digits only.
        case digit
        /// `\w`: ASCII letters, digits and `_`.
        case word
        /// `\s`: ECMA-262 white space and line terminators.
        case space
        case property(UnicodeProperty)

        func contains(_ c: UInt32) -> Bool {
            switch self {
            case .digit: return c >= 0x30 && c <= 0x39
            case .word: return ScalarSet.isWord(c)
            case .space: return ScalarSet.isSpace(c)
            case .property(let p): return p.contains(c)
            }
        }
    }

    package let items: [Item]
    package let negated: Bool
    /// Membership of the 128 ASCII scalars, precomputed (negation applied).
    private let asciiLow: UInt64
    private let asciiHigh: UInt64

    package init(items: [Item], negated: Bool) {
        self.items = items
        self.negated = negated
        var low: UInt64 = 0, high: UInt64 = 0
        for c in UInt32(0)..<128 where ScalarSet.slowContains(items, negated, c) {
            if c < 64 { low |= 1 << c } else { high |= 1 << (c - 64) }
        }
        asciiLow = low
        asciiHigh = high
    }

    package func contains(_ c: UInt32) -> Bool {
        if c < 64 { return asciiLow & (1 << c) != 0 }
        if c < 128 { return asciiHigh & (1 << (c - 64)) != 0 }
        return ScalarSet.slowContains(items, negated, c)
    }

    private static func slowContains(_ items: [Item], _ negated: Bool, _ c: UInt32) -> Bool {
        for item in items {
            switch item {
            case .range(let lo, let hi): if c >= lo && c <= hi { return !negated }
            case .builtin(let b, let n): if b.contains(c) != n { return !negated }
            }
        }
        return negated
    }

    package static func isWord(_ c: UInt32) -> Bool {
        (c >= 0x61 && c <= 0x7A) || (c >= 0x41 && c <= 0x5A) || (c >= 0x30 && c <= 0x39) || c == 0x5F
    }

    package static func isSpace(_ c: UInt32) -> Bool {
        switch c {
        case 0x09...0x0D, 0x20, 0xA0, 0x1680, 0x2000...0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF: return true
        default: return false
        }
    }
}

/// A Unicode property usable in `\p{...}`: general categories and a few binary properties.
package enum UnicodeProperty: Sendable {
    /// A set of general categories, as a bit mask over `categoryBit`.
    case categories(UInt32)
    case alphabetic, whiteSpace, uppercase, lowercase, ascii, any, assigned

    package func contains(_ c: UInt32) -> Bool {
        guard let scalar = Unicode.Scalar(c) else { return false }
        let p = scalar.properties
        switch self {
        case .categories(let mask): return mask & UnicodeProperty.categoryBit(p.generalCategory) != 0
        case .alphabetic: return p.isAlphabetic
        case .whiteSpace: return p.isWhitespace
        case .uppercase: return p.isUppercase
        case .lowercase: return p.isLowercase
        case .ascii: return c < 128
        case .any: return true
        case .assigned: return p.generalCategory != .unassigned
        }
    }

    /// Looks up `\p{name}` or `\p{General_Category=value}`; `nil` when unsupported.
    package init?(name: String) {
        var key = name
        if let eq = name.firstIndex(of: "=") {
            let property = name[..<eq]
            guard property == "General_Category" || property == "gc" else { return nil }
            key = String(name[name.index(after: eq)...])
            guard let mask = UnicodeProperty.categoryMasks[key] else { return nil }
            self = .categories(mask)
            return
        }
        if let mask = UnicodeProperty.categoryMasks[key] {
            self = .categories(mask)
            return
        }
        switch key {
        case "Alphabetic", "Alpha": self = .alphabetic
        case "White_Space", "space": self = .whiteSpace
        case "Uppercase", "Upper": self = .uppercase
        case "Lowercase", "Lower": self = .lowercase
        case "ASCII": self = .ascii
        case "Any": self = .any
        case "Assigned": self = .assigned
        default: return nil
        }
    }

    private static func categoryBit(_ c: Unicode.GeneralCategory) -> UInt32 {
        let index: UInt32
        switch c {
        case .uppercaseLetter: index = 0
        case .lowercaseLetter: index = 1
        case .titlecaseLetter: index = 2
        case .modifierLetter: index = 3
        case .otherLetter: index = 4
        case .nonspacingMark: index = 5
        case .spacingMark: index = 6
        case .enclosingMark: index = 7
        case .decimalNumber: index = 8
        case .letterNumber: index = 9
        case .otherNumber: index = 10
        case .connectorPunctuation: index = 11
        case .dashPunctuation: index = 12
        case .openPunctuation: index = 13
        case .closePunctuation: index = 14
        case .initialPunctuation: index = 15
        case .finalPunctuation: index = 16
        case .otherPunctuation: index = 17
        case .mathSymbol: index = 18
        case .currencySymbol: index = 19
        case .modifierSymbol: index = 20
        case .otherSymbol: index = 21
        case .spaceSeparator: index = 22
        case .lineSeparator: index = 23
        case .paragraphSeparator: index = 24
        case .control: index = 25
        case .format: index = 26
        case .surrogate: index = 27
        case .privateUse: index = 28
        case .unassigned: index = 29
        @unknown default: index = 29
        }
        return 1 << index
    }

    /// Category names (short and long; `digit`, `punct` and `cntrl` as common aliases) to masks.
    private static let categoryMasks: [String: UInt32] = {
        func bits(_ indices: ClosedRange<UInt32>) -> UInt32 { indices.reduce(0) { $0 | 1 << $1 } }
        var m: [String: UInt32] = [:]
        let singles: [(UInt32, [String])] = [
            (0, ["Lu", "Uppercase_Letter"]), (1, ["Ll", "Lowercase_Letter"]), (2, ["Lt", "Titlecase_Letter"]),
            (3, ["Lm", "Modifier_Letter"]), (4, ["Lo", "Other_Letter"]), (5, ["Mn", "Nonspacing_Mark"]),
            (6, ["Mc", "Spacing_Mark"]), (7, ["Me", "Enclosing_Mark"]), (8, ["Nd", "Decimal_Number", "digit"]),
            (9, ["Nl", "Letter_Number"]), (10, ["No", "Other_Number"]), (11, ["Pc", "Connector_Punctuation"]),
            (12, ["Pd", "Dash_Punctuation"]), (13, ["Ps", "Open_Punctuation"]), (14, ["Pe", "Close_Punctuation"]),
            (15, ["Pi", "Initial_Punctuation"]), (16, ["Pf", "Final_Punctuation"]), (17, ["Po", "Other_Punctuation"]),
            (18, ["Sm", "Math_Symbol"]), (19, ["Sc", "Currency_Symbol"]), (20, ["Sk", "Modifier_Symbol"]),
            (21, ["So", "Other_Symbol"]), (22, ["Zs", "Space_Separator"]), (23, ["Zl", "Line_Separator"]),
            (24, ["Zp", "Paragraph_Separator"]), (25, ["Cc", "Control", "cntrl"]), (26, ["Cf", "Format"]),
            (27, ["Cs", "Surrogate"]), (28, ["Co", "Private_Use"]), (29, ["Cn", "Unassigned"]),
        ]
        for (bit, names) in singles { for n in names { m[n] = 1 << bit } }
        for n in ["L", "Letter"] { m[n] = bits(0...4) }
        m["LC"] = bits(0...2)
        m["Cased_Letter"] = bits(0...2)
        for n in ["M", "Mark", "Combining_Mark"] { m[n] = bits(5...7) }
        for n in ["N", "Number"] { m[n] = bits(8...10) }
        for n in ["P", "Punctuation", "punct"] { m[n] = bits(11...17) }
        for n in ["S", "Symbol"] { m[n] = bits(18...21) }
        for n in ["Z", "Separator"] { m[n] = bits(22...24) }
        for n in ["C", "Other"] { m[n] = bits(25...29) }
        return m
    }()
}
