import JSONStream

/// The variables a rule is evaluated with.
public struct RulesContext {
    /// `auth`: the signed-in user's token claims, or null.
    public var auth: JSONValue
    /// `now`: server time in milliseconds since the epoch.
    public var now: Double
    public var root: RulesSnapshot
    public var data: RulesSnapshot
    /// `newData`; `nil` for `.read` rules.
    public var newData: RulesSnapshot?
    /// `query` for `.read` rules: `orderByChild`, `startAt`, `limitToFirst`, ... as given by the client.
    public var query: JSONValue
    /// The keys the path's `$wildcards` captured, in the order the wildcards appear on the rule's path.
    public var captures: [String]

    public init(
        auth: JSONValue = .null, now: Double, root: RulesSnapshot, data: RulesSnapshot, newData: RulesSnapshot? = nil,
        query: JSONValue = .object(JSONObject()), captures: [String] = []
    ) {
        self.auth = auth
        self.now = now
        self.root = root
        self.data = data
        self.newData = newData
        self.query = query
        self.captures = captures
    }
}

/// One compiled `.read`, `.write` or `.validate` rule: a boolean constant or a type-checked expression.
public struct RulesRule: Sendable {
    /// Which rule it is.
    public enum Kind: String, Sendable {
        case read = ".read"
        case write = ".write"
        case validate = ".validate"
    }

    public let kind: Kind
    /// The expression as written (`"true"`/`"false"` for boolean rules).
    public let source: String
    private let thunk: RulesThunk

    /// A rule given as a JSON boolean.
    public init(constant: Bool, kind: Kind) {
        self.kind = kind
        source = String(constant)
        thunk = { _ throws(RulesEvaluationError) in .bool(constant) }
    }

    /// Parses and type-checks `expression`; `wildcards` are the `$names` on the rule's path, outermost first.
    ///
    /// Rejected: syntax errors, unknown variables, functions, methods and properties, wrong argument
    /// counts or types, operands of the wrong type where that is certain before evaluation (such as
    /// `'a' > true` or `root == null`), invalid regular expressions, and expressions that are not boolean.
    public init(expression: String, kind: Kind, wildcards: [String]) throws(RulesExpressionError) {
        self.kind = kind
        source = expression
        let tree = try RulesParser.parse(expression)
        let compiled = try RulesCompiler(kind: kind, wildcards: wildcards).compile(tree)
        guard compiled.type == .boolean else {
            throw RulesExpressionError("a rule must be a boolean expression, but this one is a \(compiled.type.name)", at: 0)
        }
        thunk = compiled.thunk
    }

    /// Evaluates the rule; a type error at run time (such as `null.length > 0`) is thrown.
    public func evaluate(in context: RulesContext) throws(RulesEvaluationError) -> Bool {
        guard case .bool(let b) = try thunk(context) else { throw RulesEvaluationError("the rule did not produce a boolean") }
        return b
    }
}

/// A compiled expression: evaluates to a value in a context, or fails with a run-time type error.
typealias RulesThunk = @Sendable (RulesContext) throws(RulesEvaluationError) -> RulesValue

/// What the type checker knows about an expression before evaluation.
enum RulesType: Equatable {
    case boolean, number, string, null, regex, snapshot, query
    /// A string, number, boolean or null (what `val()` returns).
    case primitive
    /// Anything (members of `auth`, `getPriority()`).
    case any

    var isFuzzy: Bool { self == .primitive || self == .any }
    var isPrimitive: Bool { [.string, .number, .boolean, .null, .primitive].contains(self) }

    var name: String {
        switch self {
        case .boolean: return "boolean"
        case .number: return "number"
        case .string: return "string"
        case .null: return "null"
        case .regex: return "regular expression"
        case .snapshot: return "snapshot"
        case .query: return "query"
        case .primitive: return "value of unknown type"
        case .any: return "value of unknown type"
        }
    }
}

/// Type-checks a `RulesExpression` and turns it into nested closures.
///
/// Types follow Firebase (as targaryen models it): where a type is known before evaluation it is checked
/// then; where it is not (`auth.*`, `val()`), the check happens at run time and a mismatch is an error
/// that denies.
struct RulesCompiler {
    let kind: RulesRule.Kind
    let wildcards: [String]

    struct Compiled {
        var type: RulesType
        var thunk: RulesThunk
    }

    /// A method's argument types and result type.
    struct Signature {
        var arguments: [RulesType]
        var result: RulesType
    }

    static let snapshotMethods: [String: Signature] = [
        "val": Signature(arguments: [], result: .primitive),
        "child": Signature(arguments: [.string], result: .snapshot),
        "parent": Signature(arguments: [], result: .snapshot),
        "hasChild": Signature(arguments: [.string], result: .boolean),
        "hasChildren": Signature(arguments: [], result: .boolean),  // arguments checked specially
        "exists": Signature(arguments: [], result: .boolean),
        "getPriority": Signature(arguments: [], result: .any),
        "isNumber": Signature(arguments: [], result: .boolean),
        "isString": Signature(arguments: [], result: .boolean),
        "isBoolean": Signature(arguments: [], result: .boolean),
    ]

    static let stringMethods: [String: Signature] = [
        "contains": Signature(arguments: [.string], result: .boolean),
        "beginsWith": Signature(arguments: [.string], result: .boolean),
        "endsWith": Signature(arguments: [.string], result: .boolean),
        "replace": Signature(arguments: [.string, .string], result: .string),
        "toLowerCase": Signature(arguments: [], result: .string),
        "toUpperCase": Signature(arguments: [], result: .string),
        "matches": Signature(arguments: [.regex], result: .boolean),
    ]

    static let queryProperties: [String: RulesType] = [
        "orderByKey": .boolean, "orderByPriority": .boolean, "orderByValue": .boolean, "orderByChild": .string,
        "startAt": .primitive, "endAt": .primitive, "equalTo": .primitive, "limitToFirst": .number, "limitToLast": .number,
    ]

    func compile(_ e: RulesExpression) throws(RulesExpressionError) -> Compiled {
        switch e.node {
        case .null:
            return Compiled(type: .null) { _ throws(RulesEvaluationError) in .null }
        case .boolean(let b):
            return Compiled(type: .boolean) { _ throws(RulesEvaluationError) in .bool(b) }
        case .number(let d):
            return Compiled(type: .number) { _ throws(RulesEvaluationError) in .number(d) }
        case .string(let s):
            return Compiled(type: .string) { _ throws(RulesEvaluationError) in .string(s) }
        case .regex(let pattern, let flags):
            let regex: RulesRegex
            do {
                regex = try RulesRegex(pattern: pattern, flags: flags)
            } catch {
                throw RulesExpressionError(error.message, at: e.offset + 1 + error.offset)
            }
            return Compiled(type: .regex) { _ throws(RulesEvaluationError) in .regex(regex) }
        case .variable(let name):
            return try variable(name, at: e.offset)
        case .array:
            throw RulesExpressionError("an array literal is only allowed as the argument of hasChildren()", at: e.offset)
        case .unary(let op, let operand):
            return try unary(op, try compile(operand), at: e.offset)
        case .binary(let op, let l, let r):
            return try binary(op, try compile(l), try compile(r), at: e.offset)
        case .logical(let op, let operands, let operators):
            var compiled: [Compiled] = []
            compiled.reserveCapacity(operands.count)
            for operand in operands { compiled.append(try compile(operand)) }
            return try logical(op, compiled, operators: operators)
        case .conditional(let test, let then, let otherwise):
            let t = try compile(test), a = try compile(then), b = try compile(otherwise)
            guard t.type == .boolean else {
                throw RulesExpressionError("the condition of '?:' must be boolean, not a \(t.type.name)", at: e.offset)
            }
            let type: RulesType = a.type == b.type ? a.type : (a.type.isPrimitive && b.type.isPrimitive ? .primitive : .any)
            let (tt, at, bt) = (t.thunk, a.thunk, b.thunk)
            return Compiled(type: type) { c throws(RulesEvaluationError) in
                guard case .bool(let flag) = try tt(c) else { throw RulesEvaluationError("the condition of '?:' is not a boolean") }
                return flag ? try at(c) : try bt(c)
            }
        case .member(let object, let name):
            return try property(try compile(object), name, at: e.offset)
        case .index(let object, let key):
            let o = try compile(object)
            if case .string(let name) = key.node, o.type != .any { return try property(o, name, at: key.offset) }
            guard o.type == .any else {
                throw RulesExpressionError("a property of a \(o.type.name) must be named by a string literal", at: key.offset)
            }
            let k = try compile(key)
            let (ot, kt) = (o.thunk, k.thunk)
            return Compiled(type: .any) { c throws(RulesEvaluationError) in
                let keyValue = try kt(c)
                guard let name = keyValue.keyText else { throw RulesEvaluationError("a \(keyValue.typeName) cannot be a property name") }
                return try RulesValue.member(of: try ot(c), name)
            }
        case .call(let callee, let arguments):
            return try call(callee, arguments)
        }
    }

    // MARK: - Variables and operators

    private func variable(_ name: String, at offset: Int) throws(RulesExpressionError) -> Compiled {
        switch name {
        case "auth":
            return Compiled(type: .any) { c throws(RulesEvaluationError) in RulesValue(c.auth) }
        case "now":
            return Compiled(type: .number) { c throws(RulesEvaluationError) in .number(c.now) }
        case "root":
            return Compiled(type: .snapshot) { c throws(RulesEvaluationError) in .snapshot(c.root) }
        case "data":
            return Compiled(type: .snapshot) { c throws(RulesEvaluationError) in .snapshot(c.data) }
        case "newData":
            guard kind != .read else { throw RulesExpressionError("newData is not available in .read rules", at: offset) }
            return Compiled(type: .snapshot) { c throws(RulesEvaluationError) in
                guard let s = c.newData else { throw RulesEvaluationError("newData is not available") }
                return .snapshot(s)
            }
        case "query":
            guard kind == .read else { throw RulesExpressionError("query is only available in .read rules", at: offset) }
            return Compiled(type: .query) { c throws(RulesEvaluationError) in .object(c.query) }
        default:
            guard name.hasPrefix("$"), let slot = wildcards.lastIndex(of: name) else {
                throw RulesExpressionError("unknown variable '\(name)'", at: offset)
            }
            return Compiled(type: .string) { c throws(RulesEvaluationError) in
                guard slot < c.captures.count else { throw RulesEvaluationError("\(name) was not captured") }
                return .string(c.captures[slot])
            }
        }
    }

    private func unary(_ op: RulesUnaryOperator, _ x: Compiled, at offset: Int) throws(RulesExpressionError) -> Compiled {
        let xt = x.thunk
        switch op {
        case .not:
            guard x.type == .boolean else { throw RulesExpressionError("'!' needs a boolean operand, not a \(x.type.name)", at: offset) }
            return Compiled(type: .boolean) { c throws(RulesEvaluationError) in
                guard case .bool(let b) = try xt(c) else { throw RulesEvaluationError("'!' needs a boolean operand") }
                return .bool(!b)
            }
        case .negate:
            guard x.type == .number || x.type.isFuzzy else {
                throw RulesExpressionError("'-' needs a number operand, not a \(x.type.name)", at: offset)
            }
            return Compiled(type: .number) { c throws(RulesEvaluationError) in
                let v = try xt(c)
                guard case .number(let d) = v else { throw RulesEvaluationError("cannot negate \(v.display)") }
                return .number(-d)
            }
        }
    }

    private func binary(_ op: RulesBinaryOperator, _ l: Compiled, _ r: Compiled, at offset: Int) throws(RulesExpressionError) -> Compiled {
        func require(_ allowed: [RulesType], _ what: String) throws(RulesExpressionError) {
            for (side, t) in [("left", l.type), ("right", r.type)] where !(allowed.contains(t) || t.isFuzzy) {
                throw RulesExpressionError("'\(op.rawValue)' needs \(what); its \(side) operand is a \(t.name)", at: offset)
            }
        }
        let (lt, rt) = (l.thunk, r.thunk)
        switch op {
        case .and, .or:
            return try logical(op, [l, r], operators: [offset])
        case .plus:
            try require([.string, .number], "strings or numbers")
            let type: RulesType =
                l.type == .string || r.type == .string ? .string : (l.type == .number && r.type == .number ? .number : .primitive)
            return Compiled(type: type) { c throws(RulesEvaluationError) in
                let a = try lt(c), b = try rt(c)
                switch (a, b) {
                case (.number(let x), .number(let y)): return .number(x + y)
                case (.string, .string), (.string, .number), (.number, .string): return .string(a.keyText! + b.keyText!)
                default: throw RulesEvaluationError("cannot add \(a.display) and \(b.display)")
                }
            }
        case .minus, .times, .divide, .remainder:
            try require([.number], "numbers")
            return Compiled(type: .number) { c throws(RulesEvaluationError) in
                let a = try lt(c), b = try rt(c)
                guard case .number(let x) = a, case .number(let y) = b else {
                    throw RulesEvaluationError("'\(op.rawValue)' needs numbers, got \(a.display) and \(b.display)")
                }
                switch op {
                case .minus: return .number(x - y)
                case .times: return .number(x * y)
                case .divide: return .number(y == 0 ? .nan : x / y)
                default: return .number(x.truncatingRemainder(dividingBy: y))
                }
            }
        case .equal, .strictEqual, .notEqual, .strictNotEqual:
            try require([.string, .number, .boolean, .null], "values that can be compared (not snapshots or regular expressions)")
            let negate = op == .notEqual || op == .strictNotEqual
            return Compiled(type: .boolean) { c throws(RulesEvaluationError) in
                .bool(try RulesValue.equal(try lt(c), try rt(c)) != negate)
            }
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            try require([.string, .number, .null], "numbers, strings or null")
            if !l.type.isFuzzy && !r.type.isFuzzy && l.type != r.type {
                throw RulesExpressionError("'\(op.rawValue)' compares a \(l.type.name) with a \(r.type.name)", at: offset)
            }
            let swapped = op == .greater || op == .greaterOrEqual
            let orEqual = op == .lessOrEqual || op == .greaterOrEqual
            return Compiled(type: .boolean) { c throws(RulesEvaluationError) in
                let a = try lt(c), b = try rt(c)
                return .bool(swapped ? try RulesValue.less(b, a, orEqual: orEqual) : try RulesValue.less(a, b, orEqual: orEqual))
            }
        }
    }

    /// `a && b && ...` or `a || b || ...` in one loop (a chain of 100,000 operands does not nest):
    /// the first operand that is false (`&&`) or true (`||`) decides.
    /// `operators` are the offsets of the operators between the operands.
    private func logical(_ op: RulesBinaryOperator, _ operands: [Compiled], operators: [Int]) throws(RulesExpressionError) -> Compiled {
        for (k, operand) in operands.enumerated() where operand.type != .boolean {
            let message = "'\(op.rawValue)' needs boolean operands; its \(k == 0 ? "left" : "right") operand is a \(operand.type.name)"
            throw RulesExpressionError(message, at: operators[max(k - 1, 0)])
        }
        let isAnd = op == .and
        let all = operands.map(\.thunk)
        return Compiled(type: .boolean) { c throws(RulesEvaluationError) in
            for thunk in all {
                guard case .bool(let b) = try thunk(c) else { throw RulesEvaluationError("'\(op.rawValue)' needs boolean operands") }
                if b != isAnd { return .bool(b) }
            }
            return .bool(isAnd)
        }
    }

    // MARK: - Properties and methods

    private func property(_ o: Compiled, _ name: String, at offset: Int) throws(RulesExpressionError) -> Compiled {
        let ot = o.thunk
        switch o.type {
        case .snapshot:
            if Self.snapshotMethods[name] != nil {
                throw RulesExpressionError("snapshot method '\(name)' must be called: \(name)()", at: offset)
            }
            throw RulesExpressionError("unknown snapshot property '\(name)'", at: offset)
        case .query:
            guard let type = Self.queryProperties[name] else { throw RulesExpressionError("unknown query property '\(name)'", at: offset) }
            return Compiled(type: type) { c throws(RulesEvaluationError) in
                guard case .object(let q) = try ot(c) else { return .null }
                if let v = q[segment: name] { return RulesValue(v) }
                switch name {
                case "orderByKey":
                    // Without another ordering, a query is ordered by key.
                    return .bool(
                        q[segment: "orderByValue"] == nil && q[segment: "orderByPriority"] == nil && q[segment: "orderByChild"] == nil)
                case "orderByValue", "orderByPriority": return .bool(false)
                default: return .null
                }
            }
        case .string, .primitive:
            if name == "length" {
                return Compiled(type: .number) { c throws(RulesEvaluationError) in try RulesValue.member(of: try ot(c), name) }
            }
            if Self.stringMethods[name] != nil {
                throw RulesExpressionError("string method '\(name)' must be called: \(name)(...)", at: offset)
            }
            throw RulesExpressionError("unknown string property '\(name)'", at: offset)
        case .any:
            return Compiled(type: .any) { c throws(RulesEvaluationError) in try RulesValue.member(of: try ot(c), name) }
        case .boolean, .number, .null, .regex:
            throw RulesExpressionError("a \(o.type.name) has no property '\(name)'", at: offset)
        }
    }

    private func call(_ callee: RulesExpression, _ arguments: [RulesExpression]) throws(RulesExpressionError) -> Compiled {
        let receiver: RulesExpression
        let name: String
        let nameOffset: Int
        switch callee.node {
        case .member(let o, let n):
            (receiver, name, nameOffset) = (o, n, callee.offset)
        case .index(let o, let key):
            guard case .string(let n) = key.node else {
                throw RulesExpressionError("a method must be named by a string literal", at: key.offset)
            }
            (receiver, name, nameOffset) = (o, n, key.offset)
        case .variable(let n):
            throw RulesExpressionError("unknown function '\(n)'", at: callee.offset)
        default:
            throw RulesExpressionError("only methods can be called", at: callee.offset)
        }
        let r = try compile(receiver)
        switch r.type {
        case .snapshot:
            guard let signature = Self.snapshotMethods[name] else {
                throw RulesExpressionError("unknown snapshot method '\(name)'", at: nameOffset)
            }
            if name == "hasChildren" { return try hasChildren(r, arguments, at: nameOffset) }
            let args = try checkedArguments(arguments, signature, name, at: nameOffset)
            return Compiled(type: signature.result, thunk: snapshotMethod(name, r.thunk, args))
        case .string, .primitive, .any:
            guard let signature = Self.stringMethods[name] else {
                let what = r.type == .string ? "string method" : "method"
                throw RulesExpressionError("unknown \(what) '\(name)'", at: nameOffset)
            }
            let args = try checkedArguments(arguments, signature, name, at: nameOffset)
            return Compiled(type: signature.result, thunk: stringMethod(name, r.thunk, args))
        case .boolean, .number, .null, .regex, .query:
            throw RulesExpressionError("a \(r.type.name) has no method '\(name)'", at: nameOffset)
        }
    }

    private func checkedArguments(_ arguments: [RulesExpression], _ signature: Signature, _ name: String, at offset: Int)
        throws(RulesExpressionError) -> [RulesThunk]
    {
        guard arguments.count == signature.arguments.count else {
            let n = signature.arguments.count
            throw RulesExpressionError("'\(name)' takes \(n) argument\(n == 1 ? "" : "s"), not \(arguments.count)", at: offset)
        }
        var thunks: [RulesThunk] = []
        for (i, argument) in arguments.enumerated() {
            let a = try compile(argument)
            let expected = signature.arguments[i]
            guard a.type == expected || (a.type.isFuzzy && expected != .regex) else {
                throw RulesExpressionError(
                    "argument \(i + 1) of '\(name)' must be a \(expected.name), not a \(a.type.name)", at: argument.offset)
            }
            thunks.append(a.thunk)
        }
        return thunks
    }

    private func hasChildren(_ r: Compiled, _ arguments: [RulesExpression], at offset: Int) throws(RulesExpressionError) -> Compiled {
        let rt = r.thunk
        if arguments.isEmpty {
            return Compiled(type: .boolean) { c throws(RulesEvaluationError) in
                .bool(try Self.snapshot(rt, c).content == .branch)
            }
        }
        guard arguments.count == 1, case .array(let items) = arguments[0].node else {
            throw RulesExpressionError("hasChildren takes no argument or one array of strings", at: offset)
        }
        guard !items.isEmpty else {
            throw RulesExpressionError("hasChildren needs at least one name in its array", at: arguments[0].offset)
        }
        var thunks: [RulesThunk] = []
        for item in items {
            let i = try compile(item)
            guard i.type == .string || i.type.isFuzzy else {
                throw RulesExpressionError("hasChildren names must be strings, not a \(i.type.name)", at: item.offset)
            }
            thunks.append(i.thunk)
        }
        let names = thunks
        return Compiled(type: .boolean) { c throws(RulesEvaluationError) in
            let s = try Self.snapshot(rt, c)
            for n in names {
                let v = try n(c)
                guard case .string(let path) = v else { throw RulesEvaluationError("hasChildren got \(v.display), not a string") }
                if path.isEmpty || s.child(path).content == .absent { return .bool(false) }
            }
            return .bool(true)
        }
    }

    private static func snapshot(_ thunk: RulesThunk, _ c: RulesContext) throws(RulesEvaluationError) -> RulesSnapshot {
        guard case .snapshot(let s) = try thunk(c) else { throw RulesEvaluationError("not a snapshot") }
        return s
    }

    private static func string(_ thunk: RulesThunk, _ c: RulesContext, for name: String) throws(RulesEvaluationError) -> String {
        let v = try thunk(c)
        guard case .string(let s) = v else { throw RulesEvaluationError("'\(name)' needs a string, got \(v.display)") }
        return s
    }

    private func snapshotMethod(_ name: String, _ rt: @escaping RulesThunk, _ args: [RulesThunk]) -> RulesThunk {
        switch name {
        case "val":
            return { c throws(RulesEvaluationError) in try Self.snapshot(rt, c).rulesValue }
        case "child":
            let a = args[0]
            return { c throws(RulesEvaluationError) in
                .snapshot(try Self.snapshot(rt, c).child(try Self.string(a, c, for: "child")))
            }
        case "parent":
            return { c throws(RulesEvaluationError) in .snapshot(try Self.snapshot(rt, c).parent()) }
        case "hasChild":
            let a = args[0]
            return { c throws(RulesEvaluationError) in
                let s = try Self.snapshot(rt, c), path = try Self.string(a, c, for: "hasChild")
                return .bool(!path.isEmpty && s.child(path).content != .absent)
            }
        case "exists":
            return { c throws(RulesEvaluationError) in .bool(try Self.snapshot(rt, c).content != .absent) }
        case "getPriority":
            return { c throws(RulesEvaluationError) in
                let s = try Self.snapshot(rt, c)
                return s.source.priority(at: s.path).map(RulesValue.init) ?? .null
            }
        default:  // isNumber, isString, isBoolean
            return { c throws(RulesEvaluationError) in
                guard case .leaf(let v) = try Self.snapshot(rt, c).content else { return .bool(false) }
                switch (name, v) {
                case ("isNumber", .number), ("isString", .string), ("isBoolean", .bool): return .bool(true)
                default: return .bool(false)
                }
            }
        }
    }

    private func stringMethod(_ name: String, _ rt: @escaping RulesThunk, _ args: [RulesThunk]) -> RulesThunk {
        switch name {
        case "contains", "beginsWith", "endsWith":
            let a = args[0]
            return { c throws(RulesEvaluationError) in
                let s = Array(try Self.string(rt, c, for: name).utf8), p = Array(try Self.string(a, c, for: name).utf8)
                switch name {
                case "beginsWith": return .bool(s.starts(with: p))
                case "endsWith": return .bool(s.reversed().starts(with: p.reversed()))
                default: return .bool(p.isEmpty || s.indices.contains { s[$0...].starts(with: p) })
                }
            }
        case "replace":
            let (a, b) = (args[0], args[1])
            return { c throws(RulesEvaluationError) in
                let s = try Self.string(rt, c, for: name)
                let target = try Self.string(a, c, for: name), replacement = try Self.string(b, c, for: name)
                return .string(Self.replaceAll(s, target, replacement))
            }
        case "toLowerCase":
            return { c throws(RulesEvaluationError) in .string(try Self.string(rt, c, for: name).lowercased()) }
        case "toUpperCase":
            return { c throws(RulesEvaluationError) in .string(try Self.string(rt, c, for: name).uppercased()) }
        default:  // matches
            let a = args[0]
            return { c throws(RulesEvaluationError) in
                let s = try Self.string(rt, c, for: name)
                let v = try a(c)
                guard case .regex(let regex) = v else {
                    throw RulesEvaluationError("'matches' needs a regular expression, got \(v.display)")
                }
                return .bool(try regex.matches(s))
            }
        }
    }

    /// Replaces every occurrence of `target` (compared scalar by scalar); an empty target changes nothing.
    static func replaceAll(_ s: String, _ target: String, _ replacement: String) -> String {
        let source = Array(s.unicodeScalars), t = Array(target.unicodeScalars)
        guard !t.isEmpty else { return s }
        var out = String.UnicodeScalarView()
        var i = 0
        while i < source.count {
            if source[i...].starts(with: t) {
                out.append(contentsOf: replacement.unicodeScalars)
                i += t.count
            } else {
                out.append(source[i])
                i += 1
            }
        }
        return String(out)
    }
}
