import ArchiveKit
import JSONStream

/// The first entry of every DumpKit archive: what the archive holds, with each object's size, hashes,
/// content type and custom metadata. It is the source of truth for `verify` and `restore`.
///
/// Written as pretty JSON under the name `.dumpkit-manifest.json` (see docs/ARCHIVES.md):
///
/// ```json
/// {
///   "format": "dumpkit-archive", "formatVersion": 1, "toolVersion": "0.1.0",
///   "created": "2016-12-21T09:06:40Z", "kind": "bucket",
///   "parts": [{"role": "bucket", "path": "", "blobStore": true}],
///   "objectCount": 1, "totalBytes": 5,
///   "objects": [{"path": "v1/a.txt", "name": "v1/a.txt", "size": 5, "contentType": "text/plain", "sha256": "...", ...}]
/// }
/// ```
public struct ArchiveManifest: Sendable, Equatable {
    /// The entry name of the manifest.
    public static let entryName = ".dumpkit-manifest.json"
    /// The value of `format`.
    public static let formatName = "dumpkit-archive"
    /// The newest manifest version this DumpKit writes and reads.
    public static let currentVersion = 1

    /// What the archive was made from.
    public enum Kind: String, Sendable {
        /// One bucket directory (`dumpkit archive`).
        case bucket
        /// A backup set: a dump, optionally its rules and its bucket (`dumpkit backup`).
        case backup
    }

    /// One part of the archive: the bucket's objects, the dump or the rules file.
    public struct Part: Sendable, Equatable {
        /// What the part is.
        public enum Role: String, Sendable {
            case dump, rules, bucket
        }

        public var role: Role
        /// The entry path of a file part, or the prefix of a bucket's entries (`""` or `"bucket/"`).
        public var path: String
        /// Whether the bucket was a DumpKit blob store, whose metadata sidecars `restore` writes back.
        public var blobStore: Bool

        public init(role: Role, path: String, blobStore: Bool = false) {
            self.role = role
            self.path = path
            self.blobStore = blobStore
        }
    }

    /// One object (a file entry): its entry path and its metadata (`name` relative to its part).
    public struct Object: Sendable, Equatable {
        public var path: String
        public var metadata: BlobMetadata

        public init(path: String, metadata: BlobMetadata) {
            self.path = path
            self.metadata = metadata
        }
    }

    public var formatVersion: Int
    /// The DumpKit version that wrote the archive.
    public var toolVersion: String
    /// When the archive's content was current: `SOURCE_DATE_EPOCH`, else the newest source time.
    public var created: Timestamp
    public var kind: Kind
    public var parts: [Part]
    /// The objects in archive order (sorted by path).
    public private(set) var objects: [Object]
    private var index: [String: Int]

    public init(
        created: Timestamp, kind: Kind, parts: [Part], objects: [Object], toolVersion: String = DumpKitVersion.string,
        formatVersion: Int = ArchiveManifest.currentVersion
    ) {
        self.formatVersion = formatVersion
        self.toolVersion = toolVersion
        self.created = created
        self.kind = kind
        self.parts = parts
        self.objects = objects
        index = Dictionary(objects.enumerated().map { ($1.path, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The object stored at entry path `path`.
    public func object(at path: String) -> Object? { index[path].map { objects[$0] } }

    /// The bucket part whose entries include `path`.
    public func bucketPart(containing path: String) -> Part? {
        parts.first { $0.role == .bucket && path.hasPrefix($0.path) }
    }

    /// The sum of the objects' sizes.
    public var totalBytes: Int64 { objects.reduce(0) { $0 + $1.metadata.size } }

    // MARK: JSON

    /// Writes the manifest as one JSON document (in the writer's style) and a final line break.
    public func write(to writer: JSONWriter) throws {
        try writer.beginObject()
        try writer.name("format")
        try writer.string(Self.formatName)
        try writer.name("formatVersion")
        try writer.number(JSONNumber(formatVersion))
        try writer.name("toolVersion")
        try writer.string(toolVersion)
        try writer.name("created")
        try writer.string(UTCTime.format(created))
        try writer.name("kind")
        try writer.string(kind.rawValue)
        try writer.name("parts")
        try writer.beginArray()
        for part in parts {
            try writer.value(
                .object(["role": .string(part.role.rawValue), "path": .string(part.path), "blobStore": .bool(part.blobStore)]))
        }
        try writer.endArray()
        try writer.name("objectCount")
        try writer.number(JSONNumber(objects.count))
        try writer.name("totalBytes")
        try writer.number(JSONNumber(totalBytes))
        try writer.name("objects")
        try writer.beginArray()
        for object in objects {
            guard case .object(let members) = object.metadata.jsonValue else { continue }
            try writer.beginObject()
            try writer.name("path")
            try writer.string(object.path)
            for member in members.members {
                try writer.name(member.key)
                try writer.value(member.value)
            }
            try writer.endObject()
        }
        try writer.endArray()
        try writer.endObject()
        try writer.raw("\n")
        try writer.flush()
    }

    /// Reads a manifest, one object at a time; fails with a `ManifestError` naming the problem.
    public static func read(from reader: JSONReader) throws -> ArchiveManifest {
        var version: Int?
        var toolVersion = ""
        var created: Timestamp?
        var kind: Kind?
        var parts: [Part] = []
        var objects: [Object] = []
        var isManifest = false
        guard try reader.next() == .beginObject else { throw ManifestError("the manifest is not a JSON object") }
        while try reader.next() == .name {
            let name = reader.stringValue
            switch name {
            case "format":
                isManifest = try reader.readValue().stringValue == formatName
            case "formatVersion":
                version = try reader.readValue().numberValue?.int64Value.map(Int.init)
            case "toolVersion":
                toolVersion = try reader.readValue().stringValue ?? ""
            case "created":
                let text = try reader.readValue().stringValue ?? ""
                guard let time = UTCTime.parse(text) else { throw ManifestError("\"created\" is not an ISO 8601 UTC time: \(text)") }
                created = time
            case "kind":
                let text = try reader.readValue().stringValue ?? ""
                guard let value = Kind(rawValue: text) else { throw ManifestError("unknown kind \"\(text)\"") }
                kind = value
            case "parts":
                guard let array = try reader.readValue().arrayValue else { throw ManifestError("\"parts\" must be an array") }
                parts = try array.map(part)
            case "objects":
                guard try reader.next() == .beginArray else { throw ManifestError("\"objects\" must be an array") }
                while try reader.peek() != .endArray {
                    objects.append(try object(try reader.readValue(), number: objects.count))
                }
                try reader.next()
            default:
                try reader.skipValue()
            }
        }
        guard isManifest else { throw ManifestError("not a DumpKit manifest (\"format\" is not \"\(formatName)\")") }
        guard let version, version >= 1 else { throw ManifestError("missing or invalid \"formatVersion\"") }
        guard version <= currentVersion else {
            throw ManifestError("manifest version \(version) is newer than this dumpkit reads (\(currentVersion)); upgrade dumpkit")
        }
        guard let created, let kind else { throw ManifestError("missing \"created\" or \"kind\"") }
        return ArchiveManifest(
            created: created, kind: kind, parts: parts, objects: objects, toolVersion: toolVersion, formatVersion: version)
    }

    private static func part(_ value: JSONValue) throws -> Part {
        guard let o = value.objectValue, let role = o["role"]?.stringValue.flatMap(Part.Role.init(rawValue:)),
            let path = o["path"]?.stringValue
        else { throw ManifestError("a part needs a known \"role\" and a \"path\"") }
        return Part(role: role, path: path, blobStore: o["blobStore"]?.boolValue ?? false)
    }

    private static func object(_ value: JSONValue, number: Int) throws -> Object {
        guard let path = value.objectValue?["path"]?.stringValue else { throw ManifestError("object \(number) has no \"path\"") }
        do {
            return Object(path: path, metadata: try BlobMetadata(json: value))
        } catch {
            throw ManifestError("object \(path): \(error)")
        }
    }
}

/// A manifest that cannot be read or does not have the expected shape.
public struct ManifestError: DataError, CustomStringConvertible, Sendable {
    public let description: String

    public init(_ message: String) { description = "manifest: " + message }
}
