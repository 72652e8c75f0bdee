import JSONStream

/// A node of the pattern tree `stats` builds while reading: literal children by key, and one
/// variable child for the keys that are ids (push IDs, UIDs, numbers, e-mails), for all keys once
/// there are more than `collapseThreshold` of them, and (in `finish()`) for siblings of one shape.
final class PatternNode {
    var count = 0
    var bytes: Int64 = 0
    var types: [String: Int] = [:]
    /// Strings that look like base64 files, and their bytes.
    var files = 0
    var fileBytes: Int64 = 0
    /// The largest containers at this node, largest first (at most `DumpStats.largestRecordCount`).
    private var largest: [DumpStats.SizedValue] = []
    private var children: [String: PatternNode] = [:]
    private var variable: PatternNode?
    /// What the keys merged into `variable` look like (`.key` when they differ).
    private var variableShape: KeyShape?
    private var collapsed = false

    static let collapseThreshold = 64

    /// The node for `key` below this one.
    func child(_ key: String) -> PatternNode {
        if let shape = KeyShape(key) ?? (collapsed ? .key : nil) { return variableChild(shape) }
        if let c = children[key] { return c }
        let c = PatternNode()
        children[key] = c
        if children.count > PatternNode.collapseThreshold {
            collapsed = true
            collapse(Array(children.keys), as: .key)
            return variable!
        }
        return c
    }

    private func variableChild(_ shape: KeyShape) -> PatternNode {
        variableShape = variableShape.map { $0 == shape ? $0 : .key } ?? shape
        if let v = variable { return v }
        let v = PatternNode()
        variable = v
        return v
    }

    /// Merges the literal children `keys` into the variable child.
    private func collapse(_ keys: [String], as shape: KeyShape) {
        let v = variableChild(shape)
        for k in keys.sorted() { v.merge(children.removeValue(forKey: k)!) }
    }

    /// Keeps a container of `bytes` among the largest; `pointer` is asked only when it is kept.
    func noteContainer(bytes: Int64, pointer: () -> String) {
        if largest.count == DumpStats.largestRecordCount, bytes <= largest[largest.count - 1].bytes { return }
        keep(DumpStats.SizedValue(pointer: pointer(), bytes: bytes))
    }

    private func keep(_ value: DumpStats.SizedValue) {
        let i = largest.firstIndex { PatternNode.isLarger(value, $0) } ?? largest.count
        largest.insert(value, at: i)
        if largest.count > DumpStats.largestRecordCount { largest.removeLast() }
    }

    /// Larger first; equal sizes in pointer order, so the list does not depend on reading order.
    static func isLarger(_ a: DumpStats.SizedValue, _ b: DumpStats.SizedValue) -> Bool {
        a.bytes != b.bytes ? a.bytes > b.bytes : a.pointer < b.pointer
    }

    func merge(_ other: PatternNode) {
        count += other.count
        bytes += other.bytes
        files += other.files
        fileBytes += other.fileBytes
        for value in other.largest
        where largest.count < DumpStats.largestRecordCount || PatternNode.isLarger(value, largest[largest.count - 1]) {
            keep(value)
        }
        for (t, n) in other.types { types[t, default: 0] += n }
        for (k, c) in other.children { child(k).merge(c) }
        if let ov = other.variable { variableChild(other.variableShape!).merge(ov) }
    }

    /// After reading, bottom-up: literal keys shaped like UIDs join a UID variable child, and
    /// literal children that all have the same members (at least two of them, or any with the
    /// variable child's members) become the variable child (`/dinosaurs/{key}`). The root's
    /// children are left as they are: top-level names matter (`/v1`, `/v2`).
    func finish(isRoot: Bool = true) {
        for c in children.values { c.finish(isRoot: false) }
        variable?.finish(isRoot: false)
        let before = children.count
        if variableShape == .uid {
            let uids = children.keys.filter(KeyShape.looksLikeUID)
            if !uids.isEmpty { collapse(uids, as: .uid) }
        }
        if !isRoot, let members = children.first?.value.memberKeys, !members.isEmpty,
            children.values.allSatisfy({ $0.memberKeys == members })
        {
            if let variable, let shape = variableShape {
                if variable.memberKeys == members { collapse(Array(children.keys), as: shape) }
            } else if children.count >= 2 {
                collapse(Array(children.keys), as: .key)
            }
        }
        if children.count < before { variable?.finish(isRoot: false) }
    }

    /// Whether some literal child holds a string, number, boolean or null.
    private var hasFields: Bool {
        children.values.contains { $0.types.keys.contains { $0 != "object" && $0 != "array" } }
    }

    /// The literal keys below this node.
    private var memberKeys: Set<String> { Set(children.keys) }

    /// Appends this node's pattern and those below it; captures are named after their keys' shape,
    /// numbered when a name repeats on a path.
    func flatten(prefix: String, used: [String: Int] = [:], into out: inout [DumpStats.PatternStats]) {
        out.append(
            DumpStats.PatternStats(
                pattern: prefix.isEmpty ? "/" : prefix, count: count, bytes: bytes, types: types, files: files, fileBytes: fileBytes))
        forEachChild(prefix: prefix, used: used) { node, path, used, _ in node.flatten(prefix: path, used: used, into: &out) }
    }

    /// Appends the largest containers kept at the patterns in `wanted`.
    func largestValues(at wanted: Set<String>, prefix: String, used: [String: Int] = [:], into out: inout [DumpStats.SizedValue]) {
        if wanted.contains(prefix) { out += largest }
        forEachChild(prefix: prefix, used: used) { node, path, used, _ in
            node.largestValues(at: wanted, prefix: path, used: used, into: &out)
        }
    }

    /// The patterns that make good `--records`: objects under a capture that is an id (not a
    /// number) that have fields of their own (`/articles/{id}`, with its comments) or no such
    /// records below them (`/users/{uid}/messages/{id}`, not `/users/{uid}` holding only them);
    /// and objects under a number (list items) with no record pattern above or below them.
    /// Also says whether the subtree holds an object under an id.
    func recordPatterns(prefix: String, used: [String: Int] = [:], shape: KeyShape? = nil, capturedAbove: Bool = false) -> (
        patterns: [String], hasIDRecord: Bool
    ) {
        let isObject = (types["object"] ?? 0) > 0
        let isIDRecord = isObject && shape != nil && shape != .number
        let isListItem = isObject && shape == .number
        var below: [String] = []
        var idRecordBelow = false
        forEachChild(prefix: prefix, used: used) { node, path, used, shape in
            let r = node.recordPatterns(prefix: path, used: used, shape: shape, capturedAbove: capturedAbove || isIDRecord || isListItem)
            below += r.patterns
            idRecordBelow = idRecordBelow || r.hasIDRecord
        }
        if isIDRecord { return (idRecordBelow && !hasFields ? below : [prefix], true) }
        if isListItem && !capturedAbove && !idRecordBelow { return ([prefix], false) }
        return (below, idRecordBelow)
    }

    /// Calls `body` with each child in the database's key order, the variable child last, with its
    /// path, the capture names used on it and the shape of its keys (nil for a literal child).
    private func forEachChild(prefix: String, used: [String: Int], _ body: (PatternNode, String, [String: Int], KeyShape?) -> Void) {
        for k in children.keys.sorted(by: DatabaseKeyOrder.less) {
            body(children[k]!, prefix + "/" + JSONPointer.escape(k), used, nil)
        }
        if let variable, let shape = variableShape {
            var used = used
            let base = shape.captureName
            let n = used[base, default: 0] + 1
            used[base] = n
            body(variable, prefix + "/{" + base + (n == 1 ? "" : String(n)) + "}", used, shape)
        }
    }
}
