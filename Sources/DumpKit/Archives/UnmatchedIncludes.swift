/// `--include` patterns that match no object of a bucket. `archive` and `backup` exit 1 for them (a
/// typo would otherwise leave objects out silently); thrown, before anything is written, when no
/// object is left to archive.
public struct UnmatchedIncludes: DataError, CustomStringConvertible, Sendable {
    public let patterns: [String]
    /// The bucket directory.
    public let bucket: String

    public init(patterns: [String], bucket: String) {
        self.patterns = patterns
        self.bucket = bucket
    }

    public var description: String {
        let list = patterns.map { "'\($0)'" }.joined(separator: ", ")
        return "--include \(list) \(patterns.count == 1 ? "matches" : "match") no object in \(bucket)"
    }
}
