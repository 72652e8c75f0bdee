import JSONStream

/// A compiled JSON Schema (draft 2020-12, or draft-07 when `$schema` says so) that validates
/// instances into `SchemaViolation`s.
///
/// Compile once, then validate any number of instances, from any number of threads:
///
///     let schema = try JSONSchema.compile(schemaValue)
///     let violations = schema.validate(record, pointerPrefix: "/v1/todolist/-Kabc")
///
/// Every keyword is checked and every reference resolved while compiling, so a schema that
/// compiles never fails later. Instances are evaluated on a `JSONTape` (a `JSONValue` is laid out on
/// one first). Violations (keyword, instance pointer, schema path, one-line message) and their
/// pointers are only built for invalid instances.
/// `format` is an annotation unless `Options.assertFormat` is set or the schema's metaschema
/// enables the format-assertion vocabulary.
public struct JSONSchema: Sendable {
    /// The dialects this implementation understands.
    public enum Dialect: Sendable {
        case draft2020_12
        case draft7

        var dialect: SchemaDialect {
            switch self {
            case .draft2020_12: return .draft2020_12
            case .draft7: return .draft7
            }
        }
    }

    /// Compilation settings.
    public struct Options: Sendable {
        /// The dialect of schemas (and referenced documents) without a `$schema`.
        public var defaultDialect: Dialect
        /// Whether `format` is validated (the common formats are; unknown ones are ignored).
        public var assertFormat: Bool

        public init(defaultDialect: Dialect = .draft2020_12, assertFormat: Bool = false) {
            self.defaultDialect = defaultDialect
            self.assertFormat = assertFormat
        }
    }

    /// A member of a schema object that no keyword of its draft has: it checks nothing.
    public struct UnknownKeyword: Hashable, Sendable {
        public let name: String
        /// Where it is written (`#/properties/title/minLenght`).
        public let schemaPath: String
        /// A known keyword close to it (`minLength`), if there is one.
        public let suggestion: String?
    }

    /// Members of the compiled subschemas that are not keywords (`x-` extensions are not counted).
    public var unknownKeywords: [UnknownKeyword] { program.unknownKeywords }

    /// The base URI of a schema compiled without one (relative references resolve against it).
    public static let defaultBaseURI = "urn:dumpkit:schema"

    private let program: SchemaProgram

    private init(program: SchemaProgram) { self.program = program }

    /// Compiles `schema`, whose retrieval URI is `baseURI` (its `$id`, if any, takes precedence for
    /// references inside it), loading other referenced documents through `resolver`.
    ///
    /// Throws `JSONSchemaError` when a keyword is malformed, a reference cannot be resolved, or
    /// `$schema` names an unsupported dialect; the error names the place as a JSON Pointer.
    public static func compile(
        _ schema: JSONValue, baseURI: String = defaultBaseURI, resolver: JSONSchemaResolver = .none,
        options: Options = Options()
    ) throws(JSONSchemaError) -> JSONSchema {
        guard SchemaURI(baseURI).isAbsolute else {
            throw JSONSchemaError(kind: .invalidKeyword, message: "the base URI must be absolute", document: baseURI, pointer: "")
        }
        let registry = SchemaRegistry(resolver: resolver, defaultDialect: options.defaultDialect.dialect)
        let document = try registry.addDocument(schema, uri: SchemaURI(baseURI).withoutFragment.description)
        let program = try SchemaCompiler.compile(
            root: SchemaLocation(document: document, pointer: ""), registry: registry,
            assertFormat: options.assertFormat)
        return JSONSchema(program: program)
    }

    /// Whether `instance` is valid (stops at the first failure; the value is laid out on a tape).
    public func isValid(_ instance: JSONValue) -> Bool {
        isValid(Self.tape(of: instance))
    }

    /// The problems with `instance`, empty when it is valid. Pointers are instance locations,
    /// prefixed with `pointerPrefix` (the instance's own location in the dump).
    public func validate(_ instance: JSONValue, pointerPrefix: String = "") -> [SchemaViolation] {
        validate(Self.tape(of: instance), pointerPrefix: pointerPrefix)
    }

    /// Whether the value at entry `index` of `tape` (its root by default) is valid, stopping at the
    /// first failure. Only `enum`/`const` with containers and `uniqueItems` build `JSONValue`s, and
    /// `format` a `String`.
    public func isValid(_ tape: JSONTape, at index: Int = 0) -> Bool {
        var evaluator = SchemaEvaluator(program: program, tape: tape, pointerPrefix: "")
        return evaluator.evaluateRoot(at: index, report: false)
    }

    /// The problems with the value at entry `index` of `tape`, as `validate(_:pointerPrefix:)` finds them.
    public func validate(_ tape: JSONTape, at index: Int = 0, pointerPrefix: String = "") -> [SchemaViolation] {
        var evaluator = SchemaEvaluator(program: program, tape: tape, pointerPrefix: pointerPrefix)
        if evaluator.evaluateRoot(at: index, report: false) { return [] }
        _ = evaluator.evaluateRoot(at: index, report: true)
        return evaluator.violations
    }

    private static func tape(of value: JSONValue) -> JSONTape {
        let tape = JSONTape()
        tape.fill(value)
        return tape
    }
}
