import JSONStream

/// A position in one of the registry's documents: the key under which a subschema compiles once.
struct SchemaLocation: Hashable, Sendable {
    var document: Int
    /// JSON Pointer from the document root.
    var pointer: String

    func appending(_ segment: String) -> SchemaLocation {
        SchemaLocation(document: document, pointer: pointer + "/" + JSONPointer.escape(segment))
    }

    func appending(_ index: Int) -> SchemaLocation {
        SchemaLocation(document: document, pointer: pointer + "/" + String(index))
    }
}

/// Every schema document a compilation uses, with its resources (`$id`), anchors and base URIs.
///
/// Documents are indexed when added: the walk visits exactly the subschemas of known applicator
/// keywords (so an `$id` inside `enum` or an unknown keyword identifies nothing) and records each
/// subschema's base URI, dialect and resource. References then resolve by lookup.
final class SchemaRegistry {
    /// A schema resource: a document root or a subschema with its own `$id`.
    struct Resource {
        /// The canonical absolute URI (without fragment).
        let uri: String
        let location: SchemaLocation
        /// `$anchor` and `$dynamicAnchor` names (and draft-07 `"$id": "#name"`) to pointers.
        var anchors: [String: String] = [:]
        /// `$dynamicAnchor` names to pointers.
        var dynamicAnchors: [String: String] = [:]
    }

    /// What the walk recorded about one subschema.
    struct LocationInfo {
        /// The base URI for resolving references inside it (its own `$id` applied).
        let base: SchemaURI
        let dialect: SchemaDialect
        let resource: Int
    }

    private(set) var documents: [(value: JSONValue, uri: String)] = []
    private var documentByURI: [String: Int] = [:]
    private(set) var resources: [Resource] = []
    private var resourceByURI: [String: Int] = [:]
    private var locations: [SchemaLocation: LocationInfo] = [:]
    private var metaschemaDialects: [String: SchemaDialect] = [:]
    private var metaschemasLoading: Set<String> = []
    private let resolver: JSONSchemaResolver
    private let defaultDialect: SchemaDialect

    init(resolver: JSONSchemaResolver, defaultDialect: SchemaDialect) {
        self.resolver = resolver
        self.defaultDialect = defaultDialect
    }

    // MARK: - Documents

    /// Adds and indexes a document retrieved from (or given as) `uri`; returns its index.
    @discardableResult
    func addDocument(_ value: JSONValue, uri: String) throws(JSONSchemaError) -> Int {
        let document = documents.count
        documents.append((value, uri))
        documentByURI[uri] = document
        try walk(value, SchemaLocation(document: document, pointer: ""), base: SchemaURI(uri), dialect: defaultDialect, resource: nil)
        return document
    }

    /// The resource registered for `uri`, loading the document from the built-in metaschemas or
    /// the resolver when it is not known yet.
    private func resource(for uri: String, from location: SchemaLocation) throws(JSONSchemaError) -> Int? {
        if let r = resourceByURI[uri] { return r }
        guard documentByURI[uri] == nil else { return nil }
        let value: JSONValue?
        if let text = Metaschemas.text(for: uri) {
            do {
                value = try JSONReader(source: MemoryByteSource(text)).readValue()
            } catch {
                throw self.error(.resolverFailed, "built-in metaschema \(uri) is not valid JSON: \(error)", at: location)
            }
        } else {
            do {
                value = try resolver.document(for: uri)
            } catch {
                throw self.error(.resolverFailed, "cannot load \(uri): \(error)", at: location)
            }
        }
        guard let value else { return nil }
        try addDocument(value, uri: uri)
        return resourceByURI[uri]
    }

    /// The value at `location`, if the pointer leads anywhere.
    func value(at location: SchemaLocation) -> JSONValue? {
        guard let segments = JSONPointer.segments(location.pointer) else { return nil }
        return documents[location.document].value.value(at: segments)
    }

    /// What the walk recorded for `location`, or for its nearest recorded ancestor (a location
    /// reached by a JSON Pointer into a non-schema keyword).
    func info(at location: SchemaLocation) -> LocationInfo {
        var pointer = location.pointer
        while true {
            if let info = locations[SchemaLocation(document: location.document, pointer: pointer)] { return info }
            guard let slash = pointer.lastIndex(of: "/") else { break }
            pointer = String(pointer[..<slash])
        }
        return locations[SchemaLocation(document: location.document, pointer: "")]!
    }

    /// A compile error located at `location`.
    func error(_ kind: JSONSchemaError.Kind, _ message: String, at location: SchemaLocation) -> JSONSchemaError {
        JSONSchemaError(kind: kind, message: message, document: documents[location.document].uri, pointer: location.pointer)
    }

    // MARK: - References

    /// Resolves `reference` (a `$ref` or `$dynamicRef` value) written at the keyword `location`,
    /// against the base URI of the subschema that holds it.
    func resolve(_ reference: String, at location: SchemaLocation, base: SchemaURI) throws(JSONSchemaError) -> SchemaLocation {
        let target = base.resolving(reference)
        let resourceURI = target.withoutFragment.description
        guard let r = try resource(for: resourceURI, from: location) else {
            throw error(
                .unresolvableReference, "cannot resolve reference \"\(reference)\": no schema is known as \(resourceURI)", at: location)
        }
        let resource = resources[r]
        let fragment = SchemaURI.percentDecoded(target.fragment ?? "")
        if fragment.isEmpty { return resource.location }
        if fragment.hasPrefix("/") {
            let segments = JSONPointer.segments(fragment) ?? []
            let found = SchemaLocation(
                document: resource.location.document, pointer: resource.location.pointer + JSONPointer.string(segments))
            guard value(at: found) != nil else {
                throw error(
                    .unresolvableReference, "cannot resolve reference \"\(reference)\": \(resource.uri) has nothing at \(fragment)",
                    at: location)
            }
            return found
        }
        guard let pointer = resource.anchors[fragment] else {
            throw error(
                .unresolvableReference, "cannot resolve reference \"\(reference)\": \(resource.uri) has no anchor \"\(fragment)\"",
                at: location)
        }
        return SchemaLocation(document: resource.location.document, pointer: pointer)
    }

    // MARK: - Dialects

    /// The dialect a `$schema` value selects.
    private func dialect(forMetaschema text: String, at location: SchemaLocation) throws(JSONSchemaError) -> SchemaDialect {
        let uri = SchemaURI(text).description
        if let builtin = SchemaDialect.builtin(uri) { return builtin }
        if let known = metaschemaDialects[uri] { return known }
        guard !metaschemasLoading.contains(uri) else {
            throw error(.unsupportedDialect, "metaschema \(uri) describes itself without a known dialect", at: location)
        }
        metaschemasLoading.insert(uri)
        defer { metaschemasLoading.remove(uri) }
        guard let r = try resource(for: uri, from: location), let root = value(at: resources[r].location)?.objectValue else {
            throw error(.unsupportedDialect, "unknown or unsupported $schema \"\(text)\"", at: location)
        }
        let dialect: SchemaDialect
        if let vocabulary = root["$vocabulary"] {
            guard case .object(let entries) = vocabulary else {
                throw error(.invalidKeyword, "$vocabulary must be an object", at: resources[r].location.appending("$vocabulary"))
            }
            var vocabularies: SchemaDialect.Vocabularies = [.core]
            for entry in entries {
                if let known = SchemaDialect.vocabularyURIs[entry.key] {
                    vocabularies.insert(known)
                } else if entry.value == .bool(true) {
                    throw error(.unsupportedDialect, "metaschema \(uri) requires the unsupported vocabulary \(entry.key)", at: location)
                }
            }
            dialect = SchemaDialect(draft: .draft2020_12, vocabularies: vocabularies)
        } else {
            dialect = info(at: resources[r].location).dialect
        }
        metaschemaDialects[uri] = dialect
        return dialect
    }

    // MARK: - Indexing

    private func register(_ uri: String, resource: Int, at location: SchemaLocation) throws(JSONSchemaError) {
        if let existing = resourceByURI[uri], resources[existing].location != location {
            throw error(.invalidKeyword, "duplicate schema identifier \(uri)", at: location)
        }
        resourceByURI[uri] = resource
    }

    private func newResource(_ uri: String, at location: SchemaLocation) throws(JSONSchemaError) -> Int {
        resources.append(Resource(uri: uri, location: location))
        try register(uri, resource: resources.count - 1, at: location)
        return resources.count - 1
    }

    /// Records `value` (a subschema at `location`) and everything below it.
    private func walk(_ value: JSONValue, _ location: SchemaLocation, base: SchemaURI, dialect: SchemaDialect, resource: Int?)
        throws(JSONSchemaError)
    {
        guard case .object(let object) = value else {
            var r = resource
            if r == nil { r = try newResource(base.withoutFragment.description, at: location) }
            locations[location] = LocationInfo(base: base, dialect: dialect, resource: r!)
            return
        }
        var base = base, dialect = dialect, resource = resource
        var id: String?
        if let idValue = object["$id"] {
            guard case .string(let text) = idValue else {
                throw error(.invalidKeyword, "$id must be a string", at: location.appending("$id"))
            }
            id = text
        }
        if resource == nil || id != nil, let schema = object["$schema"] {
            guard case .string(let text) = schema else {
                throw error(.invalidKeyword, "$schema must be a string", at: location.appending("$schema"))
            }
            dialect = try self.dialect(forMetaschema: text, at: location.appending("$schema"))
        }
        let draft7 = dialect.draft == .draft7
        if draft7 && object["$ref"] != nil { id = nil }  // draft-07: `$ref` makes siblings (even `$id`) ignored
        var idAnchor: String?
        if resource == nil {
            resource = try newResource(base.withoutFragment.description, at: location)
        }
        if let id {
            let resolved = base.resolving(id)
            let fragment = resolved.fragment ?? ""
            if !fragment.isEmpty {
                guard draft7 else {
                    throw error(.invalidKeyword, "$id must not have a fragment (use $anchor)", at: location.appending("$id"))
                }
                idAnchor = fragment
            }
            if !(draft7 && id.hasPrefix("#")) {
                base = resolved.withoutFragment
                let uri = base.description
                if resources[resource!].location == location {
                    try register(uri, resource: resource!, at: location)
                } else {
                    resource = try newResource(uri, at: location)
                }
            }
        }
        let r = resource!
        locations[location] = LocationInfo(base: base, dialect: dialect, resource: r)
        if let idAnchor { resources[r].anchors[idAnchor] = location.pointer }
        if !draft7 {
            for keyword in ["$anchor", "$dynamicAnchor"] {
                guard let anchor = object[keyword] else { continue }
                guard case .string(let name) = anchor else {
                    throw error(.invalidKeyword, "\(keyword) must be a string", at: location.appending(keyword))
                }
                resources[r].anchors[name] = location.pointer
                if keyword == "$dynamicAnchor" { resources[r].dynamicAnchors[name] = location.pointer }
            }
        }
        for member in object.members {
            let here = location.appending(member.key)
            switch SchemaRegistry.subschemaShape(member.key, draft7: draft7) {
            case .none:
                break
            case .schema:
                try walk(member.value, here, base: base, dialect: dialect, resource: r)
            case .array, .schemaOrArray:
                guard case .array(let elements) = member.value else {
                    try walk(member.value, here, base: base, dialect: dialect, resource: r)
                    break
                }
                for (i, element) in elements.enumerated() {
                    try walk(element, here.appending(i), base: base, dialect: dialect, resource: r)
                }
            case .map:
                // Array values (draft-07 `dependencies` lists of names) are not schemas.
                for entry in member.value.objectValue?.members ?? [] where entry.value.arrayValue == nil {
                    try walk(entry.value, here.appending(entry.key), base: base, dialect: dialect, resource: r)
                }
            }
        }
    }

    /// How a keyword holds subschemas.
    private enum Shape {
        case none, schema, array, map
        /// draft-07 `items`: a schema or an array of schemas.
        case schemaOrArray
    }

    private static func subschemaShape(_ keyword: String, draft7: Bool) -> Shape {
        switch keyword {
        case "additionalProperties", "propertyNames", "contains", "if", "then", "else", "not": return .schema
        case "allOf", "anyOf", "oneOf": return .array
        case "properties", "patternProperties", "definitions": return .map
        case "items": return draft7 ? .schemaOrArray : .schema
        case "additionalItems": return draft7 ? .schema : .none
        case "dependencies": return draft7 ? .map : .none
        case "prefixItems": return draft7 ? .none : .array
        case "$defs", "dependentSchemas": return draft7 ? .none : .map
        case "unevaluatedItems", "unevaluatedProperties", "contentSchema": return draft7 ? .none : .schema
        default: return .none
        }
    }
}
