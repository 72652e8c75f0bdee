/// The draft and the active vocabularies that one schema resource is compiled with.
///
/// A resource's `$schema` picks it: the two built-in metaschema URIs map directly; any other
/// metaschema is loaded and its `$vocabulary` decides which 2020-12 keyword groups apply.
struct SchemaDialect: Hashable, Sendable {
    /// The specification release whose keyword semantics apply.
    enum Draft: Hashable, Sendable {
        case draft7
        case draft2020_12
    }

    /// Keyword groups of draft 2020-12 (draft-07 has no vocabularies; it uses the same flags).
    struct Vocabularies: OptionSet, Hashable, Sendable {
        let rawValue: UInt8
        static let core = Vocabularies(rawValue: 1 << 0)
        static let applicator = Vocabularies(rawValue: 1 << 1)
        static let unevaluated = Vocabularies(rawValue: 1 << 2)
        static let validation = Vocabularies(rawValue: 1 << 3)
        static let formatAnnotation = Vocabularies(rawValue: 1 << 4)
        /// `format` is an assertion, not only an annotation.
        static let formatAssertion = Vocabularies(rawValue: 1 << 5)
        static let content = Vocabularies(rawValue: 1 << 6)
        static let metaData = Vocabularies(rawValue: 1 << 7)
    }

    var draft: Draft
    var vocabularies: Vocabularies

    static let draft2020_12 = SchemaDialect(
        draft: .draft2020_12,
        vocabularies: [.core, .applicator, .unevaluated, .validation, .formatAnnotation, .content, .metaData])
    static let draft7 = SchemaDialect(
        draft: .draft7, vocabularies: [.core, .applicator, .validation, .formatAnnotation, .content, .metaData])

    /// Every keyword the draft defines, in any vocabulary (plus `definitions` and `$defs`, the
    /// places both drafts' schemas keep subschemas in). Anything else in a schema is ignored, and
    /// reported as unknown (a typo such as `minLenght` silently checks nothing).
    var knownKeywords: Set<String> {
        switch draft {
        case .draft2020_12: return Self.keywords2020_12
        case .draft7: return Self.keywordsDraft7
        }
    }

    private static let keywords2020_12: Set<String> = [
        "$schema", "$id", "$anchor", "$dynamicAnchor", "$ref", "$dynamicRef", "$defs", "definitions", "$comment",
        "$vocabulary", "allOf", "anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas", "prefixItems", "items",
        "contains", "properties", "patternProperties", "additionalProperties", "propertyNames", "unevaluatedItems",
        "unevaluatedProperties", "type", "const", "enum", "multipleOf", "maximum", "exclusiveMaximum", "minimum",
        "exclusiveMinimum", "maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems", "maxContains",
        "minContains", "maxProperties", "minProperties", "required", "dependentRequired", "format", "contentEncoding",
        "contentMediaType", "contentSchema", "title", "description", "default", "deprecated", "readOnly", "writeOnly",
        "examples",
    ]

    private static let keywordsDraft7: Set<String> = [
        "$schema", "$id", "$ref", "$comment", "definitions", "$defs", "allOf", "anyOf", "oneOf", "not", "if", "then",
        "else", "items", "additionalItems", "contains", "properties", "patternProperties", "additionalProperties",
        "dependencies", "propertyNames", "type", "enum", "const", "multipleOf", "maximum", "exclusiveMaximum", "minimum",
        "exclusiveMinimum", "maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems", "maxProperties",
        "minProperties", "required", "format", "contentEncoding", "contentMediaType", "title", "description", "default",
        "readOnly", "writeOnly", "examples",
    ]

    /// The metaschema URIs (without an empty fragment) that select a dialect without loading anything.
    static func builtin(_ metaschemaURI: String) -> SchemaDialect? {
        switch metaschemaURI {
        case "https://json-schema.org/draft/2020-12/schema": return .draft2020_12
        case "http://json-schema.org/draft-07/schema", "https://json-schema.org/draft-07/schema": return .draft7
        default: return nil
        }
    }

    /// The 2020-12 vocabulary URIs this implementation knows.
    static let vocabularyURIs: [String: Vocabularies] = [
        "https://json-schema.org/draft/2020-12/vocab/core": .core,
        "https://json-schema.org/draft/2020-12/vocab/applicator": .applicator,
        "https://json-schema.org/draft/2020-12/vocab/unevaluated": .unevaluated,
        "https://json-schema.org/draft/2020-12/vocab/validation": .validation,
        "https://json-schema.org/draft/2020-12/vocab/format-annotation": .formatAnnotation,
        "https://json-schema.org/draft/2020-12/vocab/format-assertion": .formatAssertion,
        "https://json-schema.org/draft/2020-12/vocab/content": .content,
        "https://json-schema.org/draft/2020-12/vocab/meta-data": .metaData,
    ]
}
