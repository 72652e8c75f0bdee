import JSONStream
import RegexEngine

/// Turns indexed schema documents into a `SchemaProgram`, checking every keyword's type and value.
///
/// Each subschema location compiles once; a node's index is reserved before its keywords compile,
/// so recursive references simply point back at it. References are resolved here, never while
/// validating. When a schema resource is first used, its `$dynamicAnchor` subschemas are compiled
/// too, since a `$dynamicRef` may land on any of them at run time.
struct SchemaCompiler {
    private let registry: SchemaRegistry
    private let assertFormat: Bool
    private var nodes: [SchemaNode?] = []
    private var nodeIndex: [SchemaLocation: Int32] = [:]
    private var dynamicAnchors: [Int: [String: Int32]] = [:]
    private var usesDynamicScope = false
    private let rootDocument: Int
    private var unknownKeywords: [JSONSchema.UnknownKeyword] = []

    /// Compiles the subschema at `root` and everything it reaches.
    static func compile(root: SchemaLocation, registry: SchemaRegistry, assertFormat: Bool) throws(JSONSchemaError) -> SchemaProgram {
        var compiler = SchemaCompiler(registry: registry, assertFormat: assertFormat, rootDocument: root.document)
        let rootNode = try compiler.node(at: root)
        let anchors = (0..<registry.resources.count).map { compiler.dynamicAnchors[$0] ?? [:] }
        return SchemaProgram(
            nodes: compiler.nodes.map { $0! }, root: rootNode, dynamicAnchors: anchors,
            usesDynamicScope: compiler.usesDynamicScope, unknownKeywords: compiler.unknownKeywords)
    }

    private init(registry: SchemaRegistry, assertFormat: Bool, rootDocument: Int) {
        self.registry = registry
        self.assertFormat = assertFormat
        self.rootDocument = rootDocument
    }

    /// `location` as violations name it: `#/pointer` in the compiled document, `URI#/pointer` in others.
    private func schemaPath(_ location: SchemaLocation) -> String {
        (location.document == rootDocument ? "" : registry.documents[location.document].uri) + "#" + location.pointer
    }

    private func invalid(_ message: String, at location: SchemaLocation) -> JSONSchemaError {
        registry.error(.invalidKeyword, message, at: location)
    }

    /// The node for the subschema at `location`, compiling it on first use.
    private mutating func node(at location: SchemaLocation) throws(JSONSchemaError) -> Int32 {
        if let known = nodeIndex[location] { return known }
        guard let value = registry.value(at: location) else { throw invalid("no schema here", at: location) }
        let info = registry.info(at: location)
        let id = Int32(nodes.count)
        nodes.append(nil)
        nodeIndex[location] = id
        if dynamicAnchors[info.resource] == nil {
            dynamicAnchors[info.resource] = [:]
            for (name, pointer) in registry.resources[info.resource].dynamicAnchors {
                let anchor = try node(at: SchemaLocation(document: location.document, pointer: pointer))
                dynamicAnchors[info.resource]![name] = anchor
            }
        }
        let keywords: [SchemaKeyword]
        switch value {
        case .bool(let b):
            keywords = b ? [] : [.never]
        case .object(let object):
            keywords = try compile(object, at: location, info: info)
        default:
            throw invalid("a schema must be an object or a boolean, not \(value.typeName)", at: location)
        }
        nodes[Int(id)] = SchemaNode(keywords: keywords, resource: Int32(info.resource), location: schemaPath(location))
        return id
    }

    private mutating func compile(_ object: JSONObject, at location: SchemaLocation, info: SchemaRegistry.LocationInfo)
        throws(JSONSchemaError) -> [SchemaKeyword]
    {
        let vocabularies = info.dialect.vocabularies
        let draft7 = info.dialect.draft == .draft7
        let known = info.dialect.knownKeywords
        for member in object where !known.contains(member.key) && !member.key.hasPrefix("x-") {
            unknownKeywords.append(
                JSONSchema.UnknownKeyword(
                    name: member.key, schemaPath: schemaPath(location.appending(member.key)),
                    suggestion: Self.nearest(member.key, in: known)))
        }
        if draft7, let ref = object["$ref"] {
            return [.ref(try reference(ref, at: location.appending("$ref"), base: info.base))]
        }
        var keywords: [SchemaKeyword] = []
        if vocabularies.contains(.validation) {
            try compileValidation(object, at: location, draft7: draft7, into: &keywords)
        }
        if let format = object["format"],
            vocabularies.contains(.formatAssertion) || (assertFormat && vocabularies.contains(.formatAnnotation))
        {
            guard case .string(let name) = format else { throw invalid("format must be a string", at: location.appending("format")) }
            if let check = FormatCheckers.checker(for: name) { keywords.append(.format(FormatAssertion(name: name, check: check))) }
        }
        if !draft7 {
            if let ref = object["$ref"] {
                keywords.append(.ref(try reference(ref, at: location.appending("$ref"), base: info.base)))
            }
            if let ref = object["$dynamicRef"] {
                keywords.append(try dynamicReference(ref, at: location.appending("$dynamicRef"), base: info.base))
            }
        }
        if vocabularies.contains(.applicator) {
            try compileApplicators(object, at: location, draft7: draft7, validation: vocabularies.contains(.validation), into: &keywords)
        }
        if !draft7 && vocabularies.contains(.unevaluated) {
            if let items = try optionalNode(object, "unevaluatedItems", at: location) { keywords.append(.unevaluatedItems(items)) }
            if let properties = try optionalNode(object, "unevaluatedProperties", at: location) {
                keywords.append(.unevaluatedProperties(properties))
            }
        }
        return keywords
    }

    /// The known keyword at most two edits away from `name` (ignoring case), if one is.
    private static func nearest(_ name: String, in known: Set<String>) -> String? {
        let a = Array(name.lowercased().utf8)
        var best: (keyword: String, distance: Int)?
        for keyword in known.sorted() {
            let d = editDistance(a, Array(keyword.lowercased().utf8))
            if d <= 2, d < (best?.distance ?? .max) { best = (keyword, d) }
        }
        return best?.keyword
    }

    /// Levenshtein distance with adjacent transpositions counted as one edit.
    private static func editDistance(_ a: [UInt8], _ b: [UInt8]) -> Int {
        if abs(a.count - b.count) > 2 { return 3 }
        var previous2 = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        for i in 1...max(a.count, 1) where !a.isEmpty {
            var current = [i] + [Int](repeating: 0, count: b.count)
            for j in stride(from: 1, through: b.count, by: 1) {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { current[j] = min(current[j], previous2[j - 2] + 1) }
            }
            previous2 = previous
            previous = current
        }
        return a.isEmpty ? b.count : previous[b.count]
    }

    // MARK: - References

    private mutating func reference(_ value: JSONValue, at location: SchemaLocation, base: SchemaURI) throws(JSONSchemaError) -> Int32 {
        guard case .string(let text) = value else { throw invalid("$ref must be a string", at: location) }
        return try node(at: registry.resolve(text, at: location, base: base))
    }

    /// A `$dynamicRef` is dynamic only when its static target declares the same `$dynamicAnchor`
    /// ("bookending"); otherwise it behaves exactly like `$ref`.
    private mutating func dynamicReference(_ value: JSONValue, at location: SchemaLocation, base: SchemaURI) throws(JSONSchemaError)
        -> SchemaKeyword
    {
        guard case .string(let text) = value else { throw invalid("$dynamicRef must be a string", at: location) }
        let target = try registry.resolve(text, at: location, base: base)
        let fallback = try node(at: target)
        let name = SchemaURI.percentDecoded(base.resolving(text).fragment ?? "")
        let resource = registry.info(at: target).resource
        if !name.isEmpty, !name.hasPrefix("/"), registry.resources[resource].dynamicAnchors[name] == target.pointer {
            usesDynamicScope = true
            return .dynamicRef(fallback: fallback, anchor: name)
        }
        return .ref(fallback)
    }

    // MARK: - Keyword values

    /// The node for `object[keyword]`, if present.
    private mutating func optionalNode(_ object: JSONObject, _ keyword: String, at location: SchemaLocation) throws(JSONSchemaError)
        -> Int32?
    {
        object[keyword] == nil ? nil : try node(at: location.appending(keyword))
    }

    private mutating func schemaArray(_ value: JSONValue, at location: SchemaLocation, keyword: String) throws(JSONSchemaError) -> [Int32] {
        guard case .array(let elements) = value, !elements.isEmpty else {
            throw invalid("\(keyword) must be a non-empty array of schemas", at: location)
        }
        var result: [Int32] = []
        for i in elements.indices { result.append(try node(at: location.appending(i))) }
        return result
    }

    private mutating func schemaMap(_ value: JSONValue, at location: SchemaLocation, keyword: String) throws(JSONSchemaError) -> [(
        key: String, schema: Int32
    )] {
        guard case .object(let members) = value else { throw invalid("\(keyword) must be an object of schemas", at: location) }
        var result: [(key: String, schema: Int32)] = []
        for m in members { result.append((m.key, try node(at: location.appending(m.key)))) }
        return result
    }

    private func nonNegativeInteger(_ object: JSONObject, _ keyword: String, at location: SchemaLocation) throws(JSONSchemaError) -> Int? {
        guard let value = object[keyword] else { return nil }
        guard case .number(let n) = value, n.isMathematicalInteger, !n.text.hasPrefix("-") || n.doubleValue == 0 else {
            throw invalid("\(keyword) must be a non-negative integer", at: location.appending(keyword))
        }
        let d = n.doubleValue
        return d >= 9.2e18 ? Int.max : Int(d)
    }

    private func limit(_ object: JSONObject, _ keyword: String, at location: SchemaLocation) throws(JSONSchemaError) -> SchemaLimit? {
        guard let value = object[keyword] else { return nil }
        guard case .number(let n) = value, let limit = SchemaLimit(n) else {
            throw invalid("\(keyword) must be a number", at: location.appending(keyword))
        }
        return limit
    }

    private func strings(_ value: JSONValue, at location: SchemaLocation, keyword: String) throws(JSONSchemaError) -> [String] {
        guard case .array(let elements) = value else { throw invalid("\(keyword) must be an array of strings", at: location) }
        var result: [String] = []
        for e in elements {
            guard case .string(let s) = e else { throw invalid("\(keyword) must be an array of strings", at: location) }
            result.append(s)
        }
        return result
    }

    private func regex(_ pattern: String, at location: SchemaLocation) throws(JSONSchemaError) -> ECMARegex {
        do {
            return try ECMARegex(pattern)
        } catch {
            throw invalid("invalid regular expression \"\(pattern)\": \(error)", at: location)
        }
    }

    // MARK: - Keyword groups

    private func compileValidation(_ object: JSONObject, at location: SchemaLocation, draft7: Bool, into keywords: inout [SchemaKeyword])
        throws(JSONSchemaError)
    {
        if let type = object["type"] {
            keywords.append(.type(try typeSet(type, at: location.appending("type"))))
        }
        if let constant = object["const"] { keywords.append(.constant(constant)) }
        if let values = object["enum"] {
            guard case .array(let elements) = values else { throw invalid("enum must be an array", at: location.appending("enum")) }
            keywords.append(.enumeration(SchemaEnum(elements)))
        }
        let limits = NumberLimits(
            minimum: try limit(object, "minimum", at: location),
            exclusiveMinimum: try limit(object, "exclusiveMinimum", at: location),
            maximum: try limit(object, "maximum", at: location),
            exclusiveMaximum: try limit(object, "exclusiveMaximum", at: location),
            multipleOf: try limit(object, "multipleOf", at: location))
        if let m = limits.multipleOf, m.exact.negative || m.exact.isZero {
            throw invalid("multipleOf must be greater than 0", at: location.appending("multipleOf"))
        }
        if [limits.minimum, limits.exclusiveMinimum, limits.maximum, limits.exclusiveMaximum, limits.multipleOf].contains(where: {
            $0 != nil
        }) {
            keywords.append(.number(limits))
        }
        let minLength = try nonNegativeInteger(object, "minLength", at: location)
        let maxLength = try nonNegativeInteger(object, "maxLength", at: location)
        if minLength != nil || maxLength != nil { keywords.append(.stringLength(min: minLength ?? 0, max: maxLength)) }
        if let pattern = object["pattern"] {
            guard case .string(let text) = pattern else { throw invalid("pattern must be a string", at: location.appending("pattern")) }
            keywords.append(.pattern(try regex(text, at: location.appending("pattern"))))
        }
        let minItems = try nonNegativeInteger(object, "minItems", at: location)
        let maxItems = try nonNegativeInteger(object, "maxItems", at: location)
        if minItems != nil || maxItems != nil { keywords.append(.arraySize(min: minItems ?? 0, max: maxItems)) }
        if let unique = object["uniqueItems"] {
            guard case .bool(let b) = unique else { throw invalid("uniqueItems must be a boolean", at: location.appending("uniqueItems")) }
            if b { keywords.append(.uniqueItems) }
        }
        let minProperties = try nonNegativeInteger(object, "minProperties", at: location)
        let maxProperties = try nonNegativeInteger(object, "maxProperties", at: location)
        if minProperties != nil || maxProperties != nil { keywords.append(.objectSize(min: minProperties ?? 0, max: maxProperties)) }
        if let required = object["required"] {
            let names = try strings(required, at: location.appending("required"), keyword: "required")
            if !names.isEmpty { keywords.append(.required(SchemaNames(names))) }
        }
        if !draft7, let dependent = object["dependentRequired"] {
            let here = location.appending("dependentRequired")
            guard case .object(let members) = dependent else { throw invalid("dependentRequired must be an object", at: here) }
            var entries: [DependentRequired] = []
            for m in members {
                entries.append(
                    DependentRequired(
                        property: m.key, required: try strings(m.value, at: here.appending(m.key), keyword: "dependentRequired")))
            }
            if !entries.isEmpty { keywords.append(.dependentRequired(entries)) }
        }
    }

    private func typeSet(_ value: JSONValue, at location: SchemaLocation) throws(JSONSchemaError) -> SchemaTypeSet {
        func single(_ v: JSONValue) throws(JSONSchemaError) -> SchemaTypeSet {
            guard case .string(let name) = v, let t = SchemaTypeSet.names.first(where: { $0.0 == name })?.1 else {
                throw invalid(
                    "type must be one of null, boolean, object, array, number, integer, string (or an array of them)", at: location)
            }
            return t
        }
        guard case .array(let names) = value else { return try single(value) }
        var set: SchemaTypeSet = []
        for n in names { set.formUnion(try single(n)) }
        return set
    }

    private mutating func compileApplicators(
        _ object: JSONObject, at location: SchemaLocation, draft7: Bool, validation: Bool, into keywords: inout [SchemaKeyword]
    ) throws(JSONSchemaError) {
        if let v = object["allOf"] { keywords.append(.allOf(try schemaArray(v, at: location.appending("allOf"), keyword: "allOf"))) }
        if let v = object["anyOf"] { keywords.append(.anyOf(try schemaArray(v, at: location.appending("anyOf"), keyword: "anyOf"))) }
        if let v = object["oneOf"] { keywords.append(.oneOf(try schemaArray(v, at: location.appending("oneOf"), keyword: "oneOf"))) }
        if let not = try optionalNode(object, "not", at: location) { keywords.append(.not(not)) }
        if let condition = try optionalNode(object, "if", at: location) {
            let then = try optionalNode(object, "then", at: location)
            let otherwise = try optionalNode(object, "else", at: location)
            keywords.append(.conditional(if: condition, then: then, else: otherwise))
        }
        if draft7 {
            if let v = object["dependencies"] {
                let here = location.appending("dependencies")
                guard case .object(let members) = v else { throw invalid("dependencies must be an object", at: here) }
                var required: [DependentRequired] = []
                var schemas: [DependentSchema] = []
                for m in members {
                    if case .array = m.value {
                        required.append(
                            DependentRequired(
                                property: m.key, required: try strings(m.value, at: here.appending(m.key), keyword: "dependencies")))
                    } else {
                        schemas.append(DependentSchema(property: m.key, schema: try node(at: here.appending(m.key))))
                    }
                }
                if !required.isEmpty { keywords.append(.dependentRequired(required)) }
                if !schemas.isEmpty { keywords.append(.dependentSchemas(schemas)) }
            }
        } else if let v = object["dependentSchemas"] {
            let schemas = try schemaMap(v, at: location.appending("dependentSchemas"), keyword: "dependentSchemas")
            if !schemas.isEmpty { keywords.append(.dependentSchemas(schemas.map { DependentSchema(property: $0.key, schema: $0.schema) })) }
        }
        if let items = try itemsApplicator(object, at: location, draft7: draft7) { keywords.append(.items(items)) }
        if let schema = try optionalNode(object, "contains", at: location) {
            let useLimits = validation && !draft7
            let min = useLimits ? try nonNegativeInteger(object, "minContains", at: location) : nil
            let max = useLimits ? try nonNegativeInteger(object, "maxContains", at: location) : nil
            keywords.append(.contains(ContainsApplicator(schema: schema, min: min ?? 1, max: max)))
        }
        var named: [(key: String, schema: Int32)] = []
        if let v = object["properties"] { named = try schemaMap(v, at: location.appending("properties"), keyword: "properties") }
        var patterns: [PropertiesApplicator.Pattern] = []
        if let v = object["patternProperties"] {
            let here = location.appending("patternProperties")
            for entry in try schemaMap(v, at: here, keyword: "patternProperties") {
                patterns.append(.init(regex: try regex(entry.key, at: here.appending(entry.key)), schema: entry.schema))
            }
        }
        let additional = try optionalNode(object, "additionalProperties", at: location)
        if !named.isEmpty || !patterns.isEmpty || additional != nil {
            keywords.append(.properties(PropertiesApplicator(named: named, patterns: patterns, additional: additional)))
        }
        if let names = try optionalNode(object, "propertyNames", at: location) { keywords.append(.propertyNames(names)) }
    }

    private mutating func itemsApplicator(_ object: JSONObject, at location: SchemaLocation, draft7: Bool) throws(JSONSchemaError)
        -> ItemsApplicator?
    {
        if draft7 {
            guard let items = object["items"] else { return nil }
            guard case .array = items else {
                return ItemsApplicator(
                    prefix: [], rest: try node(at: location.appending("items")), prefixKeyword: "items", restKeyword: "items")
            }
            let prefix = try schemaArray(items, at: location.appending("items"), keyword: "items")
            let rest = try optionalNode(object, "additionalItems", at: location)
            return ItemsApplicator(prefix: prefix, rest: rest, prefixKeyword: "items", restKeyword: "additionalItems")
        }
        var prefix: [Int32] = []
        if let v = object["prefixItems"] { prefix = try schemaArray(v, at: location.appending("prefixItems"), keyword: "prefixItems") }
        let rest = try optionalNode(object, "items", at: location)
        if prefix.isEmpty && rest == nil { return nil }
        return ItemsApplicator(prefix: prefix, rest: rest, prefixKeyword: "prefixItems", restKeyword: "items")
    }
}
