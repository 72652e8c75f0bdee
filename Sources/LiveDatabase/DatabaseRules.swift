import Foundation

/// A database's security rules over REST, byte for byte: "a GET request to the /.settings/rules.json
/// path" reads them, "a PUT request to the /.settings/rules.json path" replaces them all
/// (firebase.google.com/docs/database/rest/app-management, linked from the REST reference,
/// firebase.google.com/docs/reference/rest/database). They are at the database's root whatever
/// path a URL names.
public enum DatabaseRules {
    /// The rules as the database returns them (comments included).
    public static func read(_ database: DatabaseURL, client: DatabaseClient) async throws -> [UInt8] {
        try await client.get(database.root, [".settings", "rules"])
    }

    /// Replaces the rules with `rules`, as given.
    public static func write(_ rules: [UInt8], to database: DatabaseURL, client: DatabaseClient) async throws {
        _ = try await client.put(database.root, [".settings", "rules"], body: rules)
    }

    /// The lines that differ between two rules files, for people: `-N: line` for a line of `old`
    /// that is not in `new`, `+N: line` for one of `new` not in `old` (N counts from 1), from a
    /// longest common subsequence of lines. `nil` when the files are too large to compare this way
    /// (rules files are at most 256 KB; a million line pairs are compared at most).
    public static func lineDiff(old: [UInt8], new: [UInt8]) -> [String]? {
        let a = lines(old), b = lines(new)
        guard a.count * b.count <= 1_000_000 else { return nil }
        // common[i][j]: the longest common subsequence of a[i...] and b[j...].
        var common = [[Int32]](repeating: [Int32](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in stride(from: a.count - 1, through: 0, by: -1) {
            for j in stride(from: b.count - 1, through: 0, by: -1) {
                common[i][j] = a[i] == b[j] ? common[i + 1][j + 1] + 1 : max(common[i + 1][j], common[i][j + 1])
            }
        }
        var out: [String] = []
        var i = 0, j = 0
        while i < a.count || j < b.count {
            if i < a.count, j < b.count, a[i] == b[j] {
                i += 1
                j += 1
            } else if j == b.count || (i < a.count && common[i + 1][j] >= common[i][j + 1]) {
                out.append("-\(i + 1): \(a[i])")
                i += 1
            } else {
                out.append("+\(j + 1): \(b[j])")
                j += 1
            }
        }
        return out
    }

    private static func lines(_ bytes: [UInt8]) -> [String] {
        String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map {
            String($0.hasSuffix("\r") ? $0.dropLast() : $0)
        }
    }
}
