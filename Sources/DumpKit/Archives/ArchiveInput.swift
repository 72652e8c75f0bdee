import ArchiveKit
import JSONStream

/// An archive opened for reading, with its manifest read off the front when the first entry is one.
///
/// Archives written by other tools have no manifest; their first entry is then served by `nextEntry()`
/// like the others.
final class ArchiveInput {
    let reader: ArchiveReader
    /// The manifest, when the archive starts with one.
    let manifest: ArchiveManifest?
    /// The first entry, when it was not a manifest and has not been served yet.
    private var pending: ArchiveEntry?

    /// Opens `path` (`-` for standard input) and reads the manifest, if any. An empty file (which
    /// libarchive reads as an archive without entries) is refused: no tool writes one.
    init(path: String) throws {
        reader = try ArchiveReader(path: path)
        let first = try reader.nextEntry()
        if first == nil && reader.format == nil {
            throw InputError(file: reader.name, message: "the file is empty, not a tar or zip archive")
        }
        if let first, first.path == ArchiveManifest.entryName, first.kind == .file {
            do {
                manifest = try ArchiveManifest.read(
                    from: JSONReader(source: EntryByteSource(reader), sourceName: ArchiveManifest.entryName))
            } catch let error as JSONError {
                throw ManifestError("not valid JSON: \(error)")
            }
        } else {
            manifest = nil
            pending = first
        }
    }

    /// The next entry after the manifest; `nil` at the end.
    func nextEntry() throws -> ArchiveEntry? {
        if let entry = pending {
            pending = nil
            return entry
        }
        return try reader.nextEntry()
    }
}

/// The data of the reader's current entry as a byte source for `JSONReader`.
private final class EntryByteSource: JSONByteSource {
    private let reader: ArchiveReader

    init(_ reader: ArchiveReader) {
        self.reader = reader
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        try reader.read(into: buffer)
    }
}
