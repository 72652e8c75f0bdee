import RegexEngine

/// Validators for the `format` values JSON Schema defines, used when format assertion is on.
///
/// Each checker takes a string (formats never constrain other types). The rules follow the
/// referenced RFCs closely enough for the JSON-Schema-Test-Suite; `idn-hostname` implements the
/// IDNA2008 rules that matter in practice (disallowed categories, contextual rules, the Bidi rule
/// with Bidi classes approximated by script blocks).
enum FormatCheckers {
    /// The checker for a format name; `nil` for unknown formats (which are then not asserted).
    static func checker(for name: String) -> (@Sendable (String) -> Bool)? {
        switch name {
        case "date-time": return isDateTime
        case "date": return { isDate(Array($0.utf8)[...]) }
        case "time": return { isTime(Array($0.utf8)[...]) }
        case "duration": return { durationPattern.search($0) == .matched }
        case "email": return { isEmail($0, international: false) }
        case "idn-email": return { isEmail($0, international: true) }
        case "hostname": return { isHostname($0, international: false) }
        case "idn-hostname": return { isHostname($0, international: true) }
        case "ipv4": return { isIPv4(Substring($0)) }
        case "ipv6": return isIPv6
        case "uri": return { isURI($0, reference: false, international: false) }
        case "uri-reference": return { isURI($0, reference: true, international: false) }
        case "iri": return { isURI($0, reference: false, international: true) }
        case "iri-reference": return { isURI($0, reference: true, international: true) }
        case "uri-template": return isURITemplate
        case "uuid": return isUUID
        case "json-pointer": return isJSONPointer
        case "relative-json-pointer": return isRelativeJSONPointer
        case "regex": return ECMARegex.isValidSyntax
        default: return nil
        }
    }

    // MARK: - Dates and times (RFC 3339)

    private static func digits(_ s: ArraySlice<UInt8>, _ from: Int, _ count: Int) -> Int? {
        var value = 0
        for i in from..<(from + count) {
            guard i < s.endIndex, s[i] >= UInt8(ascii: "0"), s[i] <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(s[i] - UInt8(ascii: "0"))
        }
        return value
    }

    private static func isDate(_ s: ArraySlice<UInt8>) -> Bool {
        let b = s.startIndex
        guard s.count == 10, s[b + 4] == UInt8(ascii: "-"), s[b + 7] == UInt8(ascii: "-"),
            let year = digits(s, b, 4), let month = digits(s, b + 5, 2), let day = digits(s, b + 8, 2),
            (1...12).contains(month), day >= 1
        else { return false }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        return day <= days[month - 1]
    }

    private static func isTime(_ s: ArraySlice<UInt8>) -> Bool {
        let b = s.startIndex
        guard s.count >= 9, s[b + 2] == UInt8(ascii: ":"), s[b + 5] == UInt8(ascii: ":"),
            let hour = digits(s, b, 2), let minute = digits(s, b + 3, 2), let second = digits(s, b + 6, 2),
            hour <= 23, minute <= 59, second <= 60
        else { return false }
        var i = b + 8
        if i < s.endIndex, s[i] == UInt8(ascii: ".") {
            i += 1
            let start = i
            while i < s.endIndex, s[i] >= UInt8(ascii: "0"), s[i] <= UInt8(ascii: "9") { i += 1 }
            guard i > start else { return false }
        }
        guard i < s.endIndex else { return false }
        var offset = 0
        switch s[i] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            guard i + 1 == s.endIndex else { return false }
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            guard i + 6 == s.endIndex, s[i + 3] == UInt8(ascii: ":"), let oh = digits(s, i + 1, 2), let om = digits(s, i + 4, 2),
                oh <= 23, om <= 59
            else { return false }
            offset = (oh * 60 + om) * (s[i] == UInt8(ascii: "+") ? 1 : -1)
        default:
            return false
        }
        // A leap second is only valid at 23:59:60 UTC.
        if second == 60 {
            let utc = ((hour * 60 + minute - offset) % 1440 + 1440) % 1440
            return utc == 23 * 60 + 59
        }
        return true
    }

    private static func isDateTime(_ text: String) -> Bool {
        let s = Array(text.utf8)[...]
        guard s.count > 11, s[10] == UInt8(ascii: "T") || s[10] == UInt8(ascii: "t") else { return false }
        return isDate(s[..<10]) && isTime(s[11...])
    }

    /// RFC 3339 appendix A durations (`P1Y2M3DT4H5M6S`, `P2W`).
    private static let durationPattern: ECMARegex = {
        let time = #"T(?:\d+H(?:\d+M(?:\d+S)?)?|\d+M(?:\d+S)?|\d+S)"#
        let date = #"(?:\d+D|\d+M(?:\d+D)?|\d+Y(?:\d+M(?:\d+D)?)?)"#
        // The pattern is a constant known to be valid.
        return try! ECMARegex("^P(?:\(date)(?:\(time))?|\(time)|\\d+W)$")
    }()

    // MARK: - Internet addresses

    private static func isIPv4(_ s: Substring) -> Bool {
        let parts = s.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return false }
        for p in parts {
            guard !p.isEmpty, p.utf8.count <= 3, p.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                p.utf8.count == 1 || p.utf8.first != UInt8(ascii: "0"), let v = Int(p), v <= 255
            else { return false }
        }
        return true
    }

    private static func isIPv6(_ s: String) -> Bool {
        guard s.utf8.allSatisfy({ $0 < 0x80 }), !s.isEmpty else { return false }
        var halves = [Substring(s)]
        if let gap = s.firstRange(of: "::") {
            halves = [s[..<gap.lowerBound], s[gap.upperBound...]]
            guard !halves[1].contains("::") else { return false }
        }
        var groups = 0
        for (h, half) in halves.enumerated() where !half.isEmpty {
            let parts = half.split(separator: ":", omittingEmptySubsequences: false)
            for (i, part) in parts.enumerated() {
                let isLast = h == halves.count - 1 && i == parts.count - 1
                if isLast && part.contains(".") {
                    guard isIPv4(part) else { return false }
                    groups += 2
                } else {
                    guard (1...4).contains(part.utf8.count), part.utf8.allSatisfy({ $0.isHexDigit }) else { return false }
                    groups += 1
                }
            }
        }
        return halves.count == 2 ? groups <= 7 : groups == 8
    }

    private static func isEmail(_ s: String, international: Bool) -> Bool {
        let c = Array(s.unicodeScalars)
        var i = 0
        if c.first == "\"" {
            i = 1
            while i < c.count && c[i] != "\"" {
                if c[i] == "\\" { i += 1 }
                guard i < c.count, c[i].value >= 0x20, c[i].value != 0x7F, international || c[i].isASCII else { return false }
                i += 1
            }
            guard i < c.count else { return false }
            i += 1
        } else {
            let atext = "!#$%&'*+-/=?^_`{|}~"
            var previousDot = true
            while i < c.count && c[i] != "@" {
                let ch = c[i]
                if ch == "." {
                    if previousDot { return false }
                    previousDot = true
                } else if ch.isASCII
                    ? (ch.properties.isAlphabetic || ("0"..."9").contains(ch) || atext.unicodeScalars.contains(ch))
                    : international && ch.value > 0x7F
                {
                    previousDot = false
                } else {
                    return false
                }
                i += 1
            }
            if previousDot { return false }
        }
        guard i < c.count, c[i] == "@" else { return false }
        var domain = String(String.UnicodeScalarView(c[(i + 1)...]))
        if domain.hasPrefix("[") && domain.hasSuffix("]") {
            domain = String(domain.dropFirst().dropLast())
            if domain.hasPrefix("IPv6:") { return isIPv6(String(domain.dropFirst(5))) }
            return isIPv4(Substring(domain))
        }
        return isHostname(domain, international: international)
    }

    // MARK: - Host names (RFC 1123, IDNA2008)

    private static func isHostname(_ s: String, international: Bool) -> Bool {
        var text = s
        if international {
            // IDNA treats the ideographic and fullwidth full stops as label separators too.
            text = String(String.UnicodeScalarView(s.unicodeScalars.map { ["\u{3002}", "\u{FF0E}", "\u{FF61}"].contains($0) ? "." : $0 }))
        }
        guard !text.isEmpty else { return false }
        var length = -1
        var unicodeLabels: [[Unicode.Scalar]] = []
        for label in text.split(separator: ".", omittingEmptySubsequences: false) {
            guard !label.isEmpty else { return false }
            let scalars = Array(label.unicodeScalars)
            var ascii = scalars.count
            if scalars.allSatisfy(\.isASCII) {
                guard scalars.allSatisfy({ $0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-" }),
                    scalars.first != "-", scalars.last != "-"
                else { return false }
                if label.lowercased().hasPrefix("xn--") {
                    // An A-label: valid Punycode, in canonical form, of a valid U-label.
                    let encoded = Array(label.lowercased().utf8.dropFirst(4))
                    guard let decoded = punycodeDecode(encoded), punycodeEncode(decoded) == encoded, isIDNALabel(decoded) else {
                        return false
                    }
                    unicodeLabels.append(decoded)
                } else {
                    guard scalars.count < 4 || scalars[2] != "-" || scalars[3] != "-" else { return false }
                    unicodeLabels.append(scalars)
                }
            } else {
                guard international, isIDNALabel(scalars), let encoded = punycodeEncode(scalars) else { return false }
                ascii = encoded.count + 4
                unicodeLabels.append(scalars)
            }
            guard ascii <= 63 else { return false }
            length += ascii + 1
        }
        let isBidiDomain = unicodeLabels.contains { $0.contains { [.r, .al, .an].contains(bidiClass($0)) } }
        if isBidiDomain && !unicodeLabels.allSatisfy(satisfiesBidiRule) { return false }
        return length <= 253
    }

    /// IDNA2008 (RFC 5891/5892) checks on one Unicode label (the Bidi rule needs the whole name).
    private static func isIDNALabel(_ label: [Unicode.Scalar]) -> Bool {
        guard let first = label.first, label.last != "-", first != "-" else { return false }
        if label.count >= 4, label[2] == "-", label[3] == "-" { return false }
        if [.spacingMark, .nonspacingMark, .enclosingMark].contains(first.properties.generalCategory) { return false }
        let hasArabicIndic = label.contains { (0x660...0x669).contains($0.value) }
        let hasExtendedArabicIndic = label.contains { (0x6F0...0x6F9).contains($0.value) }
        if hasArabicIndic && hasExtendedArabicIndic { return false }
        for (i, c) in label.enumerated() {
            let previous = i > 0 ? label[i - 1] : nil, next = i + 1 < label.count ? label[i + 1] : nil
            switch c.value {
            case 0x00DF, 0x03C2, 0x06FD, 0x06FE, 0x0F0B, 0x3007, 0x0660...0x0669, 0x06F0...0x06F9, 0x2D:
                continue  // PVALID exceptions, and the digits checked above
            case 0x0640, 0x07FA, 0x302E, 0x302F, 0x3031...0x3035, 0x303B:
                return false  // DISALLOWED exceptions
            case 0x00B7:  // MIDDLE DOT: between two 'l'
                guard previous == "l", next == "l" else { return false }
            case 0x0375:  // GREEK LOWER NUMERAL SIGN: followed by Greek
                guard let next, isGreek(next) else { return false }
            case 0x05F3, 0x05F4:  // HEBREW GERESH/GERSHAYIM: preceded by Hebrew
                guard let previous, (0x0590...0x05FF).contains(previous.value) else { return false }
            case 0x30FB:  // KATAKANA MIDDLE DOT: some Hiragana, Katakana or Han in the label
                guard label.contains(where: { $0.value != 0x30FB && isJapanese($0) }) else { return false }
            case 0x200D:  // ZERO WIDTH JOINER: after a virama
                guard let previous, previous.properties.canonicalCombiningClass == .virama else { return false }
            case 0x200C:  // ZERO WIDTH NON-JOINER: after a virama, or between joining letters
                if let previous, previous.properties.canonicalCombiningClass == .virama { continue }
                guard let previous, let next, isJoining(previous), isJoining(next) else { return false }
            default:
                guard isPVALID(c) else { return false }
            }
        }
        return true
    }

    private static func isPVALID(_ c: Unicode.Scalar) -> Bool {
        if c.isASCII { return ("a"..."z").contains(c) || ("0"..."9").contains(c) }
        let p = c.properties
        switch p.generalCategory {
        case .lowercaseLetter, .otherLetter, .modifierLetter, .nonspacingMark, .spacingMark, .decimalNumber:
            // Characters that change under NFKC case folding (compatibility forms) are disallowed.
            return !p.changesWhenNFKCCaseFolded
        default:
            return false
        }
    }

    private static func isGreek(_ c: Unicode.Scalar) -> Bool { (0x0370...0x03FF).contains(c.value) || (0x1F00...0x1FFF).contains(c.value) }

    private static func isJapanese(_ c: Unicode.Scalar) -> Bool {
        (0x3040...0x309F).contains(c.value) || (0x30A0...0x30FF).contains(c.value) || (0x3400...0x4DBF).contains(c.value)
            || (0x4E00...0x9FFF).contains(c.value) || (0xF900...0xFAFF).contains(c.value) || (0x20000...0x2FA1F).contains(c.value)
    }

    /// Arabic-script letters, standing in for the dual/left/right joining types.
    private static func isJoining(_ c: Unicode.Scalar) -> Bool {
        ((0x0620...0x064A).contains(c.value) || (0x066E...0x06D3).contains(c.value) || (0x06FA...0x06FF).contains(c.value))
            && c.properties.generalCategory == .otherLetter
    }

    /// RFC 3492 Punycode decoding of the part after `xn--`; `nil` when malformed.
    private static func punycodeDecode(_ input: [UInt8]) -> [Unicode.Scalar]? {
        let base = 36, tMin = 1, tMax = 26
        var output: [Unicode.Scalar] = []
        var pos = 0
        if let dash = input.lastIndex(of: UInt8(ascii: "-")) {
            output = input[..<dash].map { Unicode.Scalar($0) }
            pos = dash + 1
        }
        var n = 128, i = 0, bias = 72
        while pos < input.count {
            let oldI = i
            var w = 1, k = base
            while true {
                guard pos < input.count else { return nil }
                let c = input[pos]
                pos += 1
                let digit: Int
                switch c {
                case UInt8(ascii: "a")...UInt8(ascii: "z"): digit = Int(c - UInt8(ascii: "a"))
                case UInt8(ascii: "A")...UInt8(ascii: "Z"): digit = Int(c - UInt8(ascii: "A"))
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = Int(c - UInt8(ascii: "0")) + 26
                default: return nil
                }
                let (sum, overflow) = i.addingReportingOverflow(digit * w)
                guard !overflow, sum < 0x10FFFF * 64 else { return nil }
                i = sum
                let t = k <= bias ? tMin : (k >= bias + tMax ? tMax : k - bias)
                if digit < t { break }
                w *= base - t
                k += base
            }
            bias = punycodeAdapt(i - oldI, output.count + 1, oldI == 0)
            n += i / (output.count + 1)
            i %= output.count + 1
            guard n >= 0x80, let scalar = Unicode.Scalar(n) else { return nil }
            output.insert(scalar, at: i)
            i += 1
        }
        return output
    }

    private static func punycodeAdapt(_ delta: Int, _ points: Int, _ first: Bool) -> Int {
        var delta = first ? delta / 700 : delta / 2
        delta += delta / points
        var k = 0
        while delta > (35 * 26) / 2 {
            delta /= 35
            k += 36
        }
        return k + (36 * delta) / (delta + 38)
    }

    /// RFC 3492 Punycode encoding (the part after `xn--`); `nil` on overflow.
    private static func punycodeEncode(_ label: [Unicode.Scalar]) -> [UInt8]? {
        let input = label.map { Int($0.value) }
        var output = input.filter { $0 < 0x80 }.map { UInt8($0) }
        let basic = output.count
        if basic > 0 { output.append(UInt8(ascii: "-")) }
        func digit(_ d: Int) -> UInt8 { d < 26 ? UInt8(ascii: "a") + UInt8(d) : UInt8(ascii: "0") + UInt8(d - 26) }
        var n = 128, delta = 0, bias = 72, handled = basic
        while handled < input.count {
            guard let m = input.filter({ $0 >= n }).min() else { return nil }
            let (step, overflow) = (m - n).multipliedReportingOverflow(by: handled + 1)
            guard !overflow else { return nil }
            delta += step
            n = m
            for c in input {
                if c < n { delta += 1 }
                guard c == n else { continue }
                var q = delta, k = 36
                while true {
                    let t = k <= bias ? 1 : (k >= bias + 26 ? 26 : k - bias)
                    if q < t { break }
                    output.append(digit(t + (q - t) % (36 - t)))
                    q = (q - t) / (36 - t)
                    k += 36
                }
                output.append(digit(q))
                bias = punycodeAdapt(delta, handled + 1, handled == basic)
                delta = 0
                handled += 1
            }
            delta += 1
            n += 1
        }
        return output
    }

    /// RFC 5893 Bidi classes, approximated by script blocks (Swift exposes no `Bidi_Class`).
    private enum BidiClass {
        case l, r, al, an, en, nsm, neutral
    }

    private static func bidiClass(_ c: Unicode.Scalar) -> BidiClass {
        let v = c.value
        let category = c.properties.generalCategory
        if category == .nonspacingMark || category == .enclosingMark { return .nsm }
        switch v {
        case 0x30...0x39, 0xB2, 0xB3, 0xB9, 0x6F0...0x6F9, 0x2070...0x2079, 0xFF10...0xFF19: return .en
        case 0x600...0x605, 0x660...0x669, 0x66B, 0x66C, 0x6DD, 0x890, 0x891, 0x8E2: return .an
        case 0x590...0x5FF, 0x7C0...0x85F, 0xFB1D...0xFB4F, 0x10800...0x10FFF, 0x1E800...0x1EFFF: return .r
        case 0x600...0x7BF, 0x860...0x8FF, 0xFB50...0xFDFF, 0xFE70...0xFEFF: return .al
        default: return c.properties.isAlphabetic || category == .spacingMark || category == .decimalNumber ? .l : .neutral
        }
    }

    /// The RFC 5893 Bidi rule for one label of a domain name that contains right-to-left labels.
    private static func satisfiesBidiRule(_ label: [Unicode.Scalar]) -> Bool {
        let classes = label.map(bidiClass)
        guard let first = classes.first else { return false }
        let last = classes.last { $0 != .nsm }
        switch first {
        case .r, .al:
            guard !(classes.contains(.en) && classes.contains(.an)), !classes.contains(.l) else { return false }
            return [.r, .al, .en, .an].contains(last)
        case .l:
            guard !classes.contains(where: { [.r, .al, .an].contains($0) }) else { return false }
            return last == .l || last == .en
        default:
            return false
        }
    }

    // MARK: - URIs and IRIs (RFC 3986/3987), URI templates (RFC 6570)

    private static func isUnreserved(_ c: Unicode.Scalar) -> Bool {
        c.isASCII && (c.properties.isAlphabetic || ("0"..."9").contains(c) || c == "-" || c == "." || c == "_" || c == "~")
    }

    private static func isSubDelimiter(_ c: Unicode.Scalar) -> Bool { "!$&'()*+,;=".unicodeScalars.contains(c) }

    /// Whether `chars` consists of allowed characters and well-formed `%XX` escapes.
    private static func isEncoded(_ chars: ArraySlice<Unicode.Scalar>, international: Bool, extra: String) -> Bool {
        var i = chars.startIndex
        while i < chars.endIndex {
            let c = chars[i]
            if c == "%" {
                guard i + 2 < chars.endIndex, chars[i + 1].isASCII, UInt8(chars[i + 1].value).isHexDigit,
                    chars[i + 2].isASCII, UInt8(chars[i + 2].value).isHexDigit
                else { return false }
                i += 3
                continue
            }
            guard
                isUnreserved(c) || isSubDelimiter(c) || extra.unicodeScalars.contains(c)
                    || (international && c.value >= 0xA0 && !(0xE000...0xF8FF).contains(c.value) && c.value != 0xFFFE && c.value != 0xFFFF)
            else { return false }
            i += 1
        }
        return true
    }

    private static func isURI(_ s: String, reference: Bool, international: Bool) -> Bool {
        var c = Array(s.unicodeScalars)[...]
        if let hash = c.firstIndex(of: "#") {
            guard isEncoded(c[(hash + 1)...], international: international, extra: ":@/?") else { return false }
            c = c[..<hash]
        }
        if let question = c.firstIndex(of: "?") {
            guard isEncoded(c[(question + 1)...], international: international, extra: ":@/?") else { return false }
            c = c[..<question]
        }
        var hasScheme = false
        if let colon = c.firstIndex(of: ":"), !c[..<colon].contains("/") {
            let scheme = c[..<colon]
            guard let first = scheme.first, first.isASCII, first.properties.isAlphabetic,
                scheme.allSatisfy({
                    $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "+-.".unicodeScalars.contains($0))
                })
            else { return false }
            hasScheme = true
            c = c[(colon + 1)...]
        }
        guard hasScheme || reference else { return false }
        if c.starts(with: ["/", "/"]) {
            c = c.dropFirst(2)
            let end = c.firstIndex(of: "/") ?? c.endIndex
            guard isAuthority(c[..<end], international: international) else { return false }
            c = c[end...]
        }
        return isEncoded(c, international: international, extra: ":@/")
    }

    private static func isAuthority(_ a: ArraySlice<Unicode.Scalar>, international: Bool) -> Bool {
        var host = a
        if let at = a.lastIndex(of: "@") {
            guard isEncoded(a[..<at], international: international, extra: ":") else { return false }
            host = a[(at + 1)...]
        }
        if host.first == "[" {
            guard let close = host.firstIndex(of: "]") else { return false }
            let literal = String(String.UnicodeScalarView(host[(host.startIndex + 1)..<close]))
            guard isIPv6(literal) || literal.lowercased().hasPrefix("v") else { return false }
            host = host[(close + 1)...]
            guard host.isEmpty || host.first == ":" else { return false }
        }
        if let colon = host.lastIndex(of: ":") {
            guard host[(colon + 1)...].allSatisfy({ ("0"..."9").contains($0) }) else { return false }
            host = host[..<colon]
        }
        return host.first == "[" || isEncoded(host, international: international, extra: "")
    }

    private static func isURITemplate(_ s: String) -> Bool {
        var c = Array(s.unicodeScalars)[...]
        while let open = c.firstIndex(where: { $0 == "{" || $0 == "}" }) {
            guard isTemplateLiteral(c[..<open]), c[open] == "{", let close = c[open...].firstIndex(of: "}") else { return false }
            var expression = c[(open + 1)..<close]
            if let op = expression.first, "+#./;?&=,!@|".unicodeScalars.contains(op) { expression = expression.dropFirst() }
            for spec in expression.split(separator: ",", omittingEmptySubsequences: false) {
                var name = spec
                if spec.last == "*" {
                    name = spec.dropLast()
                } else if let colon = spec.firstIndex(of: ":") {
                    let length = spec[(colon + 1)...]
                    guard (1...4).contains(length.count), length.first != "0", length.allSatisfy({ ("0"..."9").contains($0) }) else {
                        return false
                    }
                    name = spec[..<colon]
                }
                guard !name.isEmpty, name.first != ".", name.last != ".",
                    !name.split(separator: ".", omittingEmptySubsequences: false).contains(where: \.isEmpty),
                    isEncoded(name, international: false, extra: "."),
                    !name.contains(where: { isSubDelimiter($0) || $0 == "-" || $0 == "~" })
                else { return false }
            }
            c = c[(close + 1)...]
        }
        return isTemplateLiteral(c)
    }

    private static func isTemplateLiteral(_ c: ArraySlice<Unicode.Scalar>) -> Bool {
        c.allSatisfy { $0.value > 0x20 && !"\"<>\\^`{|}".unicodeScalars.contains($0) && $0.value != 0x7F }
    }

    // MARK: - Identifiers and pointers

    private static func isUUID(_ s: String) -> Bool {
        let b = Array(s.utf8)
        guard b.count == 36 else { return false }
        for (i, c) in b.enumerated() {
            if [8, 13, 18, 23].contains(i) {
                guard c == UInt8(ascii: "-") else { return false }
            } else {
                guard c.isHexDigit else { return false }
            }
        }
        return true
    }

    private static func isJSONPointer(_ s: String) -> Bool {
        guard s.isEmpty || s.hasPrefix("/") else { return false }
        let b = Array(s.utf8)
        for (i, c) in b.enumerated() where c == UInt8(ascii: "~") {
            guard i + 1 < b.count, b[i + 1] == UInt8(ascii: "0") || b[i + 1] == UInt8(ascii: "1") else { return false }
        }
        return true
    }

    private static func isRelativeJSONPointer(_ s: String) -> Bool {
        let digits = s.utf8.prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
        guard !digits.isEmpty, digits.count == 1 || digits.first != UInt8(ascii: "0") else { return false }
        let rest = String(s.dropFirst(digits.count))
        return rest == "#" || isJSONPointer(rest)
    }
}

extension UInt8 {
    fileprivate var isHexDigit: Bool {
        (self >= UInt8(ascii: "0") && self <= UInt8(ascii: "9")) || (self >= UInt8(ascii: "a") && self <= UInt8(ascii: "f"))
            || (self >= UInt8(ascii: "A") && self <= UInt8(ascii: "F"))
    }
}
