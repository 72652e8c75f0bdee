import ArchiveKit

extension RestoreJob {
    /// Objects larger than this are streamed into a store, never held whole.
    static let streamedObjectBytes: Int64 = 8 << 20
    /// Bytes of smaller objects held at once while they are put (`BlobPutWindow`); a bucket's
    /// request holds a copy of each while it is sent.
    static let heldObjectBytes = 64 << 20

    /// Restores the archive's objects into a blob store (a bucket, through `BlobStore`), each with the
    /// metadata its manifest records (content type, cache control, custom metadata such as
    /// `firebaseStorageDownloadTokens`), under the object name the manifest gives it.
    ///
    /// Each object is checked against its manifest object (size and SHA-256; MD5 and CRC-32C too with
    /// `verify`) before it becomes an object, so a damaged entry never does: one of up to
    /// `streamedObjectBytes` is read whole, checked and written; a larger one is streamed into the
    /// store (`BlobStore.put(streaming:)`: parts of an upload, a file without a name), which checks
    /// all its hashes before it appears.
    /// Without a manifest, file entries become objects named by their cleaned paths, with hashes
    /// computed and a content type guessed. Entries that are no object of a bucket (a backup set's
    /// dump and rules) are reported, not written. `overwrite`: `never` keeps an object there with other
    /// content (reported as kept), `if-different` and `always` replace it; the same content is never
    /// written again. Objects up to `streamedObjectBytes` are put `jobs` at a time while the next
    /// ones are read (`BlobPutWindow`). Memory: the entry being read, `heldObjectBytes` (twice that
    /// while requests hold copies), and a store's parts in flight.
    public func run(into store: any BlobStore, progress: ArchiveProgress? = nil) throws -> Report {
        let input = try ArchiveInput(path: archive)
        let manifest = input.manifest
        var report = Report(hasManifest: manifest != nil)
        // Problems by entry number, so that the report keeps the archive's order whichever put ends
        // first: the reader's, and the puts' (changed by the window's completion only).
        var problems: [(entry: Int, problem: VerifyJob.Problem)] = []
        var putProblems: [(entry: Int, problem: VerifyJob.Problem)] = []
        var puts = Report()
        let window = BlobPutWindow<(entry: Int, path: String)>(store: store, jobs: max(jobs, 1), maxBytes: Self.heldObjectBytes) {
            label, metadata, outcome in
            switch outcome {
            case .success(.stored), .success(.replaced):
                puts.written += 1
                puts.bytes += metadata.size
            case .success(.unchanged):
                puts.unchanged += 1
            case .failure(is BlobExistsError):
                puts.kept += 1
            case .failure(let error as BlobContentMismatch):
                putProblems.append(
                    (label.entry, VerifyJob.Problem(path: label.path, message: "not restored: its \(error.difference) (the manifest's)")))
            case .failure(let error as BlobNameError):
                putProblems.append((label.entry, VerifyJob.Problem(path: label.path, message: "not restored: \(error.reason)")))
            case .failure(let error):
                throw error
            }
        }
        do {
            try restoreEntries(of: input, into: store, window: window, problems: &problems, progress: progress)
        } catch {
            window.stop(error)
            throw error
        }
        try window.finish()
        report.written = puts.written
        report.unchanged = puts.unchanged
        report.kept = puts.kept
        report.bytes = puts.bytes
        report.problems = (problems + putProblems).enumerated().sorted { ($0.element.entry, $0.offset) < ($1.element.entry, $1.offset) }
            .map(\.element.problem)
        try store.sync()
        return report
    }

    /// Reads the archive's entries and hands each object to `window`.
    private func restoreEntries(
        of input: ArchiveInput, into store: any BlobStore, window: BlobPutWindow<(entry: Int, path: String)>,
        problems: inout [(entry: Int, problem: VerifyJob.Problem)], progress: ArchiveProgress?
    ) throws {
        let manifest = input.manifest
        var seen = Set<String>()
        var entries = 0
        var dataBytes: Int64 = 0
        progress?.begin("restoring", totalFiles: manifest?.objects.count, totalBytes: input.reader.fileSize)
        defer { progress?.finish() }
        func problem(_ path: String, _ message: String) { problems.append((entries, VerifyJob.Problem(path: path, message: message))) }

        while let entry = try input.nextEntry() {
            entries += 1
            try limits.check(entries: entries, path: entry.path, archive: input.reader.name)
            let cleaned = try? EntryPath(sanitizing: entry.path)
            guard filter.matches(cleaned?.description ?? entry.path), entry.kind == .file else { continue }
            let object = manifest?.object(at: entry.path)
            if object != nil { seen.insert(entry.path) }
            /// Hands the entry's data to `body` 1 MiB at a time, within the extraction limits.
            func eachChunk(_ body: (UnsafeRawBufferPointer) throws -> Void) throws {
                let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
                defer { chunk.deallocate() }
                while true {
                    let n = try input.reader.read(into: chunk)
                    if n == 0 { break }
                    dataBytes += Int64(n)
                    try limits.check(
                        dataBytes: dataBytes, archiveBytes: input.reader.compressedBytesRead, path: entry.path, archive: input.reader.name)
                    try body(UnsafeRawBufferPointer(rebasing: chunk[0..<n]))
                }
                progress?.set(bytes: input.reader.compressedBytesRead)
                progress?.fileDone()
            }
            if let object, entry.size != object.metadata.size {
                // Not read at all: an entry larger than its manifest says is never held.
                problem(
                    entry.path, "not restored: size \(entry.size) bytes, the manifest says \(object.metadata.size) (truncated or altered)")
                progress?.fileDone()
                continue
            }
            if let object, entry.size > Self.streamedObjectBytes, manifest?.bucketPart(containing: entry.path) != nil {
                // Large: streamed into the store, which checks its bytes against the manifest's hashes.
                try window.putHere(metadata: object.metadata, label: (entries, entry.path)) {
                    try store.put(streaming: object.metadata, replacing: overwrite != .never, fill: eachChunk)
                }
                continue
            }
            var content: [UInt8] = []
            content.reserveCapacity(Int(clamping: max(entry.size, 0)))
            try eachChunk { content.append(contentsOf: $0) }
            let digest = content.withUnsafeBytes { ContentDigest($0) }
            var metadata: BlobMetadata
            if let object {
                // The hashes of the bytes read (the manifest's MD5 and CRC-32C are checked only with
                // `verify`): a store told other hashes than the bytes' would refuse them.
                metadata = object.metadata
                metadata.md5 = digest.md5
                metadata.crc32c = digest.crc32c
                let expected = object.metadata
                let differs =
                    digest.size != expected.size
                    ? "size \(digest.size) bytes, the manifest says \(expected.size) (truncated or altered)"
                    : digest.sha256 != expected.sha256
                        ? "SHA-256 \(digest.sha256) does not match the manifest's \(expected.sha256)"
                        : verify && digest.md5 != expected.md5
                            ? "MD5 \(digest.md5) does not match the manifest's \(expected.md5)"
                            : verify && digest.crc32c != expected.crc32c
                                ? "CRC-32C \(digest.crc32c) does not match the manifest's \(expected.crc32c)" : nil
                if let differs {
                    problem(entry.path, "not restored: \(differs)")
                    continue
                }
                if let manifest, manifest.bucketPart(containing: entry.path) == nil {
                    problem(entry.path, "not restored: not an object of a bucket (a backup's dump or rules)")
                    continue
                }
            } else if manifest != nil {
                problem(
                    entry.path,
                    verify
                        ? "not restored: not in the manifest, so it cannot be verified"
                        : "not restored: not an object of the archived bucket")
                continue
            } else {
                guard let name = cleaned?.description else {
                    problem(entry.path, "not restored: not a valid object name")
                    continue
                }
                metadata = digest.metadata(
                    name: name, contentType: ContentTypeGuess.contentType(name: name, head: Array(content.prefix(64))))
                metadata.updated = entry.modificationTime?.milliseconds
            }
            try window.put(content, metadata: metadata, replacing: overwrite != .never, label: (entries, entry.path))
        }
        if verify, let manifest {
            for object in manifest.objects where !seen.contains(object.path) && filter.matches(object.path) {
                problems.append(
                    (entries + 1, VerifyJob.Problem(path: object.path, message: "missing: listed in the manifest, not in the archive")))
            }
        }
    }
}
