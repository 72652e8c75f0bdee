import Foundation
import JSONStream
import RegexEngine

/// Which members (of an object) or elements (of an array) of one instance were evaluated by
/// adjacent keywords: the annotations `unevaluatedProperties`/`unevaluatedItems` look at.
///
/// Only collected while some enclosing subschema has an `unevaluated*` keyword (`active`), so
/// ordinary validation never allocates for it.
struct EvaluatedMarks {
    var active: Bool
    private var all = false
    private var bits: [Bool] = []

    init(active: Bool) { self.active = active }

    static var inactive: EvaluatedMarks { EvaluatedMarks(active: false) }

    /// Marks member/element `index` of an instance with `count` of them.
    mutating func mark(_ index: Int, of count: Int) {
        if all { return }
        if bits.isEmpty { bits = Array(repeating: false, count: count) }
        bits[index] = true
    }

    /// Marks every member/element (after `items`, `additionalProperties`, `unevaluated*`).
    mutating func markAll() { all = true }

    func contains(_ index: Int) -> Bool { all || (index < bits.count && bits[index]) }

    /// Adds the marks of a subschema that passed on the same instance.
    mutating func merge(_ other: EvaluatedMarks) {
        if all { return }
        if other.all {
            all = true
        } else if !other.bits.isEmpty {
            if bits.isEmpty {
                bits = other.bits
            } else {
                for i in other.bits.indices where other.bits[i] { bits[i] = true }
            }
        }
    }
}

/// Evaluates one instance, laid out on a `JSONTape`, against a compiled program.
///
/// In check mode (`report: false`) it returns as soon as the answer is known and builds no strings.
/// In report mode it visits everything and records a `SchemaViolation` per failed assertion, with the
/// instance location as a JSON Pointer; the path is only turned into text when a finding is made.
struct SchemaEvaluator {
    /// A step from an instance to one of its members or elements.
    enum PathSegment {
        /// The tape index of an object key.
        case key(Int)
        case index(Int)
    }

    /// Deepest nesting of subschema evaluations (guards against `$ref` cycles that never descend
    /// into the instance, which would otherwise recurse forever).
    static let maxDepth = 1000

    private let program: SchemaProgram
    private let tape: JSONTape
    /// The tape's entries and arena, read directly (the tape does not change while evaluating).
    private let entries: UnsafePointer<JSONTape.Entry>
    private let arena: UnsafePointer<UInt8>
    private let nodes: [SchemaNode]
    private let usesDynamicScope: Bool
    private let pointerPrefix: String
    private var path: [PathSegment] = []
    /// The location of the subschema being evaluated (report mode only).
    private var location = ""
    private var scope: [Int32] = []
    private var depth = 0
    private(set) var violations: [SchemaViolation] = []

    init(program: SchemaProgram, tape: JSONTape, pointerPrefix: String) {
        self.program = program
        self.tape = tape
        self.entries = tape.entries.baseAddress!
        self.arena = tape.arenaBase
        self.nodes = program.nodes
        self.usesDynamicScope = program.usesDynamicScope
        self.pointerPrefix = pointerPrefix
    }

    /// Validates the value at entry `index` of the tape against the program's root schema.
    mutating func evaluateRoot(at index: Int, report: Bool) -> Bool {
        var marks = EvaluatedMarks.inactive
        return evaluate(program.root, index, report: report, marks: &marks)
    }

    // MARK: - Violations

    private var pointer: String {
        var out = pointerPrefix
        for segment in path {
            out += "/"
            switch segment {
            case .key(let k): out += JSONPointer.escape(tape.string(k))
            case .index(let i): out += String(i)
            }
        }
        return out
    }

    private mutating func fail(_ keyword: String, _ message: String) {
        violations.append(
            SchemaViolation(
                keyword: keyword, pointer: pointer, schemaPath: location + "/" + JSONPointer.escape(keyword),
                message: message))
    }

    private static func quoted(_ s: String) -> String {
        let short = s.count > 60 ? s.prefix(57) + "..." : Substring(s)
        var out = "\""
        for c in short.unicodeScalars {
            switch c {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where c.value < 0x20:
                let hex = String(c.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(c)
            }
        }
        return out + "\""
    }

    /// A short rendering of a value for messages.
    private static func describe(_ value: JSONValue) -> String {
        switch value {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .number(let n): return n.text
        case .string(let s): return quoted(s)
        case .array(let a): return "an array of \(a.count)"
        case .object(let o): return "an object of \(o.count) properties"
        }
    }

    // MARK: - Subschemas

    private mutating func evaluate(_ id: Int32, _ value: Int, report: Bool, marks: inout EvaluatedMarks) -> Bool {
        // The program keeps its nodes alive: no reference counting per subschema.
        program.unretainedNodes[Int(id)]._withUnsafeGuaranteedRef { evaluate($0, value, report: report, marks: &marks) }
    }

    private mutating func evaluate(_ node: SchemaNode, _ value: Int, report: Bool, marks: inout EvaluatedMarks) -> Bool {
        if node.keywords.isEmpty { return true }
        if depth >= SchemaEvaluator.maxDepth {
            if report { fail("$ref", "schema nesting deeper than \(SchemaEvaluator.maxDepth) levels (a reference cycle?)") }
            return false
        }
        depth += 1
        let outer = location
        if report { location = node.location }
        defer { if report { location = outer } }
        let pushed = usesDynamicScope && scope.last != node.resource
        if pushed { scope.append(node.resource) }
        let valid: Bool
        if node.tracksEvaluated {
            var local = EvaluatedMarks(active: true)
            valid = evaluate(node.keywords, value, report, &local)
            if valid && marks.active { marks.merge(local) }
        } else {
            valid = evaluate(node.keywords, value, report, &marks)
        }
        depth -= 1
        if pushed { scope.removeLast() }
        return valid
    }

    private mutating func evaluate(_ keywords: borrowing [SchemaKeyword], _ value: Int, _ report: Bool, _ marks: inout EvaluatedMarks)
        -> Bool
    {
        var valid = true
        for k in keywords.indices where !evaluate(keywords[k], value, report, &marks) {
            if !report { return false }
            valid = false
        }
        return valid
    }

    /// Evaluates a subschema on a member or element (a new instance location, with its own marks).
    private mutating func evaluateChild(
        _ id: Int32, _ child: Int, _ segment: PathSegment, _ report: Bool,
        keyword: String, notAllowed: @autoclosure () -> String
    ) -> Bool {
        var marks = EvaluatedMarks.inactive
        guard report else { return evaluate(id, child, report: false, marks: &marks) }
        path.append(segment)
        defer { path.removeLast() }
        if nodes[Int(id)].isFalse {
            fail(keyword, notAllowed())
            return false
        }
        return evaluate(id, child, report: true, marks: &marks)
    }

    /// The node a `$dynamicRef` to `anchor` lands on: the outermost resource in the dynamic scope
    /// that declares the anchor.
    private func dynamicTarget(_ anchor: String) -> Int32? {
        for resource in scope {
            if let target = program.dynamicAnchors[Int(resource)][anchor] { return target }
        }
        return nil
    }

    /// Dispatches one keyword. Kept free of message building (which lives in the helpers and in
    /// `report...` functions) so that its stack frame stays small: evaluation recurses through it.
    private mutating func evaluate(_ keyword: borrowing SchemaKeyword, _ value: Int, _ report: Bool, _ marks: inout EvaluatedMarks) -> Bool
    {
        let kind = entries[value].kind
        switch keyword {
        case .never:
            if report { fail("false", "no value is allowed here") }
            return false
        case .type(let types):
            if matches(types, value) { return true }
            if report { reportType(types, value) }
            return false
        case .constant(let expected):
            if SchemaEquality.equal(value, in: tape, expected) { return true }
            if report { reportConstant(expected) }
            return false
        case .enumeration(let allowed):
            if allowed.contains(value, in: tape) { return true }
            if report { reportEnumeration(allowed) }
            return false
        case .number(let limits):
            guard kind == .number else { return true }
            // A plain integer clearly within the bounds needs no `JSONNumber`.
            if let d = SchemaEvaluator.plainIntegerValue(bytes(value)), limits.clearlyAllows(d) { return true }
            return checkNumber(JSONNumber(text: String(decoding: bytes(value), as: UTF8.self)), limits, report)
        case .stringLength(let min, let max):
            guard kind == .string else { return true }
            return checkLength(bytes(value), min, max, report)
        case .pattern(let regex):
            guard kind == .string else { return true }
            switch regex.search(utf8: bytes(value)) {
            case .matched: return true
            case .notMatched: if report { reportPattern(regex) }
            case .overBudget(let steps): if report { reportPatternBudget(regex, steps, value) }
            }
            return false
        case .format(let format):
            guard kind == .string, !format.check(tape.string(value)) else { return true }
            if report { reportFormat(format.name) }
            return false
        case .arraySize(let min, let max):
            guard kind == .array else { return true }
            return checkSize(
                Int(entries[value].count), min, max, report, noun: "items", minKeyword: "minItems", maxKeyword: "maxItems", of: "array")
        case .uniqueItems:
            guard kind == .array, entries[value].count > 1, case .array(let a) = tape.value(at: value),
                let duplicate = SchemaEquality.firstDuplicate(in: a)
            else { return true }
            if report { reportDuplicate(duplicate) }
            return false
        case .objectSize(let min, let max):
            guard kind == .object else { return true }
            return checkSize(
                Int(entries[value].count), min, max, report, noun: "properties", minKeyword: "minProperties", maxKeyword: "maxProperties",
                of: "object")
        case .required(let names):
            guard kind == .object else { return true }
            return checkRequired(value, names, report)
        case .dependentRequired(let entries):
            guard kind == .object else { return true }
            return checkDependentRequired(value, entries, report)
        case .ref(let target):
            return evaluate(target, value, report: report, marks: &marks)
        case .dynamicRef(let fallback, let anchor):
            return evaluate(dynamicTarget(anchor) ?? fallback, value, report: report, marks: &marks)
        case .allOf(let schemas):
            return checkAllOf(schemas, value, report, &marks)
        case .anyOf(let schemas):
            return checkAnyOf(schemas, value, report, &marks)
        case .oneOf(let schemas):
            return checkOneOf(schemas, value, report, &marks)
        case .not(let schema):
            var none = EvaluatedMarks.inactive
            if !evaluate(schema, value, report: false, marks: &none) { return true }
            if report { fail("not", "value must not match the \"not\" schema") }
            return false
        case .conditional(let condition, let then, let otherwise):
            return checkConditional(condition, then, otherwise, value, report, &marks)
        case .dependentSchemas(let entries):
            guard kind == .object else { return true }
            return checkDependentSchemas(entries, value, report, &marks)
        case .items(let items):
            guard kind == .array else { return true }
            return checkItems(value, items, report, &marks)
        case .contains(let contains):
            guard kind == .array else { return true }
            return checkContains(value, contains, report, &marks)
        case .properties(let properties):
            guard kind == .object else { return true }
            return checkProperties(value, properties, report, &marks)
        case .propertyNames(let schema):
            guard kind == .object else { return true }
            return checkPropertyNames(value, schema, report)
        case .unevaluatedItems(let schema):
            guard kind == .array else { return true }
            return checkUnevaluatedItems(value, schema, report, &marks)
        case .unevaluatedProperties(let schema):
            guard kind == .object else { return true }
            return checkUnevaluatedProperties(value, schema, report, &marks)
        }
    }

    /// The bytes of the string or number at `i`.
    @inline(__always)
    private func bytes(_ i: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: arena + Int(entries[i].start), count: Int(entries[i].length))
    }

    /// Whether the object at `object` has a member named `names.names[n]`.
    @inline(__always)
    private func has(_ object: Int, _ n: Int, of names: SchemaNames) -> Bool {
        var key = object + 1
        for _ in 0..<Int(entries[object].count) {
            if names.name(n, equalsKey: bytes(key), keyIsASCII: entries[key].isASCII) { return true }
            key = Int(entries[key + 1].next)
        }
        return false
    }

    /// Whether the object at `object` has a member `name` (as `JSONObject.index(of:)` compares keys:
    /// Swift `String` equality, which bytes decide when both sides are ASCII).
    private func has(_ object: Int, _ name: String) -> Bool {
        var name = name
        let nameIsASCII = name.utf8.allSatisfy { $0 < 0x80 }
        return name.withUTF8 { n in
            var key = object + 1
            for _ in 0..<Int(entries[object].count) {
                let k = bytes(key)
                if k.count == n.count && (n.count == 0 || memcmp(k.baseAddress!, n.baseAddress!, n.count) == 0) { return true }
                if !(nameIsASCII && entries[key].isASCII) && tape.string(key) == String(decoding: n, as: UTF8.self) { return true }
                key = Int(entries[key + 1].next)
            }
            return false
        }
    }

    // MARK: - Assertions

    private mutating func reportType(_ types: SchemaTypeSet, _ value: Int) {
        let found: String
        switch entries[value].kind {
        case .null: found = "null"
        case .false, .true: found = "boolean"
        case .number: found = JSONNumber(text: tape.string(value)).isIntegerLiteral ? "integer" : "number"
        case .string: found = "string"
        case .array: found = "array"
        case .object: found = "object"
        }
        fail("type", "expected \(types.description), found \(found)")
    }

    private mutating func reportConstant(_ expected: JSONValue) {
        fail("const", "value must be \(SchemaEvaluator.describe(expected))")
    }

    private mutating func reportEnumeration(_ allowed: SchemaEnum) {
        let list = allowed.values.prefix(5).map(SchemaEvaluator.describe).joined(separator: ", ")
        fail("enum", "value must be one of \(list)\(allowed.values.count > 5 ? ", ..." : "")")
    }

    private mutating func reportPattern(_ regex: ECMARegex) {
        fail("pattern", "string does not match the pattern \(SchemaEvaluator.quoted(regex.source))")
    }

    private mutating func reportPatternBudget(_ regex: ECMARegex, _ steps: Int, _ value: Int) {
        fail(
            "pattern-budget",
            "the pattern \(SchemaEvaluator.quoted(regex.source)) needs more than \(steps) steps "
                + "on this \(entries[value].length)-byte string: not checked")
    }

    private mutating func reportFormat(_ name: String) {
        fail("format", "string is not a valid \(name)")
    }

    private mutating func reportDuplicate(_ duplicate: (Int, Int)) {
        fail("uniqueItems", "items \(duplicate.0) and \(duplicate.1) are equal")
    }

    private mutating func checkLength(_ utf8: UnsafeRawBufferPointer, _ min: Int, _ max: Int?, _ report: Bool) -> Bool {
        // A scalar takes 1...4 UTF-8 bytes: the byte count often settles it without counting.
        if min == 0, let max, utf8.count <= max { return true }
        if min <= utf8.count / 4, max == nil { return true }
        // Scalars are the bytes that do not continue one (valid UTF-8).
        var length = 0
        for b in utf8 where b & 0xC0 != 0x80 { length += 1 }
        if length < min {
            if report { fail("minLength", "string is shorter than \(min) characters (\(length))") }
            return false
        }
        if let max, length > max {
            if report { fail("maxLength", "string is longer than \(max) characters (\(length))") }
            return false
        }
        return true
    }

    private mutating func checkSize(
        _ count: Int, _ min: Int, _ max: Int?, _ report: Bool, noun: String,
        minKeyword: String, maxKeyword: String, of container: String
    ) -> Bool {
        if count < min {
            if report { fail(minKeyword, "\(container) has \(count) \(noun), at least \(min) required") }
            return false
        }
        if let max, count > max {
            if report { fail(maxKeyword, "\(container) has \(count) \(noun), at most \(max) allowed") }
            return false
        }
        return true
    }

    private mutating func checkRequired(_ o: Int, _ names: SchemaNames, _ report: Bool) -> Bool {
        var valid = true
        for n in 0..<names.count where !has(o, n, of: names) {
            if !report { return false }
            fail("required", "missing required property \(SchemaEvaluator.quoted(names.names[n]))")
            valid = false
        }
        return valid
    }

    private mutating func checkDependentRequired(_ o: Int, _ entries: [DependentRequired], _ report: Bool) -> Bool {
        var valid = true
        for entry in entries where has(o, entry.property) {
            for name in entry.required where !has(o, name) {
                if !report { return false }
                fail(
                    "dependentRequired",
                    "property \(SchemaEvaluator.quoted(name)) is required when \(SchemaEvaluator.quoted(entry.property)) is present")
                valid = false
            }
        }
        return valid
    }

    // MARK: - In-place applicators

    private mutating func checkAllOf(_ schemas: [Int32], _ value: Int, _ report: Bool, _ marks: inout EvaluatedMarks) -> Bool {
        var valid = true
        for s in schemas where !evaluate(s, value, report: report, marks: &marks) {
            if !report { return false }
            valid = false
        }
        return valid
    }

    private mutating func checkAnyOf(_ schemas: [Int32], _ value: Int, _ report: Bool, _ marks: inout EvaluatedMarks) -> Bool {
        var valid = false
        for s in schemas {
            var local = EvaluatedMarks(active: marks.active)
            guard evaluate(s, value, report: false, marks: &local) else { continue }
            valid = true
            // Every passing alternative contributes annotations, so only stop early without them.
            guard marks.active else { break }
            marks.merge(local)
        }
        if !valid && report { fail("anyOf", "value matches none of the \(schemas.count) anyOf alternatives") }
        return valid
    }

    private mutating func checkOneOf(_ schemas: [Int32], _ value: Int, _ report: Bool, _ marks: inout EvaluatedMarks) -> Bool {
        // The first two alternatives that pass (no array: this runs for every value oneOf applies to).
        var first: Int? = nil
        var second: Int? = nil
        var passedMarks = EvaluatedMarks.inactive
        for (i, s) in schemas.enumerated() {
            var local = EvaluatedMarks(active: marks.active)
            guard evaluate(s, value, report: false, marks: &local) else { continue }
            passedMarks = local
            if first == nil {
                first = i
            } else {
                second = i
                break
            }
        }
        if first != nil && second == nil {
            if marks.active { marks.merge(passedMarks) }
            return true
        }
        if report {
            if let first, let second {
                fail("oneOf", "value matches oneOf alternatives \(first) and \(second); exactly one must match")
            } else {
                fail("oneOf", "value matches none of the \(schemas.count) oneOf alternatives")
            }
        }
        return false
    }

    private mutating func checkConditional(
        _ condition: Int32, _ then: Int32?, _ otherwise: Int32?, _ value: Int,
        _ report: Bool, _ marks: inout EvaluatedMarks
    ) -> Bool {
        var local = EvaluatedMarks(active: marks.active)
        if evaluate(condition, value, report: false, marks: &local) {
            if marks.active { marks.merge(local) }
            guard let then else { return true }
            return evaluate(then, value, report: report, marks: &marks)
        }
        guard let otherwise else { return true }
        return evaluate(otherwise, value, report: report, marks: &marks)
    }

    private mutating func checkDependentSchemas(
        _ entries: [DependentSchema], _ value: Int,
        _ report: Bool, _ marks: inout EvaluatedMarks
    ) -> Bool {
        var valid = true
        for entry in entries where has(value, entry.property) && !evaluate(entry.schema, value, report: report, marks: &marks) {
            if !report { return false }
            valid = false
        }
        return valid
    }

    // MARK: - Child applicators

    private mutating func checkPropertyNames(_ o: Int, _ schema: Int32, _ report: Bool) -> Bool {
        let (tape, entries) = (self.tape, self.entries)  // not `self`, which the evaluation of members mutates
        var valid = true
        var key = o + 1
        for _ in 0..<Int(entries[o].count) {
            defer { key = Int(entries[key + 1].next) }
            // A key is a string entry: it is evaluated as the instance.
            var none = EvaluatedMarks.inactive
            if evaluate(schema, key, report: false, marks: &none) { continue }
            if !report { return false }
            valid = false
            path.append(.key(key))
            fail("propertyNames", "property name \(SchemaEvaluator.quoted(tape.string(key))) is not allowed by propertyNames")
            path.removeLast()
        }
        return valid
    }

    private mutating func checkUnevaluatedItems(_ a: Int, _ schema: Int32, _ report: Bool, _ marks: inout EvaluatedMarks) -> Bool {
        var valid = true
        var element = a + 1
        for i in 0..<Int(entries[a].count) {
            defer { element = Int(entries[element].next) }
            if marks.contains(i) { continue }
            if !evaluateChild(
                schema, element, .index(i), report, keyword: "unevaluatedItems", notAllowed: "item \(i) is not allowed (unevaluatedItems)")
            {
                if !report { return false }
                valid = false
            }
        }
        if valid { marks.markAll() }
        return valid
    }

    private mutating func checkUnevaluatedProperties(_ o: Int, _ schema: Int32, _ report: Bool, _ marks: inout EvaluatedMarks) -> Bool {
        let (tape, entries) = (self.tape, self.entries)  // not `self`, which the evaluation of members mutates
        var valid = true
        var key = o + 1
        for i in 0..<Int(entries[o].count) {
            defer { key = Int(entries[key + 1].next) }
            if marks.contains(i) { continue }
            if !evaluateChild(
                schema, key + 1, .key(key), report, keyword: "unevaluatedProperties",
                notAllowed: "property \(SchemaEvaluator.quoted(tape.string(key))) is not allowed (unevaluatedProperties)")
            {
                if !report { return false }
                valid = false
            }
        }
        if valid { marks.markAll() }
        return valid
    }

    private func matches(_ types: SchemaTypeSet, _ value: Int) -> Bool {
        switch entries[value].kind {
        case .null: return types.contains(.null)
        case .false, .true: return types.contains(.boolean)
        case .string: return types.contains(.string)
        case .array: return types.contains(.array)
        case .object: return types.contains(.object)
        case .number:
            return types.contains(.number) || (types.contains(.integer) && SchemaEvaluator.isMathematicalInteger(bytes(value)))
        }
    }

    /// The `Double` of a plain integer of up to 18 characters, computed as
    /// `JSONNumber.fastDoubleValue` does; nil for other number texts.
    @inline(__always)
    private static func plainIntegerValue(_ text: UnsafeRawBufferPointer) -> Double? {
        guard !text.isEmpty, text.count <= 18 else { return nil }
        let negative = text[0] == UInt8(ascii: "-")
        var value: Int64 = 0
        for c in text[(negative ? 1 : 0)...] {
            guard c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int64(c - UInt8(ascii: "0"))
        }
        return Double(negative ? -value : value)
    }

    /// Whether number text is mathematically an integer (`1.0` and `1e2` are), as
    /// `JSONNumber.isMathematicalInteger` decides it, without making a `String` for plain integers.
    private static func isMathematicalInteger(_ text: UnsafeRawBufferPointer) -> Bool {
        if !text.contains(where: { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }) { return true }
        return ExactDecimal(String(decoding: text, as: UTF8.self))?.isInteger ?? false
    }

    private mutating func checkNumber(_ n: JSONNumber, _ limits: NumberLimits, _ report: Bool) -> Bool {
        let d = n.fastDoubleValue
        var valid = true
        if let m = limits.minimum, n.compare(d, to: m) < 0 {
            if !report { return false }
            fail("minimum", "\(n.text) is less than the minimum \(m.text)")
            valid = false
        }
        if let m = limits.exclusiveMinimum, n.compare(d, to: m) <= 0 {
            if !report { return false }
            fail("exclusiveMinimum", "\(n.text) is not greater than \(m.text)")
            valid = false
        }
        if let m = limits.maximum, n.compare(d, to: m) > 0 {
            if !report { return false }
            fail("maximum", "\(n.text) is greater than the maximum \(m.text)")
            valid = false
        }
        if let m = limits.exclusiveMaximum, n.compare(d, to: m) >= 0 {
            if !report { return false }
            fail("exclusiveMaximum", "\(n.text) is not less than \(m.text)")
            valid = false
        }
        if let m = limits.multipleOf, let exact = ExactDecimal(n.text), !exact.isMultiple(of: m.exact) {
            if !report { return false }
            fail("multipleOf", "\(n.text) is not a multiple of \(m.text)")
            valid = false
        }
        return valid
    }

    private mutating func checkItems(_ a: Int, _ items: ItemsApplicator, _ report: Bool, _ marks: inout EvaluatedMarks) -> Bool {
        var valid = true
        let count = Int(entries[a].count)
        var element = a + 1
        for i in 0..<count {
            defer { element = Int(entries[element].next) }
            let schema: Int32, keyword: String
            if i < items.prefix.count {
                schema = items.prefix[i]
                keyword = items.prefixKeyword
            } else if let rest = items.rest {
                schema = rest
                keyword = items.restKeyword
            } else {
                break
            }
            if !evaluateChild(schema, element, .index(i), report, keyword: keyword, notAllowed: "item \(i) is not allowed (\(keyword))") {
                if !report { return false }
                valid = false
            }
        }
        if marks.active {
            if items.rest != nil {
                marks.markAll()
            } else {
                for i in 0..<min(items.prefix.count, count) { marks.mark(i, of: count) }
            }
        }
        return valid
    }

    private mutating func checkContains(_ a: Int, _ contains: ContainsApplicator, _ report: Bool, _ marks: inout EvaluatedMarks) -> Bool {
        var count = 0
        let elements = Int(entries[a].count)
        var element = a + 1
        for i in 0..<elements {
            defer { element = Int(entries[element].next) }
            var none = EvaluatedMarks.inactive
            guard evaluate(contains.schema, element, report: false, marks: &none) else { continue }
            count += 1
            if marks.active { marks.mark(i, of: elements) }
            // Without annotations or a maximum to check, enough matches settle it.
            if !marks.active && contains.max == nil && count >= contains.min { return true }
        }
        if count < contains.min {
            if report {
                fail(
                    contains.min == 1 ? "contains" : "minContains",
                    "array has \(count) items matching contains, at least \(contains.min) required")
            }
            return false
        }
        if let max = contains.max, count > max {
            if report { fail("maxContains", "array has \(count) items matching contains, at most \(max) allowed") }
            return false
        }
        return true
    }

    private mutating func checkProperties(_ o: Int, _ properties: PropertiesApplicator, _ report: Bool, _ marks: inout EvaluatedMarks)
        -> Bool
    {
        let (tape, entries) = (self.tape, self.entries)  // not `self`, which the evaluation of members mutates
        var valid = true
        let count = Int(entries[o].count)
        var key = o + 1
        for i in 0..<count {
            defer { key = Int(entries[key + 1].next) }
            let value = key + 1
            var matched = false
            if let schema = properties.schema(forKey: bytes(key), isASCII: entries[key].isASCII) {
                matched = true
                if !evaluateChild(
                    schema, value, .key(key), report, keyword: "properties",
                    notAllowed: "property \(SchemaEvaluator.quoted(tape.string(key))) is not allowed")
                {
                    if !report { return false }
                    valid = false
                }
            }
            for pattern in properties.patterns {
                let result = pattern.regex.search(utf8: bytes(key))
                if result == .notMatched { continue }
                matched = true
                if case .overBudget(let steps) = result {
                    if !report { return false }
                    path.append(.key(key))
                    reportPatternBudget(pattern.regex, steps, key)
                    path.removeLast()
                    valid = false
                    continue
                }
                if !evaluateChild(
                    pattern.schema, value, .key(key), report, keyword: "patternProperties",
                    notAllowed: "property \(SchemaEvaluator.quoted(tape.string(key))) is not allowed")
                {
                    if !report { return false }
                    valid = false
                }
            }
            if !matched, let additional = properties.additional {
                matched = true
                if !evaluateChild(
                    additional, value, .key(key), report, keyword: "additionalProperties",
                    notAllowed: "property \(SchemaEvaluator.quoted(tape.string(key))) is not allowed")
                {
                    if !report { return false }
                    valid = false
                }
            }
            if matched && marks.active { marks.mark(i, of: count) }
        }
        return valid
    }
}
