import Foundation
import JSONSchema
import JSONStream

/// Schema files on disk found by their `$id`, so that schemas which refer to each other by URI
/// (`"$ref": "eslintrc.json"` in a schema whose `$id` is `https://json.schemastore.org/package.json`)
/// resolve offline; and folders that stand for URI prefixes (`--ref-map`). Nothing is ever fetched
/// over the network.
public final class SchemaCatalog: @unchecked Sendable {
    /// Larger `.json` files are not read when a folder is scanned (they are dumps, not schemas).
    public static let maxSchemaBytes = 16 << 20

    // Folders are scanned when a reference first needs them; under `lock`.
    private let lock = NSLock()
    private var pending: [(directory: URL, recursive: Bool)] = []
    private var added: Set<String> = []
    /// `$id` (absolute, without fragment) -> the files that declare it.
    private var files: [String: [String]] = [:]
    private var prefixes: [(prefix: String, directory: URL)] = []

    public init() {}

    /// Registers every `.json` file in `directory` (and in its subfolders with `recursive`) whose
    /// root has an absolute `$id`; files that do not parse, have no such `$id` or are larger than
    /// `maxSchemaBytes` are passed over. The folder is read once, when a reference first needs it.
    public func addDirectory(_ directory: String, recursive: Bool) throws {
        let url = URL(fileURLWithPath: directory).standardizedFileURL
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw InputError(file: directory, message: "not a folder of schemas")
        }
        lock.withLock {
            if added.insert(url.path + (recursive ? "/**" : "")).inserted { pending.append((url, recursive)) }
        }
    }

    /// Serves the files below `directory` as the URIs starting with `prefix` (`--ref-map`).
    public func addPrefix(_ prefix: String, directory: String) {
        lock.withLock {
            prefixes.append((prefix.hasSuffix("/") ? prefix : prefix + "/", URL(fileURLWithPath: directory).standardizedFileURL))
        }
    }

    /// A resolver that answers with `first` (a schema's own folder by `file:` URI: no folder is
    /// scanned for those), then the registered `$id`s, then the prefixes.
    public func resolver(first: JSONSchemaResolver = .none) -> JSONSchemaResolver {
        JSONSchemaResolver { uri in
            if let value = try first.document(for: uri) { return value }
            if let value = try self.document(declaring: uri) { return value }
            for server in self.lock.withLock({ self.prefixes }).map({ JSONSchemaResolver.directory($0.directory, servedAs: $0.prefix) }) {
                if let value = try server.document(for: uri) { return value }
            }
            return nil
        }
    }

    /// The schema whose `$id` is `uri`; an error when several files declare it.
    private func document(declaring uri: String) throws -> JSONValue? {
        let paths = lock.withLock { () -> [String]? in
            while !pending.isEmpty {
                let next = pending.removeFirst()
                scan(next.directory, recursive: next.recursive)
            }
            return files[uri]
        }
        guard let paths else { return nil }
        guard paths.count == 1 else {
            throw InputError(file: paths[0], message: "its $id \(uri) is also that of \(paths.dropFirst().joined(separator: ", "))")
        }
        guard let data = FileManager.default.contents(atPath: paths[0]) else {
            throw InputError(file: paths[0], message: "cannot read the schema")
        }
        return try JSONReader(source: MemoryByteSource([UInt8](data)), sourceName: paths[0]).readValue()
    }

    private func scan(_ directory: URL, recursive: Bool) {
        let fm = FileManager.default
        let names =
            recursive
            ? (fm.enumerator(atPath: directory.path)?.allObjects as? [String] ?? [])
            : (try? fm.contentsOfDirectory(atPath: directory.path)) ?? []
        for name in names.sorted() where name.hasSuffix(".json") {
            let path = directory.appendingPathComponent(name).path
            guard let size = (try? fm.attributesOfItem(atPath: path))?[.size] as? Int, size <= Self.maxSchemaBytes,
                let data = fm.contents(atPath: path),
                let value = try? JSONReader(source: MemoryByteSource([UInt8](data))).readValue(),
                case .string(let id)? = value.objectValue?["$id"]
            else { continue }
            let uri = SchemaURI(id)
            guard uri.isAbsolute else { continue }
            let key = uri.withoutFragment.description
            if !(files[key]?.contains(path) ?? false) { files[key, default: []].append(path) }
        }
    }
}
