import JSONStream
import RegexEngine

/// A compiled schema: subschemas as nodes in one array, referring to each other by index.
///
/// Indices (not object references) make recursive schemas free of retain cycles and let `$ref`
/// resolve completely at compile time.
final class SchemaProgram: Sendable {
    let nodes: [SchemaNode]
    let root: Int32
    /// Per resource (registry index): `$dynamicAnchor` names to nodes; empty when unused.
    let dynamicAnchors: [[String: Int32]]
    /// Whether any `$dynamicRef` needs the dynamic scope tracked during evaluation.
    let usesDynamicScope: Bool
    /// The schema paths of keywords no dialect in use defines (typos such as `minLenght`).
    let unknownKeywords: [JSONSchema.UnknownKeyword]
    /// `nodes` as unretained references (the program keeps them alive), so that evaluation does not
    /// retain and release a node per subschema. Written only here.
    nonisolated(unsafe) let unretainedNodes: UnsafeMutableBufferPointer<Unmanaged<SchemaNode>>

    init(
        nodes: [SchemaNode], root: Int32, dynamicAnchors: [[String: Int32]], usesDynamicScope: Bool,
        unknownKeywords: [JSONSchema.UnknownKeyword]
    ) {
        self.nodes = nodes
        self.unknownKeywords = unknownKeywords
        self.root = root
        self.dynamicAnchors = dynamicAnchors
        self.usesDynamicScope = usesDynamicScope
        unretainedNodes = .allocate(capacity: nodes.count)
        _ = unretainedNodes.initialize(from: nodes.map { Unmanaged.passUnretained($0) })
    }

    deinit { unretainedNodes.deallocate() }
}

/// One compiled subschema.
final class SchemaNode: Sendable {
    /// The checks, cheapest first; `unevaluated*` always last. Empty for `true`.
    let keywords: [SchemaKeyword]
    /// The schema resource (registry index) the subschema belongs to, for the dynamic scope.
    let resource: Int32
    /// Whether it has `unevaluatedProperties`/`unevaluatedItems` and so collects annotations.
    let tracksEvaluated: Bool
    /// Where the subschema is written (`#/properties/name` in the root document, the document's
    /// URI before the `#` in others): violations' schema paths start here.
    let location: String

    init(keywords: [SchemaKeyword], resource: Int32, location: String) {
        self.keywords = keywords
        self.resource = resource
        self.location = location
        tracksEvaluated = keywords.contains {
            switch $0 {
            case .unevaluatedItems, .unevaluatedProperties: return true
            default: return false
            }
        }
    }

    /// Whether this is the `false` schema.
    var isFalse: Bool {
        if keywords.count == 1, case .never = keywords[0] { return true }
        return false
    }
}

/// One compiled keyword (or a group of related keywords checked together).
enum SchemaKeyword: Sendable {
    /// The `false` schema.
    case never
    case type(SchemaTypeSet)
    case constant(JSONValue)
    case enumeration(SchemaEnum)
    case number(NumberLimits)
    case stringLength(min: Int, max: Int?)
    case pattern(ECMARegex)
    case format(FormatAssertion)
    case arraySize(min: Int, max: Int?)
    case uniqueItems
    case objectSize(min: Int, max: Int?)
    case required(SchemaNames)
    case dependentRequired([DependentRequired])
    case ref(Int32)
    /// `$dynamicRef` to a `$dynamicAnchor` `anchor`; `fallback` is its static target.
    case dynamicRef(fallback: Int32, anchor: String)
    case allOf([Int32])
    case anyOf([Int32])
    case oneOf([Int32])
    case not(Int32)
    case conditional(if: Int32, then: Int32?, else: Int32?)
    case dependentSchemas([DependentSchema])
    case items(ItemsApplicator)
    case contains(ContainsApplicator)
    case properties(PropertiesApplicator)
    case propertyNames(Int32)
    case unevaluatedItems(Int32)
    case unevaluatedProperties(Int32)
}

/// The `type` keyword as a bit set.
struct SchemaTypeSet: OptionSet, Sendable {
    let rawValue: UInt8
    static let null = SchemaTypeSet(rawValue: 1 << 0)
    static let boolean = SchemaTypeSet(rawValue: 1 << 1)
    static let object = SchemaTypeSet(rawValue: 1 << 2)
    static let array = SchemaTypeSet(rawValue: 1 << 3)
    static let number = SchemaTypeSet(rawValue: 1 << 4)
    static let integer = SchemaTypeSet(rawValue: 1 << 5)
    static let string = SchemaTypeSet(rawValue: 1 << 6)

    /// The type names JSON Schema uses, with their bits.
    static let names: [(String, SchemaTypeSet)] = [
        ("null", .null), ("boolean", .boolean), ("object", .object), ("array", .array),
        ("number", .number), ("integer", .integer), ("string", .string),
    ]

    /// `"string"`, `"string or null"`, ... for messages.
    var description: String {
        SchemaTypeSet.names.filter { contains($0.1) }.map(\.0).joined(separator: " or ")
    }
}

/// `enum`, with a hash lookup when every allowed value is a string.
struct SchemaEnum: Sendable {
    let values: [JSONValue]
    /// The allowed strings by (canonical) string key, each with its exact spellings, when there are
    /// more than a few (hashing a non-ASCII `String` normalises it, which costs more than a few
    /// byte comparisons).
    private let strings: [String: [String]]?

    /// The allowed strings' UTF-8 one after the other, and their lengths, when there are no more
    /// than a few: a string instance is compared with them byte for byte (code-point equality).
    private let smallStrings: [UInt8]
    private let smallStringLengths: [Int]

    init(_ values: [JSONValue]) {
        self.values = values
        let strings = values.compactMap(\.stringValue)
        self.strings = strings.count == values.count && strings.count > 8 ? Dictionary(grouping: strings, by: { $0 }) : nil
        smallStrings = self.strings == nil ? strings.flatMap { Array($0.utf8) } : []
        smallStringLengths = self.strings == nil ? strings.map(\.utf8.count) : []
    }

    /// Whether the value at `i` in `tape` equals one of the allowed values.
    func contains(_ i: Int, in tape: JSONTape) -> Bool {
        guard tape[i].kind == .string else {
            return strings == nil && values.contains { SchemaEquality.equal(i, in: tape, $0) }
        }
        guard let strings else {
            let s = tape.bytes(i)
            return smallStrings.withUnsafeBytes { allowed in
                var start = 0
                for length in smallStringLengths {
                    if length == s.count && SchemaNames.sameBytes(allowed.baseAddress! + start, s.baseAddress, length) { return true }
                    start += length
                }
                return false
            }
        }
        let s = tape.string(i)
        guard let spellings = strings[s] else { return false }
        return spellings.contains { JSONValue.sameCodePoints($0, s) }
    }
}

/// `minimum`, `maximum`, their exclusive forms and `multipleOf`.
///
/// Keyword payloads of more than a few words are classes, so copying a `SchemaKeyword` while
/// evaluating is a pointer copy.
final class NumberLimits: Sendable {
    let minimum: SchemaLimit?
    let exclusiveMinimum: SchemaLimit?
    let maximum: SchemaLimit?
    let exclusiveMaximum: SchemaLimit?
    let multipleOf: SchemaLimit?

    init(
        minimum: SchemaLimit?, exclusiveMinimum: SchemaLimit?, maximum: SchemaLimit?, exclusiveMaximum: SchemaLimit?,
        multipleOf: SchemaLimit?
    ) {
        self.minimum = minimum
        self.exclusiveMinimum = exclusiveMinimum
        self.maximum = maximum
        self.exclusiveMaximum = exclusiveMaximum
        self.multipleOf = multipleOf
    }

    /// Whether a number whose `Double` is `d` is within every bound by the doubles alone (no tie,
    /// which the exact decimals would settle) and no `multipleOf` applies.
    @inline(__always)
    func clearlyAllows(_ d: Double) -> Bool {
        multipleOf == nil && (minimum.map { d > $0.double } ?? true) && (exclusiveMinimum.map { d > $0.double } ?? true)
            && (maximum.map { d < $0.double } ?? true) && (exclusiveMaximum.map { d < $0.double } ?? true)
    }
}

/// `format` as an assertion: the format's name and its checker.
final class FormatAssertion: Sendable {
    let name: String
    let check: @Sendable (String) -> Bool

    init(name: String, check: @escaping @Sendable (String) -> Bool) {
        self.name = name
        self.check = check
    }
}

/// `dependentRequired` (or draft-07 `dependencies` with a list): names required with `property`.
struct DependentRequired: Sendable {
    let property: String
    let required: [String]
}

/// `dependentSchemas` (or draft-07 `dependencies` with a schema): applies when `property` is present.
struct DependentSchema: Sendable {
    let property: String
    let schema: Int32
}

/// `prefixItems` + `items` (draft 2020-12), or array-form `items` + `additionalItems` (draft-07).
final class ItemsApplicator: Sendable {
    let prefix: [Int32]
    /// Applies to every element after the prefix.
    let rest: Int32?
    /// Keyword names for violations: `prefixItems`/`items` or `items`/`additionalItems`.
    let prefixKeyword: String
    let restKeyword: String

    init(prefix: [Int32], rest: Int32?, prefixKeyword: String, restKeyword: String) {
        self.prefix = prefix
        self.rest = rest
        self.prefixKeyword = prefixKeyword
        self.restKeyword = restKeyword
    }
}

/// `contains` with `minContains`/`maxContains`.
struct ContainsApplicator: Sendable {
    let schema: Int32
    let min: Int
    let max: Int?
}

/// `properties`, `patternProperties` and `additionalProperties`, applied in one pass over members.
final class PropertiesApplicator: Sendable {
    struct Pattern: Sendable {
        let regex: ECMARegex
        let schema: Int32
    }

    let named: [(key: String, schema: Int32)]
    /// For larger `properties`, a hash lookup instead of a linear scan (short keys compare faster than
    /// they hash).
    let lookup: [String: Int32]?
    let patterns: [Pattern]
    let additional: Int32?

    /// The `named` keys, compared with tape keys as bytes.
    private let names: SchemaNames

    init(named: [(key: String, schema: Int32)], patterns: [Pattern], additional: Int32?) {
        self.named = named
        self.lookup = named.count > 16 ? Dictionary(named.map { ($0.key, $0.schema) }, uniquingKeysWith: { a, _ in a }) : nil
        self.patterns = patterns
        self.additional = additional
        names = SchemaNames(named.map(\.key))
    }

    /// The `properties` subschema for `key`.
    @inline(__always)
    func schema(for key: String) -> Int32? {
        if let lookup { return lookup[key] }
        for entry in named where entry.key == key { return entry.schema }
        return nil
    }

    /// The `properties` subschema for the object key `key` (UTF-8), as `schema(for:)` finds it.
    @inline(__always)
    func schema(forKey key: UnsafeRawBufferPointer, isASCII: Bool) -> Int32? {
        if lookup != nil { return schema(for: String(decoding: key, as: UTF8.self)) }
        return names.firstIndex(ofKey: key, keyIsASCII: isASCII).map { named[$0].schema }
    }
}

/// Property names (`required`, `properties`) laid out for comparison with tape keys: their UTF-8 one
/// after the other, compared a word at a time. Equality is Swift's `String` equality (canonical
/// equivalence), as `JSONObject` finds members: bytes decide it when both sides are ASCII.
final class SchemaNames: Sendable {
    let names: [String]
    private let utf8: [UInt8]
    private let starts: [Int]
    private let lengths: [Int]
    private let isASCII: Bool

    init(_ names: [String]) {
        self.names = names
        utf8 = names.flatMap { Array($0.utf8) }
        lengths = names.map(\.utf8.count)
        var starts: [Int] = []
        var start = 0
        for n in lengths {
            starts.append(start)
            start += n
        }
        self.starts = starts
        isASCII = utf8.allSatisfy { $0 < 0x80 }
    }

    var count: Int { names.count }

    /// Whether name `n` equals the tape key `key` (its entry's `isASCII` is `keyIsASCII`).
    @inline(__always)
    func name(_ n: Int, equalsKey key: UnsafeRawBufferPointer, keyIsASCII: Bool) -> Bool {
        guard isASCII && keyIsASCII else { return names[n] == String(decoding: key, as: UTF8.self) }
        let length = lengths[n]
        guard length == key.count else { return false }
        return utf8.withUnsafeBytes { Self.sameBytes($0.baseAddress! + starts[n], key.baseAddress!, length) }
    }

    /// The first name equal to the tape key `key`.
    @inline(__always)
    func firstIndex(ofKey key: UnsafeRawBufferPointer, keyIsASCII: Bool) -> Int? {
        guard isASCII && keyIsASCII else { return names.firstIndex(of: String(decoding: key, as: UTF8.self)) }
        for n in 0..<names.count where name(n, equalsKey: key, keyIsASCII: true) { return n }
        return nil
    }

    /// Whether `n` bytes at `a` and `b` are equal, a word at a time (keys are short: no call to
    /// `memcmp`).
    @inline(__always)
    static func sameBytes(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer?, _ n: Int) -> Bool {
        guard n > 0, let b else { return true }
        if n < 8 {
            for i in 0..<n where a.load(fromByteOffset: i, as: UInt8.self) != b.load(fromByteOffset: i, as: UInt8.self) { return false }
            return true
        }
        var i = 0
        while i + 8 <= n {
            if a.loadUnaligned(fromByteOffset: i, as: UInt64.self) != b.loadUnaligned(fromByteOffset: i, as: UInt64.self) { return false }
            i += 8
        }
        return i == n || a.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self) == b.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)
    }
}
