import JSONStream

/// Counts a location's keys to tell whether the database reads it back as an array: all keys
/// non-negative 32-bit integers, the largest below twice their count (the SDKs' rule,
/// firebase.google.com/blog/posts/2014/04/best-practices-arrays-in-firebase).
struct ArrayKeyCount {
    private(set) var count = 0
    private var integersOnly = true
    private var largest: Int32 = -1

    mutating func add(_ key: String) {
        count += 1
        if let i = DatabaseKeyOrder.integerValue(key.utf8), i >= 0 {
            largest = max(largest, i)
        } else {
            integersOnly = false
        }
    }

    var readsAsArray: Bool { count > 0 && integersOnly && Int(largest) < 2 * count }
}
