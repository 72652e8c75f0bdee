/// What a variable key looks like; it names the key's capture in a `stats` pattern.
enum KeyShape: Equatable {
    /// A push ID: 20 characters of `-0-9A-Z_a-z` encoding a time from 2012 to 2109 (`PushID.isPlausible`),
    /// not all digits.
    case pushID
    /// A Firebase Auth UID: 28 characters of `A-Za-z0-9`, at least one a digit (or beside such keys).
    case uid
    /// Up to 20 digits: array positions, numeric ids, timestamps.
    case number
    /// An e-mail address as a key (`ann@example,com`: keys cannot hold `.`).
    case email
    /// Keys that are names one by one, collapsed because there are many of them or because their
    /// values have the same members.
    case key

    /// The shape of a key that is variable on its own, or nil for a key that may be a field name.
    init?(_ key: String) {
        let u = key.utf8
        if !u.isEmpty && u.count <= 20 && u.allSatisfy(Self.isDigit) {
            self = .number
        } else if PushID.isPlausible(u) {
            self = .pushID
        } else if u.count == 28 && u.allSatisfy(Self.isAlphanumeric) && u.contains(where: Self.isDigit) {
            self = .uid
        } else if let at = u.firstIndex(of: UInt8(ascii: "@")), at != u.startIndex, u.index(after: at) != u.endIndex,
            !u[u.index(after: at)...].contains(UInt8(ascii: "@")), !u.contains(UInt8(ascii: " "))
        {
            self = .email
        } else {
            return nil
        }
    }

    /// A key a UID-shaped sibling makes a UID too: 28 letters and digits, none of them a digit.
    static func looksLikeUID(_ key: String) -> Bool {
        key.utf8.count == 28 && key.utf8.allSatisfy(isAlphanumeric)
    }

    /// The capture's name in patterns (`{uid}`); a second one on a path is numbered (`{id2}`).
    var captureName: String {
        switch self {
        case .pushID: return "id"
        case .uid: return "uid"
        case .number: return "n"
        case .email: return "email"
        case .key: return "key"
        }
    }

    private static func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }
    private static func isAlphanumeric(_ b: UInt8) -> Bool { isDigit(b) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) }
}
