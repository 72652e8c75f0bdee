/// The syntax tree of a regular expression, as both dialects (ECMA-262 for JSON Schema and plans,
/// Firebase's subset for rules) parse it; `ECMARegex` compiles it.
package indirect enum RegexNode: Sendable {
    case empty
    /// Consumes exactly one scalar.
    case atom(RegexAtom)
    case lineStart
    case lineEnd
    case wordBoundary(negated: Bool)
    /// `capture` is the 1-based group number, `nil` for `(?:...)`.
    case group(RegexNode, capture: Int?)
    case sequence([RegexNode])
    case alternation([RegexNode])
    case quantified(RegexNode, min: Int, max: Int?, greedy: Bool)
    case look(RegexNode, behind: Bool, negated: Bool)
    case backreference(Int)

    /// How deep groups, lookarounds and quantified groups may nest: parsers refuse deeper patterns,
    /// so that compiling and freeing a tree never recurses far.
    package static let maxNesting = 256
}

/// Something that matches exactly one scalar.
package enum RegexAtom: Sendable {
    case scalar(UInt32)
    /// `.`: anything but a line terminator.
    case any
    case set(ScalarSet)
    /// A scalar compared case-insensitively: the input's lower-case form must be `folded`.
    case caseless(folded: UInt32)
    /// A class tested case-insensitively: with the input, its lower-case or its upper-case form.
    case caselessSet(ScalarSet)

    package func matches(_ c: UInt32) -> Bool {
        switch self {
        case .scalar(let s): return s == c
        case .any: return c != 0x0A && c != 0x0D && c != 0x2028 && c != 0x2029
        case .set(let set): return set.contains(c)
        case .caseless(let folded): return RegexAtom.lower(c) == folded
        case .caselessSet(let set): return set.contains(c) || set.contains(RegexAtom.lower(c)) || set.contains(RegexAtom.upper(c))
        }
    }

    /// The simple (one-scalar) lower-case mapping of `c`, or `c`.
    package static func lower(_ c: UInt32) -> UInt32 {
        if c < 0x80 { return c >= 0x41 && c <= 0x5A ? c + 0x20 : c }
        guard let scalar = Unicode.Scalar(c) else { return c }
        let mapped = scalar.properties.lowercaseMapping.unicodeScalars
        return mapped.count == 1 ? mapped.first!.value : c
    }

    /// The simple (one-scalar) upper-case mapping of `c`, or `c`.
    package static func upper(_ c: UInt32) -> UInt32 {
        if c < 0x80 { return c >= 0x61 && c <= 0x7A ? c - 0x20 : c }
        guard let scalar = Unicode.Scalar(c) else { return c }
        let mapped = scalar.properties.uppercaseMapping.unicodeScalars
        return mapped.count == 1 ? mapped.first!.value : c
    }
}
