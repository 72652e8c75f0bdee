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

    /// The creation time in milliseconds since 1970 encoded in `key`, or `nil` when `key` is not a push ID.
    public static func timestamp(_ key: String) -> Int64? {
        let bytes = Array(key.utf8)
        guard isValid(bytes) else { return nil }
        var ms: Int64 = 0
        for b in bytes.prefix(8) { ms = ms * 64 + Int64(values[Int(b)]) }
        return ms
    }
}
