import JSONStream

/// What a dump holds, gathered in one streaming pass: paths collapsed into patterns (push IDs and
/// other variable keys become `{id}`), count, bytes and value types per pattern, depth, the longest
/// key, keys the Realtime Database forbids, and strings that look like base64 images.
public struct DumpStats: Sendable {
    /// Statistics of one path pattern.
    public struct PatternStats: Sendable {
        public var pattern: String
        public var count: Int
        public var bytes: Int64
        /// Value type name (`object`, `array`, `string`, `number`, `boolean`, `null`) -> count.
        public var types: [String: Int]
    }

    public var patterns: [PatternStats]
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

    /// Reads the whole dump from `source` and gathers its statistics.
    public static func gather(from source: JSONByteSource, sourceName: String? = nil, onValue: (() -> Void)? = nil) throws -> DumpStats {
        let gatherer = StatsGatherer(source: source, sourceName: sourceName, onValue: onValue)
        return try gatherer.run()
    }
}

/// The tree of patterns built while reading; a node whose literal children grow past a threshold
/// collapses them into one `{id}` child.
private final class PatternNode {
    var count = 0
    var bytes: Int64 = 0
    var types: [String: Int] = [:]
    var children: [String: PatternNode] = [:]
    var variable: PatternNode?
    var collapsed = false

    static let collapseThreshold = 64
    static let variableName = "{id}"

    func child(_ key: String) -> PatternNode {
        if collapsed || PatternNode.isVariableKey(key) {
            if let v = variable { return v }
            let v = PatternNode()
            variable = v
            return v
        }
        if let c = children[key] { return c }
        let c = PatternNode()
        children[key] = c
        if children.count > PatternNode.collapseThreshold { collapse() }
        return collapsed ? variable! : c
    }

    /// Merges every literal child into the variable child.
    private func collapse() {
        collapsed = true
        let v = variable ?? PatternNode()
        for c in children.values { v.merge(c) }
        children = [:]
        variable = v
    }

    func merge(_ other: PatternNode) {
        count += other.count
        bytes += other.bytes
        for (t, n) in other.types { types[t, default: 0] += n }
        for (k, c) in other.children { child(k).merge(c) }
        if let ov = other.variable {
            if variable == nil { variable = PatternNode() }
            variable!.merge(ov)
        }
    }

    /// Push IDs (20 characters, `-0-9A-Z_a-z`) and array indices are variable keys from the start.
    static func isVariableKey(_ key: String) -> Bool {
        let u = key.utf8
        if u.count == 20 && u.allSatisfy(isPushIDByte) { return true }
        if !u.isEmpty && u.count <= 10 && u.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) { return true }
        return false
    }

    static func isPushIDByte(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x2D || b == 0x5F
    }

    func flatten(prefix: String, into out: inout [DumpStats.PatternStats]) {
        out.append(DumpStats.PatternStats(pattern: prefix.isEmpty ? "/" : prefix, count: count, bytes: bytes, types: types))
        for k in children.keys.sorted(by: DatabaseKeyOrder.less) {
            children[k]!.flatten(prefix: prefix + "/" + JSONPointer.escape(k), into: &out)
        }
        variable?.flatten(prefix: prefix + "/" + PatternNode.variableName, into: &out)
    }
}

private final class StatsGatherer {
    private let reader: JSONReader
    private let onValue: (() -> Void)?
    private let root = PatternNode()
    private var stats = DumpStats(patterns: [], totalBytes: 0, maxDepth: 0, maxDepthPointer: "", longestKeyBytes: 0,
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
                root.flatten(prefix: "", into: &stats.patterns)
                return stats
            case .name:
                checkKey(reader.bytes)
                named = stack[stack.count - 1].node.child(reader.stringValue)
                continue
            case .endObject, .endArray:
                let top = stack.removeLast()
                top.node.bytes += reader.bytesConsumed - top.start
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
        let forbidden = b.isEmpty || b.count > 768 || b.contains { c in
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
