import JSONStream

/// Reads typed values out of plan nodes and turns every mistake into a `PlanError` that names the
/// file, the line and column, and the step being read.
struct PlanDecoder {
    /// The plan file's name, for messages.
    let file: String
    /// The step being read (1-based) and its name.
    var step: Int?
    var stepName: String?

    /// An error at `location` inside the current step.
    func error(_ location: PlanLocation?, _ message: String) -> PlanError {
        PlanError(file: file, line: location?.line, column: location?.column, step: step, stepName: stepName, message: message)
    }

    /// The members of a mapping, refusing duplicate keys.
    func mapping(_ node: PlanNode, _ what: String) throws(PlanError) -> [(key: String, keyNode: PlanNode, value: PlanNode)] {
        guard case .mapping(let pairs) = node.content else { throw error(node.location, "\(what) must be a mapping, not \(node.kindName)") }
        var seen = Set<String>()
        var out: [(key: String, keyNode: PlanNode, value: PlanNode)] = []
        for (k, v) in pairs {
            guard let key = k.text else { throw error(k.location, "a key in \(what) must be a scalar, not \(k.kindName)") }
            guard seen.insert(key).inserted else { throw error(k.location, "duplicate key '\(key)' in \(what)") }
            out.append((key, k, v))
        }
        return out
    }

    /// The items of a list.
    func list(_ node: PlanNode, _ what: String) throws(PlanError) -> [PlanNode] {
        guard case .sequence(let items) = node.content else { throw error(node.location, "\(what) must be a list, not \(node.kindName)") }
        return items
    }

    /// A scalar's text; numbers and booleans count as their text (`from: 1` is `"1"`).
    func text(_ node: PlanNode, _ what: String) throws(PlanError) -> String {
        guard case .scalar(let v, let t) = node.content, !v.isNull else {
            throw error(node.location, "\(what) must be a string, not \(node.kindName)")
        }
        return t
    }

    /// A string value (quoted or plain text in YAML).
    func string(_ node: PlanNode, _ what: String) throws(PlanError) -> String {
        guard case .scalar(.string(let s), _) = node.content else {
            throw error(node.location, "\(what) must be a string, not \(node.kindName)")
        }
        return s
    }

    func bool(_ node: PlanNode, _ what: String) throws(PlanError) -> Bool {
        guard case .scalar(.bool(let b), _) = node.content else {
            throw error(node.location, "\(what) must be true or false, not \(node.kindName)")
        }
        return b
    }

    func integer(_ node: PlanNode, _ what: String, minimum: Int = 0) throws(PlanError) -> Int {
        guard case .scalar(.number(let n), _) = node.content, let i = Int(n.text), i >= minimum else {
            throw error(node.location, "\(what) must be a whole number of at least \(minimum), not \(node.kindName) '\(node.text ?? "")'")
        }
        return i
    }

    /// One of the allowed words.
    func choice(_ node: PlanNode, _ what: String, _ allowed: [String]) throws(PlanError) -> String {
        let s = try string(node, what)
        guard allowed.contains(s) else {
            throw error(
                node.location,
                "\(what) must be one of \(allowed.map { "'\($0)'" }.joined(separator: ", ")), not '\(s)'" + suggestion(s, allowed))
        }
        return s
    }

    /// A field path such as `meta/created`.
    func field(_ node: PlanNode, _ what: String) throws(PlanError) -> FieldPath {
        let s = try text(node, what)
        guard let f = FieldPath(s) else {
            throw error(node.location, "\(what) '\(s)' is not a field path (keys separated by '/', none empty)")
        }
        return f
    }

    /// One field path or a list of them.
    func fields(_ node: PlanNode, _ what: String) throws(PlanError) -> [FieldPath] {
        var out: [FieldPath] = []
        if case .sequence(let items) = node.content {
            for item in items { out.append(try field(item, "each item of \(what)")) }
            guard !out.isEmpty else { throw error(node.location, "\(what) must not be empty") }
        } else {
            out.append(try field(node, "\(what) (a field or a list of fields)"))
        }
        return out
    }

    /// An operation's options: a mapping whose keys must all be among `allowed` and include `required`.
    func options(_ node: PlanNode, operation: String, allowed: [String], required: [String]) throws(PlanError) -> PlanOptions {
        let members = try mapping(node, "the options of '\(operation)'")
        for m in members where !allowed.contains(m.key) {
            throw error(
                m.keyNode.location,
                "unknown option '\(m.key)' for '\(operation)' (it takes \(allowed.joined(separator: ", ")))" + suggestion(m.key, allowed))
        }
        for r in required where !members.contains(where: { $0.key == r }) {
            throw error(node.location, "'\(operation)' needs the option '\(r)'")
        }
        return PlanOptions(node: node, members: members)
    }

    /// ` (did you mean 'rename'?)` when `word` is one or two edits from a known word, else "".
    func suggestion(_ word: String, _ known: [String]) -> String {
        let best = known.map { ($0, Self.distance(word, $0)) }.min { $0.1 < $1.1 }
        guard let (candidate, d) = best, d <= 2, d < word.count else { return "" }
        return " (did you mean '\(candidate)'?)"
    }

    private static func distance(_ a: String, _ b: String) -> Int {
        let x = Array(a), y = Array(b)
        var row = Array(0...y.count)
        for i in 1...max(1, x.count) where !x.isEmpty {
            var prev = row[0]
            row[0] = i
            for j in 1...max(1, y.count) where !y.isEmpty {
                let cur = row[j]
                row[j] = min(row[j] + 1, row[j - 1] + 1, prev + (x[i - 1] == y[j - 1] ? 0 : 1))
                prev = cur
            }
        }
        return row[y.count]
    }
}

/// The checked options of one operation.
struct PlanOptions {
    let node: PlanNode
    let members: [(key: String, keyNode: PlanNode, value: PlanNode)]

    /// The value of an option, if given.
    subscript(key: String) -> PlanNode? { members.first { $0.key == key }?.value }

    /// Where the options are written.
    var location: PlanLocation { node.location }
}
