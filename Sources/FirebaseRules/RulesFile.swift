import JSONStream

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A loaded Realtime Database rules file (`{"rules": {...}}`) with every expression compiled.
///
/// The file may contain `//` and `/* */` comments and strings spanning lines, as the Firebase console
/// and CLI accept. Loading fails on the first problem: JSON syntax, structure (unknown `.keys`, several
/// `$wildcards` under one node, a `$wildcard` name reused on one path, `.indexOn` that is not a string or
/// an array of strings, a rule that is neither a string nor a boolean), or an expression that does not
/// compile.
public struct RulesFile: Sendable {
    /// The file's name, used in messages.
    public let name: String
    /// The rules for the database root (`/rules`).
    public let root: RulesNode

    /// Loads and compiles the rules file at `path`.
    public init(contentsOfFile path: String) throws(RulesFileError) {
        guard let file = fopen(path, "rb") else {
            throw RulesFileError(
                file: path, line: 0, column: 0, rulePath: "", message: "cannot open the file: \(String(cString: strerror(errno)))")
        }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = fread(&chunk, 1, chunk.count, file)
            bytes.append(contentsOf: chunk[0..<n])
            if n < chunk.count { break }
        }
        guard ferror(file) == 0 else {
            throw RulesFileError(file: path, line: 0, column: 0, rulePath: "", message: "cannot read the file")
        }
        try self.init(bytes: bytes, name: path)
    }

    /// Loads and compiles a rules file held in memory; `name` appears in messages.
    public init(bytes: [UInt8], name: String) throws(RulesFileError) {
        self.name = name
        let reader = JSONReader(source: MemoryByteSource(bytes), options: .init(relaxed: true), sourceName: name)
        let document: Located
        do {
            document = try Located.read(reader)
            guard try reader.next() == .end else { throw reader.error(.trailingData, "unexpected data after the rules object") }
        } catch let error as JSONError {
            throw RulesFileError(file: name, line: error.line, column: error.column, rulePath: error.pointer, message: error.message)
        } catch {
            throw RulesFileError(file: name, line: 0, column: 0, rulePath: "", message: "\(error)")
        }
        guard case .object(let top) = document.kind else {
            throw RulesFileError(
                file: name, line: document.line, column: document.column, rulePath: "",
                message: "a rules file must be an object with a single \"rules\" member")
        }
        guard let rules = top.first(where: { $0.key == "rules" }) else {
            throw RulesFileError(
                file: name, line: document.line, column: document.column, rulePath: "", message: "missing the \"rules\" member")
        }
        if let extra = top.first(where: { $0.key != "rules" }) {
            throw RulesFileError(
                file: name, line: extra.line, column: extra.column, rulePath: "",
                message: "unexpected top-level member \"\(extra.key)\"; only \"rules\" is allowed")
        }
        root = try RulesNode(rules.value, file: name, path: "/rules", wildcards: [])
    }
}

/// The rules at one location of the database, and the locations below it.
public struct RulesNode: Sendable {
    /// Where the node sits in the rules file, e.g. `/rules/users/$uid`.
    public let path: String
    public let read: RulesRule?
    public let write: RulesRule?
    public let validate: RulesRule?
    /// Children named by `.indexOn`.
    public let indexOn: [String]
    /// Child rules by key; a `$wildcard` child is stored under its `$name` too.
    public let children: [String: RulesNode]
    /// The `$name` of the wildcard child, if any.
    public let wildcard: String?

    /// The rules for a data key: the literal child if there is one, else the wildcard child (with the
    /// key it captures).
    public func child(for key: String) -> (node: RulesNode, captured: String?)? {
        if !key.hasPrefix("$"), let literal = children[key] { return (literal, nil) }
        guard let wildcard, let node = children[wildcard] else { return nil }
        return (node, key)
    }

    fileprivate init(_ located: Located, file: String, path: String, wildcards: [String]) throws(RulesFileError) {
        func fail(_ at: (line: Int, column: Int), _ message: String, _ where_: String = path) -> RulesFileError {
            RulesFileError(file: file, line: at.line, column: at.column, rulePath: where_, message: message)
        }
        guard case .object(let members) = located.kind else {
            throw fail((located.line, located.column), "rules must be an object, not \(located.kind.name)")
        }
        self.path = path
        var rules: [RulesRule.Kind: RulesRule] = [:]
        var indexOn: [String] = []
        var children: [String: RulesNode] = [:]
        var wildcard: String? = nil
        var seen = Set<String>()
        for member in members {
            let at = (member.line, member.column)
            guard seen.insert(member.key).inserted else { throw fail(at, "duplicate key \"\(member.key)\"") }
            let value = member.value
            if let kind = RulesRule.Kind(rawValue: member.key) {
                rules[kind] = try Self.rule(kind, value, file: file, path: path, wildcards: wildcards)
            } else if member.key == ".indexOn" {
                switch value.kind {
                case .string(let s): indexOn = [s]
                case .array(let items):
                    for item in items {
                        guard case .string(let s) = item.kind else {
                            throw fail((item.line, item.column), ".indexOn must list strings, not \(item.kind.name)")
                        }
                        indexOn.append(s)
                    }
                default: throw fail((value.line, value.column), ".indexOn must be a string or an array of strings, not \(value.kind.name)")
                }
            } else if member.key.hasPrefix(".") {
                throw fail(at, "unknown rule \"\(member.key)\" (expected .read, .write, .validate or .indexOn)")
            } else {
                let childPath = path + "/" + member.key
                var childWildcards = wildcards
                if member.key.hasPrefix("$") {
                    if let wildcard { throw fail(at, "two wildcards \(wildcard) and \(member.key) under one node") }
                    if wildcards.contains(member.key) { throw fail(at, "wildcard \(member.key) is already used above on this path") }
                    wildcard = member.key
                    childWildcards.append(member.key)
                }
                children[member.key] = try RulesNode(value, file: file, path: childPath, wildcards: childWildcards)
            }
        }
        read = rules[.read]
        write = rules[.write]
        validate = rules[.validate]
        self.indexOn = indexOn
        self.children = children
        self.wildcard = wildcard
    }

    private static func rule(_ kind: RulesRule.Kind, _ value: Located, file: String, path: String, wildcards: [String])
        throws(RulesFileError) -> RulesRule
    {
        switch value.kind {
        case .scalar(.bool(let b)):
            return RulesRule(constant: b, kind: kind)
        case .string(let expression):
            do {
                return try RulesRule(expression: expression, kind: kind, wildcards: wildcards)
            } catch {
                throw RulesFileError(
                    file: file, line: value.line, column: value.column, rulePath: path, message: error.message,
                    ruleKind: kind.rawValue, expression: expression, offset: error.offset)
            }
        default:
            throw RulesFileError(
                file: file, line: value.line, column: value.column, rulePath: path,
                message: "\(kind.rawValue) must be a string or a boolean, not \(value.kind.name)")
        }
    }
}

/// Why a rules file could not be loaded, with the file, line and column.
public struct RulesFileError: Error, Equatable, CustomStringConvertible, Sendable {
    public var file: String
    /// 1-based line and column of the offending JSON token: for an expression, where its string starts.
    public var line: Int
    public var column: Int
    /// Where in the rules the problem is, e.g. `/rules/users/$uid`.
    public var rulePath: String
    public var message: String
    /// `.read`, `.write` or `.validate` for an expression error.
    public var ruleKind: String?
    /// The expression's text, for an expression error.
    public var expression: String?
    /// Offset of the error in `expression`, counted in Unicode scalars from 0.
    public var offset: Int?

    public init(
        file: String, line: Int, column: Int, rulePath: String, message: String,
        ruleKind: String? = nil, expression: String? = nil, offset: Int? = nil
    ) {
        self.file = file
        self.line = line
        self.column = column
        self.rulePath = rulePath
        self.message = message
        self.ruleKind = ruleKind
        self.expression = expression
        self.offset = offset
    }

    /// E.g. `rules.json:12:20: unknown function 'foo' in .validate at /rules/users/$uid: offset 0 in "foo()"`.
    public var description: String {
        var out = "\(file):\(line):\(column): \(message)"
        if let ruleKind { out += " in \(ruleKind)" }
        if !rulePath.isEmpty { out += " at \(rulePath)" }
        if let expression, let offset { out += ": offset \(offset) in \"\(expression)\"" }
        return out
    }
}

/// A JSON value of the rules file with the line and column where it starts.
private struct Located {
    indirect enum Kind {
        case object([Member])
        case array([Located])
        case string(String)
        case scalar(JSONValue)

        var name: String {
            switch self {
            case .object: return "an object"
            case .array: return "an array"
            case .string: return "a string"
            case .scalar(.null): return "null"
            case .scalar(.bool): return "a boolean"
            case .scalar: return "a number"
            }
        }
    }

    /// An object member with where its key starts.
    struct Member {
        var key: String
        var line: Int
        var column: Int
        var value: Located
    }

    var kind: Kind
    var line: Int
    var column: Int

    /// Reads the next value from `reader`, token by token, keeping positions.
    static func read(_ reader: JSONReader) throws -> Located {
        // Positions are taken before consuming: a string spanning lines moves the reader's line on.
        _ = try reader.peek()
        let (line, column) = reader.location
        let token = try reader.next()
        switch token {
        case .beginObject:
            var members: [Member] = []
            while try reader.peek() != .endObject {
                let (keyLine, keyColumn) = reader.location
                try reader.next()
                let key = reader.stringValue
                members.append(Member(key: key, line: keyLine, column: keyColumn, value: try read(reader)))
            }
            try reader.next()
            return Located(kind: .object(members), line: line, column: column)
        case .beginArray:
            var items: [Located] = []
            while try reader.peek() != .endArray { items.append(try read(reader)) }
            try reader.next()
            return Located(kind: .array(items), line: line, column: column)
        case .string: return Located(kind: .string(reader.stringValue), line: line, column: column)
        case .number: return Located(kind: .scalar(.number(JSONNumber(text: reader.stringValue))), line: line, column: column)
        case .true: return Located(kind: .scalar(.bool(true)), line: line, column: column)
        case .false: return Located(kind: .scalar(.bool(false)), line: line, column: column)
        case .null: return Located(kind: .scalar(.null), line: line, column: column)
        default: throw reader.typeMismatch(expected: "a value", found: token)
        }
    }
}
