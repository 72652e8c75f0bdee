import Foundation
import JSONStream

/// Schema files on disk found by their `$id`, so that schemas which refer to each other by URI
/// (`"$ref": "eslintrc.json"` in a schema whose `$id` is `https://json.schemastore.org/package.json`)
/// resolve offline; and folders that stand for URI prefixes (`--ref-map`). Nothing is ever fetched
/// over the network.
public final class SchemaCatalog {
    /// Larger `.json` files are not read when a folder is scanned (they are dumps, not schemas).
    public static let maxSchemaBytes = 16 << 20

    /// `$id` (absolute, without fragment) -> the files that declare it.
    private var files: [String: [String]] = [:]
    private var scanned: Set<String> = []
    private var prefixes: [(prefix: String, directory: URL)] = []

    public init() {}

    /// Registers every `.json` file in `directory` (and in its subfolders with `recursive`) whose
    /// root has an absolute `$id`; files that do not parse, have no such `$id` or are larger than
    /// `maxSchemaBytes` are passed over. A folder is scanned once.
    public func addDirectory(_ directory: String, recursive: Bool) throws {
        let root = URL(fileURLWithPath: directory).standardizedFileURL
        guard scanned.insert(root.path + (recursive ? "/**" : "")).inserted else { return }
        let fm = FileManager.default
        var isDirectory: ObjCBool = false
        guard fm.fileExists(atPath: root.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw InputError(file: directory, message: "not a folder of schemas")
        }
        let names = recursive ? (fm.enumerator(atPath: root.path)?.allObjects as? [String] ?? []) : try fm.contentsOfDirectory(atPath: root.path)
        for name in names.sorted() where name.hasSuffix(".json") {
            let path = root.appendingPathComponent(name).path
            guard let size = (try? fm.attributesOfItem(atPath: path))?[.size] as? Int, size <= Self.maxSchemaBytes,
                  let data = fm.contents(atPath: path),
                  let value = try? JSONReader(source: MemoryByteSource([UInt8](data))).readValue(),
                  case .string(let id)? = value.objectValue?["$id"] else { continue }
            let uri = SchemaURI(id)
            guard uri.isAbsolute else { continue }
            let key = uri.withoutFragment.description
            if !(files[key]?.contains(path) ?? false) { files[key, default: []].append(path) }
        }
    }

    /// Serves the files below `directory` as the URIs starting with `prefix` (`--ref-map`).
    public func addPrefix(_ prefix: String, directory: String) {
        prefixes.append((prefix.hasSuffix("/") ? prefix : prefix + "/", URL(fileURLWithPath: directory).standardizedFileURL))
    }

    /// A resolver that answers the registered `$id`s, then the prefixes, then `fallback`.
    public func resolver(fallback: JSONSchemaResolver = .none) -> JSONSchemaResolver {
        let files = self.files
        let servers = prefixes.map { JSONSchemaResolver.directory($0.directory, servedAs: $0.prefix) }
        return JSONSchemaResolver { uri in
            if let paths = files[uri] {
                guard paths.count == 1 else {
                    throw InputError(file: paths[0], message: "its $id \(uri) is also that of \(paths.dropFirst().joined(separator: ", "))")
                }
                guard let data = FileManager.default.contents(atPath: paths[0]) else { throw InputError(file: paths[0], message: "cannot read the schema") }
                return try JSONReader(source: MemoryByteSource([UInt8](data)), sourceName: paths[0]).readValue()
            }
            for server in servers {
                if let value = try server.document(for: uri) { return value }
            }
            return try fallback.document(for: uri)
        }
    }
}
