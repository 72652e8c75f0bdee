/// The two shapes a dump can take on disk: one JSON tree, or NDJSON records.
public enum DumpFormat: String, Sendable, CaseIterable {
    case json, ndjson

    /// The format a file name suggests (`.ndjson`/`.jsonl`, also before a compression suffix).
    public static func forPath(_ path: String) -> DumpFormat? {
        var name = path.lowercased()
        for suffix in [".gz", ".zst", ".xz", ".bz2"] where name.hasSuffix(suffix) {
            name.removeLast(suffix.count)
        }
        if name.hasSuffix(".ndjson") || name.hasSuffix(".jsonl") { return .ndjson }
        if name.hasSuffix(".json") { return .json }
        return nil
    }
}
