import Foundation
import JSONSchema
import JSONStream
import Synchronization

/// Schema files on disk found by their `$id`, so that schemas which refer to each other by URI
/// (`"$ref": "eslintrc.json"` in a schema whose `$id` is `https://json.schemastore.org/package.json`)
/// resolve offline; and folders that stand for URI prefixes (`--ref-map`). Nothing is ever fetched
/// over the network.
public final class SchemaCatalog: Sendable {
    /// Larger `.json` files are not read when a folder is scanned (they are dumps, not schemas).
    public static let maxSchemaBytes = 16 << 20

    /// Folders are scanned when a reference first needs them.
    private struct State {
        var pending: [(directory: URL, recursive: Bool)] = []
        var added: Set<String> = []
        /// `$id` (absolute, without fragment) -> the files that declare it, each read once.
        var files: [String: [(path: String, schema: JSONValue)]] = [:]
        var prefixes: [(prefix: String, directory: URL)] = []
    }

    private let state = Mutex(State())

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
        state.withLock { state in
            if state.added.insert(url.path + (recursive ? "/**" : "")).inserted { state.pending.append((url, recursive)) }
        }
    }

    /// Serves the files below `directory` as the URIs starting with `prefix` (`--ref-map`).
    public func addPrefix(_ prefix: String, directory: String) {
        state.withLock { state in
            state.prefixes.append((prefix.hasSuffix("/") ? prefix : prefix + "/", URL(fileURLWithPath: directory).standardizedFileURL))
        }
    }

    /// A resolver that answers with `first` (a schema's own folder by `file:` URI: no folder is
    /// scanned for those), then the registered `$id`s, then the prefixes.
    public func resolver(first: JSONSchemaResolver = .none) -> JSONSchemaResolver {
        JSONSchemaResolver { uri in
            if let value = try first.document(for: uri) { return value }
            if let value = try self.document(declaring: uri) { return value }
            for server in self.state.withLock({ $0.prefixes }).map({ JSONSchemaResolver.directory($0.directory, servedAs: $0.prefix) }) {
                if let value = try server.document(for: uri) { return value }
            }
            return nil
        }
    }

    /// The schema whose `$id` is `uri`; an error when several files declare it.
    private func document(declaring uri: String) throws -> JSONValue? {
        let declaring = state.withLock { state in
            while !state.pending.isEmpty {
                let next = state.pending.removeFirst()
                Self.scan(next.directory, recursive: next.recursive, into: &state.files)
            }
            return state.files[uri]
        }
        guard let declaring else { return nil }
        guard declaring.count == 1 else {
            throw InputError(
                file: declaring[0].path,
                message: "its $id \(uri) is also that of \(declaring.dropFirst().map(\.path).joined(separator: ", "))")
        }
        return declaring[0].schema
    }

    private static func scan(_ directory: URL, recursive: Bool, into files: inout [String: [(path: String, schema: JSONValue)]]) {
        let fm = FileManager.default
        let names =
            recursive
            ? (fm.enumerator(atPath: directory.path)?.allObjects as? [String] ?? [])
            : (try? fm.contentsOfDirectory(atPath: directory.path)) ?? []
        for name in names.sorted() where name.hasSuffix(".json") {
            let path = directory.appendingPathComponent(name).path
            guard let size = (try? fm.attributesOfItem(atPath: path))?[.size] as? Int, size <= maxSchemaBytes,
                let data = fm.contents(atPath: path),
                let value = try? JSONReader(source: MemoryByteSource([UInt8](data))).readValue(),
                case .string(let id)? = value.objectValue?["$id"]
            else { continue }
            let uri = SchemaURI(id)
            guard uri.isAbsolute else { continue }
            let key = uri.withoutFragment.description
            if !(files[key]?.contains { $0.path == path } ?? false) { files[key, default: []].append((path, value)) }
        }
    }
}
