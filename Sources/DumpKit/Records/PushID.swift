/// Firebase push IDs: 20 characters over `-0-9A-Z_a-z` whose first 8 encode the creation time in
/// milliseconds (base 64, most significant first).
public enum PushID {
    private static let alphabet = Array("-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz".utf8)
    private static let values: [Int8] = {
        var table = [Int8](repeating: -1, count: 256)
        for (i, c) in alphabet.enumerated() { table[Int(c)] = Int8(i) }
        return table
    }()

    /// Whether `key` has the shape of a push ID.
    public static func isValid(_ key: some Collection<UInt8>) -> Bool {
        key.count == 20 && key.allSatisfy { values[Int($0)] >= 0 }
    }

    /// Whether `key` is a push ID by shape and by the time it encodes: from 2012 (before push IDs existed)
    /// to 2109 (where the first character leaves `-`). Twenty-letter field names (`distanceBetweenStops`)
    /// have the shape, but their first letters encode a time centuries away.
    public static func isPlausible(_ key: some Collection<UInt8>) -> Bool {
        guard isValid(key) else { return false }
        let ms = encodedTime(key)
        return ms >= plausibleSince && ms < plausibleUntil
    }

    /// 2012-01-01T00:00:00Z and 64^7 ms (2109-05-15), in milliseconds.
    private static let plausibleSince: Int64 = 1_325_376_000_000
    private static let plausibleUntil: Int64 = 4_398_046_511_104

    /// The creation time in milliseconds since 1970 encoded in `key`, or `nil` when `key` is not a push ID.
    public static func timestamp(_ key: String) -> Int64? {
        isValid(key.utf8) ? encodedTime(key.utf8) : nil
    }

    /// The time the first 8 characters of a key of push-ID shape encode.
    private static func encodedTime(_ key: some Collection<UInt8>) -> Int64 {
        key.prefix(8).reduce(0) { $0 * 64 + Int64(values[Int($1)]) }
    }
}
