import ArchiveKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// ISO 8601 times in UTC with milliseconds (`2016-11-19T12:34:56.789Z`), as manifests and listings show them.
public enum UTCTime {
    /// `time` as `YYYY-MM-DDTHH:MM:SS.mmmZ` (the milliseconds left out when they are zero).
    public static func format(_ time: Timestamp) -> String {
        var seconds = time_t(time.seconds)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ n: Int32, _ width: Int) -> String {
            let s = String(n)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        var text =
            "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))"
            + "T\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2))"
        let milliseconds = time.nanoseconds / 1_000_000
        if milliseconds > 0 { text += "." + pad(milliseconds, 3) }
        return text + "Z"
    }

    /// Reads a time written by `format` (seconds, optionally with up to 9 fraction digits, then `Z`).
    public static func parse(_ text: String) -> Timestamp? {
        let b = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int32? {
            guard range.upperBound <= b.count else { return nil }
            var n: Int32 = 0
            for i in range {
                guard (48...57).contains(b[i]) else { return nil }
                n = n * 10 + Int32(b[i] - 48)
            }
            return n
        }
        guard b.count >= 20, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"), b[10] == UInt8(ascii: "T"),
            b[13] == UInt8(ascii: ":"), b[16] == UInt8(ascii: ":"), b.last == UInt8(ascii: "Z"),
            let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19)
        else { return nil }
        var nanoseconds: Int32 = 0
        if b.count > 20 {
            let digits = b.count - 21
            guard b[19] == UInt8(ascii: "."), (1...9).contains(digits), let fraction = number(20..<(20 + digits)) else { return nil }
            nanoseconds = fraction * Int32([1, 100_000_000, 10_000_000, 1_000_000, 100_000, 10_000, 1000, 100, 10, 1][digits])
        } else if b.count != 20 {
            return nil
        }
        var parts = tm()
        parts.tm_year = year - 1900
        parts.tm_mon = month - 1
        parts.tm_mday = day
        parts.tm_hour = hour
        parts.tm_min = minute
        parts.tm_sec = second
        return Timestamp(seconds: Int64(timegm(&parts)), nanoseconds: nanoseconds)
    }
}
