import Foundation
import JSONStream

/// Supplies schema documents for `$ref` and `$schema` URIs outside the schema being compiled.
///
/// The compiler asks the resolver only for URIs it has not seen; the draft 2020-12 and draft-07
/// metaschemas are built in and never reach it. Nothing here touches the network.
public struct JSONSchemaResolver: Sendable {
    private let load: @Sendable (String) throws -> JSONValue?

    /// A resolver from a closure that returns the document for an absolute URI (without fragment),
    /// `nil` when it has none, or throws when loading fails.
    public init(_ load: @escaping @Sendable (_ uri: String) throws -> JSONValue?) {
        self.load = load
    }

    /// Resolves nothing beyond the built-in metaschemas.
    public static let none = JSONSchemaResolver { _ in nil }

    /// Serves the JSON files below `directory` as the URIs starting with `prefix`.
    ///
    /// For example `directory(remotes, servedAs: "http://localhost:1234/")` answers
    /// `http://localhost:1234/nested/string.json` with `remotes/nested/string.json`. Paths that
    /// would leave the directory (`..`) resolve to nothing.
    public static func directory(_ directory: URL, servedAs prefix: String) -> JSONSchemaResolver {
        JSONSchemaResolver { uri in
            guard uri.hasPrefix(prefix) else { return nil }
            let relative = String(uri.dropFirst(prefix.count))
            let segments = relative.split(separator: "/", omittingEmptySubsequences: false)
            guard !relative.isEmpty, !segments.contains(where: { $0 == ".." || $0 == "." || $0.isEmpty }) else { return nil }
            let file = segments.reduce(directory) { $0.appendingPathComponent(String($1)) }
            guard let data = FileManager.default.contents(atPath: file.path) else { return nil }
            return try JSONReader(source: MemoryByteSource([UInt8](data)), sourceName: file.path).readValue()
        }
    }

    /// The document for `uri`, if this resolver has one.
    package func document(for uri: String) throws -> JSONValue? { try load(uri) }
}
