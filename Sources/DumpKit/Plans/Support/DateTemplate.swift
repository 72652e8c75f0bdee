import Foundation

/// A date text format such as `yyyy/MM/dd HH:mm:ss` in a stated time zone, read and written exactly.
///
/// Fields: `yyyy` (4-digit year), `MM` `dd` `HH` `mm` `ss` (2 digits), `M` `d` `H` (1 or 2 digits),
/// `SSS` (milliseconds), `XXX` (the UTC offset as ISO 8601 writes it: `Z` or `+09:00`); any other
/// character is literal, and text in single quotes (`'T'`) is literal too. Reading is strict (widths
/// and literals must match). A text's own offset decides its instant; written, the offset is the
/// time zone's, so a date that reads back writes back as the same text when its offset is the zone's.
struct DateTemplate: Sendable {
    private enum Piece: Sendable {
        case literal(String)
        case field(Field, width: Int, minWidth: Int)
        case offset
    }

    private enum Field: Hashable, Sendable { case year, month, day, hour, minute, second, millisecond }

    /// The format as written in the plan.
    let format: String
    /// The time zone's name as written (`Asia/Tokyo`, `UTC`, `+09:00`).
    let zoneName: String
    private let pieces: [Piece]
    private let zone: Zone

    private enum Zone: Sendable {
        case fixed(seconds: Int)
        case named(TimeZone)
    }

    /// Compiles `format` for `timeZone`; the error is a message for the plan author.
    init(format: String, timeZone: String) throws(TemplateError) {
        self.format = format
        self.zoneName = timeZone
        pieces = try Self.compile(format)
        if let offset = Self.fixedOffset(timeZone) {
            zone = .fixed(seconds: offset)
        } else if let tz = TimeZone(identifier: timeZone) {
            zone = .named(tz)
        } else {
            throw TemplateError(
                message: "unknown time zone '\(timeZone)' (use an IANA name such as Asia/Tokyo, UTC, or an offset such as +09:00)")
        }
    }

    /// A format or time zone that cannot be used.
    struct TemplateError: Error {
        let message: String
    }

    private static func compile(_ format: String) throws(TemplateError) -> [Piece] {
        var pieces: [Piece] = []
        let chars = Array(format)
        var i = 0
        var seen = Set<Field>()
        func literal(_ s: String) {
            if case .literal(let prev) = pieces.last {
                pieces[pieces.count - 1] = .literal(prev + s)
            } else {
                pieces.append(.literal(s))
            }
        }
        while i < chars.count {
            let c = chars[i]
            if c == "'" {
                guard let close = chars[(i + 1)...].firstIndex(of: "'") else {
                    throw TemplateError(message: "unclosed quote in date format '\(format)'")
                }
                literal(close == i + 1 ? "'" : String(chars[(i + 1)..<close]))
                i = close + 1
                continue
            }
            var run = 1
            while i + run < chars.count && chars[i + run] == c { run += 1 }
            let field: Field?
            let width: Int
            let minWidth: Int
            switch (c, run) {
            case ("y", 4): (field, width, minWidth) = (.year, 4, 4)
            case ("M", 1...2): (field, width, minWidth) = (.month, 2, run)
            case ("d", 1...2): (field, width, minWidth) = (.day, 2, run)
            case ("H", 1...2): (field, width, minWidth) = (.hour, 2, run)
            case ("m", 2): (field, width, minWidth) = (.minute, 2, 2)
            case ("s", 2): (field, width, minWidth) = (.second, 2, 2)
            case ("S", 3): (field, width, minWidth) = (.millisecond, 3, 3)
            case ("X", 3):
                guard !pieces.contains(where: { if case .offset = $0 { return true } else { return false } }) else {
                    throw TemplateError(message: "date format '\(format)' has two offset fields")
                }
                pieces.append(.offset)
                i += run
                continue
            default:
                if c.isLetter {
                    throw TemplateError(
                        message:
                            "unsupported field '\(String(repeating: c, count: run))' in date format '\(format)' (use yyyy MM M dd d HH H mm ss SSS XXX, and quotes for literal letters)"
                    )
                }
                field = nil
                width = 0
                minWidth = 0
            }
            if let field {
                guard seen.insert(field).inserted else { throw TemplateError(message: "date format '\(format)' has two \(field) fields") }
                pieces.append(.field(field, width: width, minWidth: minWidth))
            } else {
                literal(String(repeating: c, count: run))
            }
            i += run
        }
        for needed in [Field.year, .month, .day] where !seen.contains(needed) {
            throw TemplateError(message: "date format '\(format)' has no \(needed) field")
        }
        return pieces
    }

    private static func fixedOffset(_ name: String) -> Int? {
        if name == "UTC" || name == "Z" || name == "GMT" { return 0 }
        let chars = Array(name)
        guard chars.count == 6, chars[0] == "+" || chars[0] == "-", chars[3] == ":",
            let h = Int(String(chars[1...2])), let m = Int(String(chars[4...5])), h <= 14, m < 60
        else { return nil }
        return (chars[0] == "-" ? -1 : 1) * (h * 3600 + m * 60)
    }

    private func offset(atUTC seconds: Int64) -> Int {
        switch zone {
        case .fixed(let s): return s
        case .named(let tz): return tz.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(seconds)))
        }
    }

    /// Milliseconds since 1970 for `text`, or `nil` when it does not follow the format or names no
    /// real date.
    func milliseconds(from text: String) -> Int64? {
        var values: [Field: Int] = [.month: 1, .day: 1, .hour: 0, .minute: 0, .second: 0, .millisecond: 0]
        var rest = Substring(text)
        var textOffset: Int?
        for piece in pieces {
            switch piece {
            case .offset:
                if rest.hasPrefix("Z") {
                    textOffset = 0
                    rest = rest.dropFirst()
                    continue
                }
                let chars = Array(rest.prefix(6))
                guard chars.count == 6, let o = Self.fixedOffset(String(chars)) else { return nil }
                textOffset = o
                rest = rest.dropFirst(6)
            case .literal(let l):
                guard rest.hasPrefix(l) else { return nil }
                rest = rest.dropFirst(l.count)
            case .field(let f, let width, let minWidth):
                let digits = rest.prefix(width).prefix { $0.isASCII && $0.isNumber }
                if digits.count < width && minWidth == width { return nil }
                guard digits.count >= minWidth, let v = Int(digits) else { return nil }
                values[f] = v
                rest = rest.dropFirst(digits.count)
            }
        }
        guard rest.isEmpty, let year = values[.year], let month = values[.month], let day = values[.day],
            let hour = values[.hour], let minute = values[.minute], let second = values[.second], let ms = values[.millisecond],
            (1...12).contains(month), (1...Self.daysIn(month: month, year: year)).contains(day),
            hour < 24, minute < 60, second < 60
        else { return nil }
        let local = Self.days(year: year, month: month, day: day) * 86_400 + Int64(hour * 3600 + minute * 60 + second)
        if let textOffset { return (local - Int64(textOffset)) * 1000 + Int64(ms) }
        // The zone's offset at the local time read as UTC is a first guess; the offset at that guess is right
        // except within hours of a clock change, which the round trip below settles.
        let guess = local - Int64(offset(atUTC: local))
        let utc = local - Int64(offset(atUTC: guess))
        let result = utc * 1000 + Int64(ms)
        // A local time skipped by a clock change does not exist; it would not write back the same.
        guard string(fromMilliseconds: result) == text else { return nil }
        return result
    }

    /// The text for `ms` milliseconds since 1970 (sub-second digits are dropped when the format has no `SSS`).
    func string(fromMilliseconds ms: Int64) -> String {
        let utcSeconds = Int64((Double(ms) / 1000).rounded(.down))
        let millis = Int(ms - utcSeconds * 1000)
        let local = utcSeconds + Int64(offset(atUTC: utcSeconds))
        let days = Int64((Double(local) / 86_400).rounded(.down))
        let secondOfDay = Int(local - days * 86_400)
        let (year, month, day) = Self.civil(days: days)
        var out = ""
        for piece in pieces {
            switch piece {
            case .literal(let l): out += l
            case .offset:
                let o = Int(local - utcSeconds)
                if o == 0 {
                    out += "Z"
                } else {
                    let minutes = abs(o) / 60
                    out += (o < 0 ? "-" : "+") + String(format: "%02d:%02d", minutes / 60, minutes % 60)
                }
            case .field(let f, _, let minWidth):
                let v: Int
                switch f {
                case .year: v = year
                case .month: v = month
                case .day: v = day
                case .hour: v = secondOfDay / 3600
                case .minute: v = secondOfDay / 60 % 60
                case .second: v = secondOfDay % 60
                case .millisecond: v = millis
                }
                let s = String(v)
                out += String(repeating: "0", count: max(0, minWidth - s.count)) + s
            }
        }
        return out
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's algorithm).
    private static func days(year: Int, month: Int, day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = Int64((month + 9) % 12)
        let doy = (153 * mp + 2) / 5 + Int64(day) - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The date `days` after 1970-01-01.
    private static func civil(days: Int64) -> (Int, Int, Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = Int(doy - (153 * mp + 2) / 5 + 1)
        let month = Int(mp < 10 ? mp + 3 : mp - 9)
        let year = Int(yoe + era * 400) + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }
}
