import ArchiveKit

extension RestoreJob {
    /// Objects larger than this are streamed into a store, never held whole.
    static let streamedObjectBytes: Int64 = 8 << 20

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
    /// written again. Memory: an object of up to `streamedObjectBytes`, or a store's parts in flight.
    public func run(into store: any BlobStore, progress: ArchiveProgress? = nil) throws -> Report {
        let input = try ArchiveInput(path: archive)
        let manifest = input.manifest
        var report = Report(hasManifest: manifest != nil)
        var seen = Set<String>()
        var entries = 0
        var dataBytes: Int64 = 0
        progress?.begin("restoring", totalFiles: manifest?.objects.count, totalBytes: input.reader.fileSize)
        defer { progress?.finish() }

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
                report.problems.append(
                    VerifyJob.Problem(
                        path: entry.path,
                        message: "not restored: size \(entry.size) bytes, the manifest says \(object.metadata.size) (truncated or altered)")
                )
                progress?.fileDone()
                continue
            }
            if let object, entry.size > Self.streamedObjectBytes, manifest?.bucketPart(containing: entry.path) != nil {
                // Large: streamed into the store, which checks its bytes against the manifest's hashes.
                do {
                    switch try store.put(streaming: object.metadata, replacing: overwrite != .never, fill: eachChunk) {
                    case .stored, .replaced:
                        report.written += 1
                        report.bytes += object.metadata.size
                    case .unchanged:
                        report.unchanged += 1
                    }
                } catch is BlobExistsError {
                    report.kept += 1
                } catch let error as BlobContentMismatch {
                    report.problems.append(
                        VerifyJob.Problem(path: entry.path, message: "not restored: its \(error.difference) (the manifest's)"))
                } catch let error as BlobNameError {
                    report.problems.append(VerifyJob.Problem(path: entry.path, message: "not restored: \(error.reason)"))
                }
                continue
            }
            var content: [UInt8] = []
            content.reserveCapacity(Int(clamping: max(entry.size, 0)))
            try eachChunk { content.append(contentsOf: $0) }
            let digest = content.withUnsafeBytes { ContentDigest($0) }
            var metadata: BlobMetadata
            if let object {
                metadata = object.metadata
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
                    report.problems.append(VerifyJob.Problem(path: entry.path, message: "not restored: \(differs)"))
                    continue
                }
                if let manifest, manifest.bucketPart(containing: entry.path) == nil {
                    report.problems.append(
                        VerifyJob.Problem(path: entry.path, message: "not restored: not an object of a bucket (a backup's dump or rules)"))
                    continue
                }
            } else if manifest != nil {
                report.problems.append(
                    VerifyJob.Problem(
                        path: entry.path,
                        message: verify
                            ? "not restored: not in the manifest, so it cannot be verified"
                            : "not restored: not an object of the archived bucket"))
                continue
            } else {
                guard let name = cleaned?.description else {
                    report.problems.append(VerifyJob.Problem(path: entry.path, message: "not restored: not a valid object name"))
                    continue
                }
                metadata = digest.metadata(
                    name: name, contentType: ContentTypeGuess.contentType(name: name, head: Array(content.prefix(64))))
                metadata.updated = entry.modificationTime?.milliseconds
            }
            do {
                switch try content.withUnsafeBytes({ try store.put($0, metadata: metadata, replacing: overwrite != .never) }) {
                case .stored, .replaced:
                    report.written += 1
                    report.bytes += digest.size
                case .unchanged:
                    report.unchanged += 1
                }
            } catch is BlobExistsError {
                report.kept += 1
            } catch let error as BlobNameError {
                report.problems.append(VerifyJob.Problem(path: entry.path, message: "not restored: \(error.reason)"))
            }
        }
        if verify, let manifest {
            for object in manifest.objects where !seen.contains(object.path) && filter.matches(object.path) {
                report.problems.append(VerifyJob.Problem(path: object.path, message: "missing: listed in the manifest, not in the archive"))
            }
        }
        try store.sync()
        return report
    }
}
