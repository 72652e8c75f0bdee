#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Chooses objects or archive entries by glob patterns on their names (`--include`, `--exclude`).
///
/// Patterns are shell globs (`fnmatch` without `FNM_PATHNAME`): `*` and `?` also match `/`, so
/// `*.json` matches JSON files at any depth and `v1/*` everything under `v1/`. A pattern also matches
/// every path below a directory it matches: `v1/todolist` selects `v1/todolist/...`.
public struct PathFilter: Sendable {
    /// Patterns of which a path must match one (all paths when empty).
    public var include: [String]
    /// Patterns of which a path must match none.
    public var exclude: [String]

    public init(include: [String] = [], exclude: [String] = []) {
        self.include = include
        self.exclude = exclude
    }

    /// Whether `path` is selected.
    public func matches(_ path: String) -> Bool {
        (include.isEmpty || include.contains { Self.glob($0, matches: path) }) && !exclude.contains { Self.glob($0, matches: path) }
    }

    /// Whether `pattern` matches `path` or one of the directories above it.
    static func glob(_ pattern: String, matches path: String) -> Bool {
        if fnmatch(pattern, path, 0) == 0 { return true }
        var prefix = Substring(path)
        while let slash = prefix.lastIndex(of: "/") {
            prefix = prefix[..<slash]
            if fnmatch(pattern, String(prefix), 0) == 0 { return true }
        }
        return false
    }
}
