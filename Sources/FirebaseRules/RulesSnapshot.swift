import JSONStream

/// What a node of the database holds, as rules see it.
public enum RulesNodeContent: Equatable, Sendable {
    /// No data: absent, `null`, `{}`, or an object whose members are all null or empty.
    case absent
    /// A primitive value (an export-format `{".value": v}` already unwrapped).
    case leaf(JSONValue)
    /// An object or array with at least one present child.
    case branch
}

/// Where `root`, `data`, `newData`, `child()`, `parent()` and friends read the database from.
///
/// Paths are unescaped keys from the root. Values are as stored: export-format dumps may carry
/// `".priority"` members and `{".value": v, ".priority": p}` leaves, which the default implementations
/// interpret; JSON arrays are read as objects keyed `"0"`, `"1"`, ... with `null` holes absent.
///
/// Only `value(at:)` is required. A source for dumps larger than memory (`OnDiskRulesSource`) also
/// implements `content(at:)`, `childKeys(at:)`, `forEachChildKey(at:_:)` and `priority(at:)` without
/// materialising subtrees:
/// evaluation calls those for every rule, while `value(at:)` is needed only when a rule compares the
/// `val()` of a node with children to another object.
public protocol RulesSnapshotSource: AnyObject {
    /// The stored value at `path`, or `nil` when nothing is there.
    func value(at path: [String]) -> JSONValue?
    /// Whether the node at `path` is absent, a leaf or has children.
    func content(at path: [String]) -> RulesNodeContent
    /// The keys of the present children at `path`, in stored order, without `.priority`/`.value`.
    func childKeys(at path: [String]) -> [String]
    /// The node's priority, or `nil`.
    func priority(at path: [String]) -> JSONValue?
    /// Calls `body` with each key `childKeys(at:)` returns, without collecting them first.
    func forEachChildKey(at path: [String], _ body: (String) -> Void)
}

extension RulesSnapshotSource {
    public func content(at path: [String]) -> RulesNodeContent {
        value(at: path).map(RulesSnapshot.content(of:)) ?? .absent
    }

    public func childKeys(at path: [String]) -> [String] {
        value(at: path).map(RulesSnapshot.childKeys(of:)) ?? []
    }

    public func priority(at path: [String]) -> JSONValue? {
        value(at: path)?.objectValue?[".priority"]
    }

    public func forEachChildKey(at path: [String], _ body: (String) -> Void) {
        childKeys(at: path).forEach(body)
    }
}

/// A snapshot source over a `JSONValue` held in memory.
///
/// Objects with many members get a key index on first lookup, so rules that look up siblings
/// (`root.child('users').child($uid)`) stay fast on large dumps.
public final class InMemoryRulesSource: RulesSnapshotSource {
    /// The whole database.
    public let root: JSONValue
    private var indexes: [[String]: [String: Int]] = [:]
    private static let indexThreshold = 16

    public init(_ root: JSONValue) {
        self.root = root
    }

    public func value(at path: [String]) -> JSONValue? {
        var current = root
        for (depth, key) in path.enumerated() {
            switch current {
            case .object(let object):
                if object.count > Self.indexThreshold {
                    let prefix = Array(path[..<depth])
                    let index = indexes[prefix] ?? buildIndex(object, at: prefix)
                    guard let i = index[key] else { return nil }
                    current = object.members[i].value
                } else {
                    guard let v = object[key] else { return nil }
                    current = v
                }
            case .array:
                guard let v = current[segment: key] else { return nil }
                current = v
            default:
                return nil
            }
        }
        return current
    }

    private func buildIndex(_ object: JSONObject, at prefix: [String]) -> [String: Int] {
        var index: [String: Int] = [:]
        index.reserveCapacity(object.count)
        for (i, member) in object.members.enumerated() where index[member.key] == nil {
            index[member.key] = i
        }
        indexes[prefix] = index
        return index
    }
}

/// A `RulesSnapshot` is a location in a source: what `root`, `data`, `newData` and `child()` return.
public struct RulesSnapshot {
    public let source: any RulesSnapshotSource
    /// Unescaped keys from the root. `child('')` adds an empty key, which no data has.
    public let path: [String]

    public init(source: any RulesSnapshotSource, path: [String] = []) {
        self.source = source
        self.path = path
    }

    /// The snapshot at a relative `/`-separated path; empty segments are ignored.
    func child(_ relativePath: String) -> RulesSnapshot {
        let keys = relativePath.split(separator: "/").map(String.init)
        return RulesSnapshot(source: source, path: path + (keys.isEmpty ? [""] : keys))
    }

    /// The parent snapshot; the root has none.
    func parent() throws(RulesEvaluationError) -> RulesSnapshot {
        guard !path.isEmpty else { throw RulesEvaluationError("the root has no parent") }
        return RulesSnapshot(source: source, path: Array(path.dropLast()))
    }

    var content: RulesNodeContent { source.content(at: path) }

    /// `val()`: the primitive, `null` when absent, or a lazily materialised object.
    var rulesValue: RulesValue {
        switch content {
        case .absent: return .null
        case .leaf(let v): return RulesValue(v)
        case .branch: return .node(self)
        }
    }

    /// The node's value without export wrappers, or `nil` when absent.
    var plainValue: JSONValue? {
        source.value(at: path).flatMap(Self.plain)
    }

    // MARK: - Interpreting stored values

    /// Whether a stored value is a leaf, a branch or absent.
    package static func content(of value: JSONValue) -> RulesNodeContent {
        switch value {
        case .null: return .absent
        case .object(let object):
            if let wrapped = object[".value"] { return wrapped.isNull ? .absent : .leaf(wrapped) }
            return object.members.contains { isPresentChild($0.key, $0.value) } ? .branch : .absent
        case .array(let items):
            return items.contains { isPresent($0) } ? .branch : .absent
        default: return .leaf(value)
        }
    }

    /// The keys of a stored value's present children.
    package static func childKeys(of value: JSONValue) -> [String] {
        switch value {
        case .object(let object):
            if object[".value"] != nil { return [] }
            return object.members.filter { isPresentChild($0.key, $0.value) }.map(\.key)
        case .array(let items):
            return items.indices.filter { isPresent(items[$0]) }.map(String.init)
        default: return []
        }
    }

    private static func isPresentChild(_ key: String, _ value: JSONValue) -> Bool {
        key != ".priority" && key != ".value" && isPresent(value)
    }

    private static func isPresent(_ value: JSONValue) -> Bool {
        switch value {
        case .null: return false
        case .object(let o): return !o.isEmpty
        case .array(let a): return !a.isEmpty
        default: return true
        }
    }

    /// A stored value as `val()` sees it, in a canonical form that compares by content: priorities
    /// dropped, `.value` unwrapped, arrays as objects, absent children removed, members in database
    /// order, numbers in shortest form; `nil` when nothing is left.
    static func plain(_ value: JSONValue) -> JSONValue? {
        switch value {
        case .null: return nil
        case .number(let n): return .number(JSONNumber(n.doubleValue))
        case .object(let object):
            if let wrapped = object[".value"] { return plain(wrapped) }
            var out = JSONObject()
            for member in object.members where member.key != ".priority" {
                if let v = plain(member.value) { out.members.append(.init(key: member.key, value: v)) }
            }
            return out.isEmpty ? nil : .object(out.sortedByDatabaseOrder())
        case .array(let items):
            var out = JSONObject()
            for (i, item) in items.enumerated() {
                if let v = plain(item) { out.members.append(.init(key: String(i), value: v)) }
            }
            return out.isEmpty ? nil : .object(out)
        default: return value
        }
    }
}
