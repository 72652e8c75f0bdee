import JSONStream

/// One location of the test server's database: a leaf value or children, and an optional priority.
///
/// The Realtime Database has no empty objects and no nulls: writing either removes the location
/// ("Data Structure", firebase.google.com/docs/database/web/structure-data), so a node with neither
/// leaf nor children does not exist. Arrays are stored as objects with integer keys and read back as
/// arrays when the keys are dense enough (firebase.google.com/blog/posts/2014/04/best-practices-arrays-in-firebase).
struct DataNode: Sendable {
    /// The value of a leaf (string, number or boolean); `nil` for an object or nothing.
    var leaf: JSONValue?
    var children: [String: DataNode] = [:]
    /// Set with `.priority`, returned only with `format=export`.
    var priority: JSONValue?

    var exists: Bool { leaf != nil || !children.isEmpty }

    /// A write that the database refuses (sent back as `400 {"error": ...}`).
    struct WriteRefusal: Error {
        let message: String
    }

    init() {}

    static func isContainer(_ v: JSONValue) -> Bool {
        switch v {
        case .array, .object: return true
        default: return false
        }
    }

    /// `{".sv": "timestamp"}` and `{".sv": {"increment": n}}`.
    static func serverValue(_ sv: JSONValue, existing: DataNode?, now: Int64, pointer: String) throws -> JSONValue {
        if sv.stringValue == "timestamp" { return .number(JSONNumber(now)) }
        if let delta = sv.objectValue?["increment"]?.numberValue {
            let base = existing?.leaf?.numberValue
            if let a = base?.int64Value ?? (base == nil ? 0 : nil), let b = delta.int64Value {
                return .number(JSONNumber(a + b))
            }
            return .number(JSONNumber((base?.doubleValue ?? 0) + delta.doubleValue))
        }
        throw WriteRefusal(message: "Invalid data; unknown server value at \(pointer)")
    }

    /// Keys: non-empty, at most 768 bytes, none of `. $ # [ ] /` nor ASCII control characters
    /// (firebase.google.com/docs/database/usage/limits, "Data Tree").
    static func isValidKey(_ key: String) -> Bool {
        let bad = key.utf8.contains { b in
            b < 0x20 || b == 0x7F || b == UInt8(ascii: ".") || b == UInt8(ascii: "$") || b == UInt8(ascii: "#")
                || b == UInt8(ascii: "[") || b == UInt8(ascii: "]") || b == UInt8(ascii: "/")
        }
        return !key.isEmpty && key.utf8.count <= 768 && !bad
    }

    /// The node at `path`, or `nil`.
    func node(at path: ArraySlice<String>) -> DataNode? {
        guard let first = path.first else { return exists ? self : nil }
        if first == ".priority", path.count == 1 {
            guard let priority else { return nil }
            var p = DataNode()
            p.leaf = priority
            return p
        }
        return children[first]?.node(at: path.dropFirst())
    }

    /// Replaces the location at `path` with `node`; empty objects left behind vanish. Returns
    /// whether this node still exists.
    @discardableResult
    mutating func set(_ path: ArraySlice<String>, to node: DataNode) -> Bool {
        guard let first = path.first else {
            self = node
            return exists
        }
        if first == ".priority", path.count == 1 {
            priority = node.leaf
            return exists
        }
        // Writing below a leaf turns it into an object. The child is changed in place (no copy of
        // its children), with one lookup of its key unless it vanishes.
        leaf = nil
        if !children[first, default: DataNode()].set(path.dropFirst(), to: node) { children[first] = nil }
        if !exists { priority = nil }
        return exists
    }

    /// The children's keys in the database's order.
    var sortedKeys: [String] { children.keys.sorted(by: DatabaseKeyOrder.less) }

    /// Whether the children read back as an array: all keys non-negative integers and the largest
    /// below twice their count (the SDKs' rule; not in export format, where `.priority` may sit beside them).
    var readsAsArray: Bool {
        var maxKey: Int32 = -1
        for key in children.keys {
            guard let i = DatabaseKeyOrder.integerValue(key.utf8), i >= 0 else { return false }
            maxKey = max(maxKey, i)
        }
        return !children.isEmpty && Int(maxKey) < 2 * children.count
    }

    /// Writes the node as a GET returns it: compact, members in the database's key order.
    func write(to writer: JSONWriter, export: Bool) throws {
        if let leaf {
            if export, let priority {
                try writer.beginObject()
                try writer.name(".priority")
                try writer.value(priority)
                try writer.name(".value")
                try writer.value(leaf)
                try writer.endObject()
            } else {
                try writer.value(leaf)
            }
            return
        }
        guard exists else {
            try writer.null()
            return
        }
        if !export, readsAsArray {
            try writer.beginArray()
            var next: Int32 = 0
            for key in sortedKeys {
                let index = DatabaseKeyOrder.integerValue(key.utf8)!
                while next < index {
                    try writer.null()
                    next += 1
                }
                try children[key]!.write(to: writer, export: export)
                next += 1
            }
            try writer.endArray()
            return
        }
        // `.priority` takes its place among the keys in the database's order, as a canonical dump has it.
        var keys = sortedKeys
        if export, priority != nil {
            keys.insert(".priority", at: keys.firstIndex { DatabaseKeyOrder.less(".priority", $0) } ?? keys.count)
        }
        try writer.beginObject()
        for key in keys {
            try writer.name(key)
            if key == ".priority", let priority {
                try writer.value(priority)
            } else {
                try children[key]!.write(to: writer, export: export)
            }
        }
        try writer.endObject()
    }
}
