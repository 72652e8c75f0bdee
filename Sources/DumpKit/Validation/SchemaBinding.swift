import Foundation
import JSONSchema
import JSONStream
import Yams

/// A schema bound to the records a pattern matches (`--schema PATTERN=FILE`, `--schema-map`).
public struct SchemaBinding {
    public var pattern: PathPattern
    /// The schema file, as findings name it.
    public var file: String
    public var schema: JSONSchema

    /// Compiles the schema at `file` for the records `pattern` matches; errors name the file.
    /// `$ref`s resolve against the file's folder, by `$id` among the schemas of that folder and
    /// of `catalog`, and through the catalog's URI prefixes; never over the network.
    public static func load(pattern: String, file: String, catalog: SchemaCatalog = SchemaCatalog()) throws -> SchemaBinding {
        let p = try PathPattern(pattern)
        let url = URL(fileURLWithPath: file).standardizedFileURL
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw InputError(file: file, message: "cannot read the schema")
        }
        let value = try JSONReader(source: MemoryByteSource([UInt8](data)), sourceName: file).readValue()
        let dir = url.deletingLastPathComponent()
        let base = "file://" + dir.path + "/"
        try catalog.addDirectory(dir.path, recursive: false)
        do {
            let schema = try JSONSchema.compile(
                value, baseURI: base + url.lastPathComponent,
                resolver: catalog.resolver(first: .directory(dir, servedAs: base)))
            return SchemaBinding(pattern: p, file: file, schema: schema)
        } catch  where error.kind == .unresolvableReference {
            throw InputError(
                file: file,
                message: "invalid schema: \(error) (schemas are found by $id in this schema's folder and in "
                    + "--schema-dir folders, or by --ref-map URI-PREFIX=DIR; never over the network)")
        } catch {
            throw InputError(file: file, message: "invalid schema: \(error)")
        }
    }

    /// Reads a schema map (JSON or YAML: `{"/v1/todolist/{id}": "todolist.schema.json"}`), with
    /// files relative to the map.
    public static func loadMap(_ path: String, catalog: SchemaCatalog = SchemaCatalog()) throws -> [SchemaBinding] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw InputError(file: path, message: "cannot read the schema map")
        }
        let dir = URL(fileURLWithPath: path).deletingLastPathComponent()
        let parsed: Any?
        do {
            parsed = try Yams.load(yaml: String(decoding: data, as: UTF8.self))
        } catch {
            throw InputError(file: path, message: "not a YAML or JSON map: \(error)")
        }
        guard let map = parsed as? [String: Any] else {
            throw InputError(file: path, message: "expected a map of path patterns to schema files")
        }
        return try map.keys.sorted().map { pattern in
            guard let file = map[pattern] as? String else {
                throw InputError(file: path, message: "the schema for \(pattern) must be a file name")
            }
            let full = file.hasPrefix("/") ? file : dir.appendingPathComponent(file).path
            return try load(pattern: pattern, file: full, catalog: catalog)
        }
    }

    /// `finding` put in this schema's group (JUnit output has one test case per schema file).
    func tagged(_ finding: Finding) -> Finding {
        var f = finding
        f.group = "schema:" + file
        return f
    }
}
