import JSONStream
import Yams

/// One node of a plan document with its position: YAML and JSON plans both read into this tree,
/// so every later error can name a line and column.
struct PlanNode {
    enum Content {
        /// A scalar: its typed value and its text as written (`007` for the integer 7).
        case scalar(JSONValue, text: String)
        /// Members in document order.
        case mapping([(key: PlanNode, value: PlanNode)])
        case sequence([PlanNode])
    }

    var content: Content
    var location: PlanLocation

    /// `a string`, `a mapping`, ... for messages.
    var kindName: String {
        switch content {
        case .scalar(let v, _): return "\(v.typeName.article) \(v.typeName)"
        case .mapping: return "a mapping"
        case .sequence: return "a list"
        }
    }

    /// The node as a JSON value (mapping keys become their text).
    var jsonValue: JSONValue {
        switch content {
        case .scalar(let v, _): return v
        case .mapping(let pairs): return .object(JSONObject(pairs.map { .init(key: $0.key.text ?? "", value: $0.value.jsonValue) }))
        case .sequence(let items): return .array(items.map(\.jsonValue))
        }
    }

    /// The text of a scalar; `nil` for mappings and lists.
    var text: String? { if case .scalar(_, let t) = content { return t } else { return nil } }

    // MARK: - YAML

    /// YAML 1.2 core scalars: only `true`/`false` are booleans (`yes`, `no`, `on`, `off` stay strings) and
    /// dates stay strings.
    private static let resolver: Resolver = {
        // The patterns are constant and valid.
        try! Resolver.basic
            .appending(.bool, "^(?:true|True|TRUE|false|False|FALSE)$")
            .appending(.int, "^[-+]?[0-9]+$")
            .appending(
                .float, "^(?:[-+]?(?:\\.[0-9]+|[0-9]+(?:\\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\\.(?:inf|Inf|INF)|\\.(?:nan|NaN|NAN))$"
            )
            .appending(.null, "^(?:~|null|Null|NULL|)$")
    }()

    /// The most nodes a YAML plan of `count` bytes may have with its aliases expanded: 100,000 more
    /// than twice its bytes, which a plan without aliases never reaches, so an alias bomb ("billion
    /// laughs": nine aliases of nine aliases ...) is refused instead of expanded.
    static func maxNodes(forBytes count: Int) -> Int { 100_000 + 2 * count }

    /// Reads a YAML document.
    static func parseYAML(_ text: String, file: String) throws(PlanError) -> PlanNode {
        let root: Node?
        do {
            root = try Yams.compose(yaml: text, resolver)
        } catch let e as YamlError {
            throw yamlError(e, file: file)
        } catch {
            throw PlanError(file: file, message: "YAML: \(error)")
        }
        guard let root else { throw PlanError(file: file, line: 1, column: 1, message: "the plan is empty") }
        let limit = maxNodes(forBytes: text.utf8.count)
        var budget = limit
        return try convert(root, file: file, budget: &budget, limit: limit)
    }

    private static func yamlError(_ e: YamlError, file: String) -> PlanError {
        switch e {
        case .scanner(let context, let problem, let mark, _), .parser(let context, let problem, let mark, _),
            .composer(let context, let problem, let mark, _):
            let where_ = context.map { " (\($0.text) at \($0.mark.line):\($0.mark.column))" } ?? ""
            return PlanError(file: file, line: mark.line, column: mark.column, message: "YAML: \(problem)\(where_)")
        case .duplicatedKeysInMapping(let duplicates, let context):
            return PlanError(
                file: file, line: context.mark.line, column: context.mark.column,
                message: "YAML: duplicate key " + duplicates.map { "'\($0)'" }.joined(separator: ", "))
        default:
            return PlanError(file: file, message: "YAML: \(e)")
        }
    }

    /// Converts `node`, counting the nodes against `budget` (`limit` at the start).
    private static func convert(_ node: Node, file: String, budget: inout Int, limit: Int) throws(PlanError) -> PlanNode {
        let location = node.mark.map { PlanLocation(line: $0.line, column: $0.column) } ?? PlanLocation(line: 1, column: 1)
        budget -= 1
        if budget < 0 {
            let message = "YAML: the plan has more than \(limit) nodes with its aliases expanded (an alias bomb?)"
            throw PlanError(file: file, line: location.line, column: location.column, message: message)
        }
        switch node {
        case .scalar(let s):
            let value: JSONValue
            switch resolver.resolveTag(of: node) {
            case .bool: value = .bool(s.string.lowercased() == "true")
            case .null: value = .null
            case .int, .float:
                guard let n = jsonNumber(s.string) else {
                    throw PlanError(
                        file: file, line: location.line, column: location.column, message: "'\(s.string)' is not a number JSON can hold")
                }
                value = .number(n)
            default: value = .string(s.string)
            }
            return PlanNode(content: .scalar(value, text: s.string), location: location)
        case .mapping(let m):
            var pairs: [(key: PlanNode, value: PlanNode)] = []
            for (k, v) in m {
                let key = try convert(k, file: file, budget: &budget, limit: limit)
                pairs.append((key, try convert(v, file: file, budget: &budget, limit: limit)))
            }
            return PlanNode(content: .mapping(pairs), location: location)
        case .sequence(let seq):
            var items: [PlanNode] = []
            for n in seq { items.append(try convert(n, file: file, budget: &budget, limit: limit)) }
            return PlanNode(content: .sequence(items), location: location)
        case .alias:
            throw PlanError(file: file, line: location.line, column: location.column, message: "YAML aliases are not supported in plans")
        }
    }

    /// JSON number text for a YAML number: kept as written when it is JSON already (`1.50`), else in
    /// plain decimal (`+7` -> `7`); `nil` for `.inf` and `.nan`.
    private static func jsonNumber(_ text: String) -> JSONNumber? {
        if ExactDecimal(text) != nil { return JSONNumber(text: text) }
        return ExactDecimal(text, lenient: true)?.jsonNumber
    }

    // MARK: - JSON

    /// Reads a JSON document.
    static func parseJSON(_ text: String, file: String) throws(PlanError) -> PlanNode {
        let reader = JSONReader(source: MemoryByteSource(text), sourceName: file)
        do {
            let node = try readJSON(reader)
            guard try reader.next() == .end else { throw reader.error(.trailingData, "data after the plan") }
            return node
        } catch let e as JSONError {
            throw PlanError(file: file, line: e.line, column: e.column, message: "JSON: \(e.message)")
        } catch {
            throw PlanError(file: file, message: "JSON: \(error)")
        }
    }

    /// Reads one value with an explicit stack, so deep documents cannot exhaust the call stack.
    private static func readJSON(_ reader: JSONReader) throws -> PlanNode {
        var stack: [(node: PlanNode, key: PlanNode?)] = []
        var key: PlanNode? = nil
        while true {
            let token = try reader.next()
            let loc = PlanLocation(line: reader.location.line, column: reader.location.column)
            var done: PlanNode?
            switch token {
            case .beginObject:
                stack.append((PlanNode(content: .mapping([]), location: loc), key))
                key = nil
                continue
            case .beginArray:
                stack.append((PlanNode(content: .sequence([]), location: loc), key))
                key = nil
                continue
            case .endObject, .endArray:
                let (node, parentKey) = stack.removeLast()
                done = node
                key = parentKey
            case .name:
                key = PlanNode(content: .scalar(.string(reader.stringValue), text: reader.stringValue), location: loc)
                continue
            case .string: done = PlanNode(content: .scalar(.string(reader.stringValue), text: reader.stringValue), location: loc)
            case .number:
                let t = reader.stringValue
                done = PlanNode(content: .scalar(.number(JSONNumber(text: t)), text: t), location: loc)
            case .true: done = PlanNode(content: .scalar(.bool(true), text: "true"), location: loc)
            case .false: done = PlanNode(content: .scalar(.bool(false), text: "false"), location: loc)
            case .null: done = PlanNode(content: .scalar(.null, text: "null"), location: loc)
            case .end: throw reader.error(.unexpectedEnd, "unexpected end of input")
            }
            guard let value = done else { continue }
            guard var parent = stack.popLast() else { return value }
            switch parent.node.content {
            case .mapping(var pairs):
                pairs.append((key!, value))
                parent.node.content = .mapping(pairs)
            case .sequence(var items):
                items.append(value)
                parent.node.content = .sequence(items)
            case .scalar: break
            }
            stack.append(parent)
            key = nil
        }
    }
}
