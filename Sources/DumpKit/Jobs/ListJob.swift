import ArchiveKit
import JSONStream

/// `dumpkit list`: the entries of an archive, one line each or as JSON, with the manifest's metadata.
///
/// Text lines are `<type> <size> <modified> <content type> <path>`; the type is `-` for a file, `d` for a
/// directory, `l` for a symbolic link (`path -> target`), `h` for a hard link, `?` for anything else,
/// and the content type `-` when the archive has no manifest. JSON is one object:
/// `{"archive", "format", "compression", "manifest": {...} or null, "entries": [...]}`, streamed.
public struct ListJob {
    public var archive: String
    public var json = false

    public init(archive: String) {
        self.archive = archive
    }

    /// What the listing covered.
    public struct Summary: Sendable {
        public var entries = 0
        public var manifest: ArchiveManifest?
    }

    /// Writes the listing to `sink`.
    public func run(to sink: JSONByteSink) throws -> Summary {
        let input = try ArchiveInput(path: archive)
        var summary = Summary(manifest: input.manifest)
        let writer = JSONWriter(sink: sink, options: .init(pretty: true))
        if json {
            try writer.beginObject()
            try writer.name("archive")
            try writer.string(archive)
            // The first header has been read, so the format and compression are known.
            try writer.name("format")
            try writer.string(input.reader.format?.rawValue ?? "empty")
            try writer.name("compression")
            try writer.string(input.reader.compression.rawValue)
            try writer.name("manifest")
            if let manifest = input.manifest {
                try writer.value(
                    .object([
                        "formatVersion": .number(JSONNumber(manifest.formatVersion)), "toolVersion": .string(manifest.toolVersion),
                        "created": .string(UTCTime.format(manifest.created)), "kind": .string(manifest.kind.rawValue),
                        "objectCount": .number(JSONNumber(manifest.objects.count)), "totalBytes": .number(JSONNumber(manifest.totalBytes)),
                    ]))
            } else {
                try writer.null()
            }
            try writer.name("entries")
            try writer.beginArray()
        }
        let text = TextLines(sink: sink)
        while let entry = try input.nextEntry() {
            summary.entries += 1
            let metadata = input.manifest?.object(at: entry.path)?.metadata
            if json {
                try writer.value(Self.jsonValue(entry, metadata: metadata))
            } else {
                try text.append(Self.line(entry, metadata: metadata))
            }
        }
        if json {
            try writer.endArray()
            try writer.endObject()
            try writer.raw("\n")
            try writer.flush()
        }
        try text.flush()
        return summary
    }

    /// One text line for an entry.
    static func line(_ entry: ArchiveEntry, metadata: BlobMetadata?) -> String {
        let (type, suffix): (String, String) =
            switch entry.kind {
            case .file: ("-", "")
            case .directory: ("d", "")
            case .symbolicLink(let target): ("l", " -> \(target)")
            case .hardLink(let target): ("h", " link to \(target)")
            case .special: ("?", "")
            }
        let size = String(entry.size)
        let time = entry.modificationTime.map(UTCTime.format) ?? "-"
        return
            "\(type) \(String(repeating: " ", count: max(0, 12 - size.count)))\(size)  \(time)  \(metadata?.contentType ?? "-")  \(entry.path)\(suffix)"
    }

    /// An entry as JSON: path, type, size, modified, link target, and the manifest's metadata.
    static func jsonValue(_ entry: ArchiveEntry, metadata: BlobMetadata?) -> JSONValue {
        var o = JSONObject()
        o["path"] = .string(entry.path)
        switch entry.kind {
        case .file: o["type"] = .string("file")
        case .directory: o["type"] = .string("directory")
        case .symbolicLink(let target):
            o["type"] = .string("symlink")
            o["target"] = .string(target)
        case .hardLink(let target):
            o["type"] = .string("hardlink")
            o["target"] = .string(target)
        case .special(let kind): o["type"] = .string(kind)
        }
        o["size"] = .number(JSONNumber(entry.size))
        if let time = entry.modificationTime { o["modified"] = .string(UTCTime.format(time)) }
        if let metadata, case .object(let members) = metadata.jsonValue {
            for member in members where member.key != "name" && member.key != "size" {
                o[member.key] = member.value
            }
        }
        return .object(o)
    }
}

/// Lines of text collected into 256 KiB writes.
private final class TextLines {
    private let sink: JSONByteSink
    private var bytes: [UInt8] = []

    init(sink: JSONByteSink) {
        self.sink = sink
    }

    func append(_ line: String) throws {
        bytes += line.utf8
        bytes.append(UInt8(ascii: "\n"))
        if bytes.count >= 1 << 18 { try flush() }
    }

    func flush() throws {
        guard !bytes.isEmpty else { return }
        try bytes.withUnsafeBytes { try sink.write($0) }
        bytes.removeAll(keepingCapacity: true)
    }
}
