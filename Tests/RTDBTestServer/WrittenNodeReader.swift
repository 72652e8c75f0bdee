import JSONStream

/// Reads a written JSON value straight into the node it becomes, with no `JSONValue` in between:
/// nulls and empty containers vanish ("Data Structure", firebase.google.com/docs/database/web/structure-data),
/// arrays become integer keys, `{".value", ".priority"}` is a leaf with a priority and `{".sv": ...}`
/// a server value resolved against the data in `existing` (firebase.google.com/docs/reference/rest/database,
/// "Server Values"), looked up only then.
///
/// A value is always read to its end, so that a JSON syntax error after a refused value is still
/// found (the database answers a body it cannot parse before judging its data); the first refusal,
/// in the order the checks are made, is kept in `refusal` and the node built then is worthless.
struct WrittenNodeReader {
    let reader: JSONReader
    let now: Int64
    /// The database's root before the write.
    let existing: DataNode
    private(set) var refusal: DataNode.WriteRefusal?
    /// The keys from the root to the value being read, for refusals' JSON Pointers.
    private var path: [String] = []
    /// The children of each open container so far, by depth, reused: a container's dictionary is
    /// made once at its end with room for all of them, not grown (and rehashed) key by key.
    private var children: [[(key: String, node: DataNode)]] = []
    private var depth = 0

    init(reader: JSONReader, now: Int64, existing: DataNode) {
        self.reader = reader
        self.now = now
        self.existing = existing
    }

    /// The node the next value of `reader` becomes when written at `location`.
    mutating func node(at location: [String]) throws -> DataNode {
        path = location
        return try read(reader.next())
    }

    private var pointer: String { JSONPointer.string(path) }

    private mutating func refuse(_ message: String) {
        if refusal == nil { refusal = DataNode.WriteRefusal(message: message) }
    }

    /// The node of the value that starts with `token`.
    private mutating func read(_ token: JSONToken) throws -> DataNode {
        var node = DataNode()
        switch token {
        case .null: break
        case .string: node.leaf = .string(reader.stringValue)
        case .number: node.leaf = .number(JSONNumber(text: reader.stringValue))
        case .true: node.leaf = .bool(true)
        case .false: node.leaf = .bool(false)
        case .beginArray:
            let level = enter()
            defer { depth -= 1 }
            var index = 0
            while case let token = try reader.next(), token != .endArray {
                let key = String(index)
                index += 1
                path.append(key)
                let child = try read(token)
                path.removeLast()
                if child.exists { children[level].append((key, child)) }
            }
            node.children = takeChildren(level)
        case .beginObject:
            return try readObject()
        case .name, .endObject, .endArray, .end:
            throw reader.error(.unexpectedCharacter, "expected a value")
        }
        return node
    }

    /// The node of an object whose `{` was just read. A server value replaces the whole object;
    /// `.value` may only stand beside `.priority` and must be a leaf; other keys must be valid.
    private mutating func readObject() throws -> DataNode {
        let before = refusal
        let level = enter()
        defer { depth -= 1 }
        var node = DataNode()
        var serverValue: JSONValue?, value: JSONValue?, hasChildren = false
        while try reader.next() == .name {
            let key = reader.stringValue
            switch key {
            // Named twice, the first counts, as the members of an object read whole have it.
            case ".sv":
                let v = try reader.readValue()
                if serverValue == nil { serverValue = v }
            case ".value":
                let v = try reader.readValue()
                if value == nil { value = v }
            case ".priority":
                let priority = try reader.readValue()
                node.priority = priority.isNull ? nil : priority
            default:
                hasChildren = true
                path.append(key)
                if !DataNode.isValidKey(key) { refuse("Invalid data; couldn't parse key beginning at \(pointer)") }
                let child = try read(reader.next())
                path.removeLast()
                if child.exists { children[level].append((key, child)) }
            }
        }
        node.children = takeChildren(level)
        if let serverValue {
            // What else the object holds is not written, nor judged.
            refusal = before
            node = DataNode()
            do {
                node.leaf = try DataNode.serverValue(serverValue, existing: existing.node(at: path[...]), now: now, pointer: pointer)
            } catch let error as DataNode.WriteRefusal {
                refuse(error.message)
            }
            return node
        }
        if let value {
            // These are judged before the children's keys.
            if hasChildren {
                refusal = before
                refuse("Invalid data; .value cannot be set beside other children at \(pointer)")
            } else if DataNode.isContainer(value) {
                refusal = before
                refuse("Invalid data; .value must be a leaf at \(pointer)")
            } else {
                node.leaf = value.isNull ? nil : value
            }
        }
        if !node.exists { node.priority = nil }
        return node
    }

    /// Opens a container: the level of `children` its children go to.
    private mutating func enter() -> Int {
        if children.count == depth { children.append([]) }
        depth += 1
        return depth - 1
    }

    /// The children gathered at `level`, as a dictionary (a repeated key keeps its last value, as
    /// the database does).
    private mutating func takeChildren(_ level: Int) -> [String: DataNode] {
        var dictionary = [String: DataNode](minimumCapacity: children[level].count)
        for (key, node) in children[level] { dictionary[key] = node }
        children[level].removeAll(keepingCapacity: true)
        return dictionary
    }
}
