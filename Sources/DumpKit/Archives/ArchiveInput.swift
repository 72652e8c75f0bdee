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

    /// Ends the transfer of an archive read from a bucket (`RemoteInput.finish`), once.
    private var remoteFinish: (@Sendable () throws -> Void)?

    /// Opens `path` (`-` for standard input, or a bucket object: `RemoteInput`) and reads the
    /// manifest, if any. An empty file (which libarchive reads as an archive without entries) is
    /// refused: no tool writes one.
    init(path: String) throws {
        let remote = try RemoteInput.open(path)
        reader = try remote.map { try ArchiveReader(descriptor: $0.descriptor, name: path, owned: true) } ?? ArchiveReader(path: path)
        let first: ArchiveEntry?
        do {
            first = try reader.nextEntry()
        } catch {
            try remote?.finish()
            throw error
        }
        if first == nil { try remote?.finish() } else { remoteFinish = remote?.finish }
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
        return try entry()
    }

    deinit { try? remoteFinish?() }

    /// The reader's next entry. For a bucket object, the end of the entries is also the end of the
    /// transfer (which throws when the object changed while it was read), and a failed read says
    /// first why the transfer ended, if it did.
    private func entry() throws -> ArchiveEntry? {
        do {
            let entry = try reader.nextEntry()
            if entry == nil { try finishRemote() }
            return entry
        } catch {
            try finishRemote()
            throw error
        }
    }

    private func finishRemote() throws {
        guard let finish = remoteFinish else { return }
        remoteFinish = nil
        try finish()
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
