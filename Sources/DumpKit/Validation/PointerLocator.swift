import JSONStream

/// Finds where values start in a dump, given their paths, in one streaming pass that descends only
/// into the containers on the way to a wanted path, skips everything else, and stops once every
/// path is found.
///
/// Findings made after the dump was read (security rules; schemas over a dump held whole for the
/// rules) learn their input line:column this way.
enum PointerLocator {
    /// The 1-based line and column of each of `paths` that exists in the dump.
    static func locate(_ paths: Set<[String]>, in source: JSONByteSource, sourceName: String?) throws -> [[String]: (
        line: Int, column: Int
    )] {
        var prefixes = Set<[String]>()
        for p in paths {
            for n in 0..<p.count { prefixes.insert(Array(p.prefix(n))) }
        }
        let reader = JSONReader(source: source, sourceName: sourceName)
        var found: [[String]: (line: Int, column: Int)] = [:]
        var path: [String] = []
        /// Reads the value at `path`; returns true once every path is found (nothing more is read).
        func visit() throws -> Bool {
            let kind = try reader.peek()
            if paths.contains(path) {
                found[path] = reader.location
                if found.count == paths.count { return true }
            }
            guard kind == .beginObject || kind == .beginArray, prefixes.contains(path) else {
                try reader.skipValue()
                return false
            }
            try reader.next()
            var index = 0
            while true {
                let next = try reader.peek()
                if next == .endObject || next == .endArray {
                    try reader.next()
                    return false
                }
                if kind == .beginObject {
                    try reader.next()
                    path.append(reader.stringValue)
                } else {
                    path.append(String(index))
                    index += 1
                }
                if try visit() { return true }
                path.removeLast()
            }
        }
        if !paths.isEmpty { _ = try visit() }
        return found
    }
}
