import JSONStream

/// What a dump holds, gathered in one streaming pass: paths collapsed into patterns (ids become
/// named captures: `{id}` push IDs, `{uid}` Auth UIDs, `{n}` numbers, `{email}`, `{key}` many or
/// same-shaped siblings), count, bytes and value types per pattern, the record patterns to use with
/// `--records`, the largest records, depth, the longest key, keys the Realtime Database forbids,
/// and strings that look like base64 images.
public struct DumpStats: Sendable {
    /// Statistics of one path pattern.
    public struct PatternStats: Sendable {
        public var pattern: String
        public var count: Int
        public var bytes: Int64
        /// Value type name (`object`, `array`, `string`, `number`, `boolean`, `null`) -> count.
        public var types: [String: Int]
        /// Strings at this pattern that look like base64 files (what `extract-blobs` would move out).
        public var files: Int
        /// The bytes of those strings (their text, as `base64ImageBytes` counts them).
        public var fileBytes: Int64
    }

    /// A value and its size in the dump.
    public struct SizedValue: Sendable, Equatable {
        public var pointer: String
        public var bytes: Int64
    }

    public var patterns: [PatternStats]
    /// Patterns of objects keyed by ids: good `--records` choices (see `PatternNode.recordPatterns`).
    public var recordPatterns: [String]
    /// The largest values at the record patterns, largest first (at most `largestRecordCount`).
    public var largestRecords: [SizedValue]
    public var totalBytes: Int64
    public var maxDepth: Int
    public var maxDepthPointer: String
    public var longestKeyBytes: Int
    public var longestKeyPointer: String
    /// Keys that the Realtime Database refuses, with their pointers (the first 20).
    public var forbiddenKeys: [String]
    public var forbiddenKeyCount: Int
    /// Strings that look like base64-encoded images or documents.
    public var base64Images: Int
    public var base64ImageBytes: Int64

    /// How many of the largest records are kept.
    public static let largestRecordCount = 10

    /// Reads the whole dump from `source` and gathers its statistics.
    public static func gather(from source: JSONByteSource, sourceName: String? = nil, onValue: (() -> Void)? = nil) throws -> DumpStats {
        let gatherer = StatsGatherer(source: source, sourceName: sourceName, onValue: onValue)
        return try gatherer.run()
    }
}

private final class StatsGatherer {
    private let reader: JSONReader
    private let onValue: (() -> Void)?
    private let root = PatternNode()
    private var stats = DumpStats(
        patterns: [], recordPatterns: [], largestRecords: [], totalBytes: 0, maxDepth: 0, maxDepthPointer: "", longestKeyBytes: 0,
        longestKeyPointer: "", forbiddenKeys: [], forbiddenKeyCount: 0, base64Images: 0, base64ImageBytes: 0)

    init(source: JSONByteSource, sourceName: String?, onValue: (() -> Void)?) {
        reader = JSONReader(source: source, options: .init(maxDepth: 4096), sourceName: sourceName)
        self.onValue = onValue
    }

    func run() throws -> DumpStats {
        var stack: [(node: PatternNode, start: Int64, isObject: Bool)] = []
        var named = root
        while true {
            let k = try reader.next()
            switch k {
            case .end:
                stats.totalBytes = reader.bytesConsumed
                root.finish()
                root.flatten(prefix: "", into: &stats.patterns)
                stats.recordPatterns = root.recordPatterns(prefix: "").patterns
                var largest: [DumpStats.SizedValue] = []
                root.largestValues(at: Set(stats.recordPatterns), prefix: "", into: &largest)
                stats.largestRecords = Array(largest.sorted(by: PatternNode.isLarger).prefix(DumpStats.largestRecordCount))
                return stats
            case .name:
                checkKey(reader.bytes)
                named = stack[stack.count - 1].node.child(reader.stringValue)
                continue
            case .endObject, .endArray:
                let top = stack.removeLast()
                let bytes = reader.bytesConsumed - top.start
                top.node.bytes += bytes
                top.node.noteContainer(bytes: bytes, pointer: { reader.pointer })
                continue
            default:
                break
            }
            let node: PatternNode
            if let top = stack.last {
                node = top.isObject ? named : top.node.child("0")
            } else {
                node = root
            }
            switch k {
            case .beginObject, .beginArray:
                count(node, k == .beginObject ? "object" : "array")
                stack.append((node, reader.offset, k == .beginObject))
                if reader.depth > stats.maxDepth {
                    stats.maxDepth = reader.depth
                    stats.maxDepthPointer = reader.pointer
                }
            case .string:
                count(node, "string")
                node.bytes += reader.bytesConsumed - reader.offset
                if Base64Sniffer.looksLikeEmbeddedFile(reader.bytes) {
                    stats.base64Images += 1
                    stats.base64ImageBytes += Int64(reader.bytes.count)
                    node.files += 1
                    node.fileBytes += Int64(reader.bytes.count)
                }
            default:
                count(node, k == .number ? "number" : k == .null ? "null" : "boolean")
                node.bytes += reader.bytesConsumed - reader.offset
            }
            onValue?()
        }
    }

    private func count(_ node: PatternNode, _ type: String) {
        node.count += 1
        node.types[type, default: 0] += 1
    }

    private func checkKey(_ b: UnsafeRawBufferPointer) {
        if b.count > stats.longestKeyBytes {
            stats.longestKeyBytes = b.count
            stats.longestKeyPointer = reader.pointer
        }
        let forbidden =
            b.isEmpty || b.count > 768
            || b.contains { c in
                c < 0x20 || c == 0x7F || c == UInt8(ascii: ".") || c == UInt8(ascii: "$") || c == UInt8(ascii: "#")
                    || c == UInt8(ascii: "[") || c == UInt8(ascii: "]") || c == UInt8(ascii: "/")
            }
        if forbidden {
            // Priorities and values of export-format dumps are allowed.
            let s = String(decoding: b, as: UTF8.self)
            if s == ".priority" || s == ".value" || s == ".sv" { return }
            stats.forbiddenKeyCount += 1
            if stats.forbiddenKeys.count < 20 { stats.forbiddenKeys.append(reader.pointer) }
        }
    }
}
