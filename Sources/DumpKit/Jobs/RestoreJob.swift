import ArchiveKit
import CPlatform
import Crypto
import Foundation
import JSONStream

/// `dumpkit restore`: extracts an archive into a destination directory with `SafeExtractor`, so nothing is
/// ever written outside it, and puts back the metadata sidecars of blob stores.
///
/// When the archive has a manifest, every file's size and SHA-256 are checked against it before the file
/// is renamed into place (libarchive's zstd frames carry no checksum, so a changed byte in an incompressible
/// block would otherwise go unnoticed); with `verify`, its MD5 and CRC-32C too, entries missing from the
/// manifest are refused and objects missing from the archive are reported. Entries that are refused or do
/// not match are reported by name and leave their targets as they were; an error of the archive, a limit
/// or the file system stops the run (the file being written is removed, the ones before it stay complete).
/// A backup set restores as `dump/<file>`, `rules/<file>` and `bucket/<objects>` under the destination.
/// Before the run returns, the destination's file system is flushed (`syncfs`), so what it reports as
/// restored survives a power cut.
public struct RestoreJob {
    public var archive: String
    public var destination: String
    /// Also check MD5 and CRC-32C, refuse entries the manifest does not list and report missing objects.
    public var verify = false
    public var overwrite: SafeExtractor.OverwritePolicy = .ifDifferent
    /// Which entries to restore, by their (cleaned) paths.
    public var filter = PathFilter()
    public var limits: ExtractionLimits = .standard
    /// Read and check every entry as a restore does, but create and write nothing (not even the
    /// destination): `Report.planned` lists the files that would be written.
    public var dryRun = false
    /// Objects put at once into a blob store (`run(into:)`): each put waits for a request to a
    /// bucket, so many more than the cores keep the store busy.
    public var jobs = 32

    public init(archive: String, destination: String) {
        self.archive = archive
        self.destination = destination
    }

    /// What a run did.
    public struct Report: Sendable {
        public var written = 0
        public var unchanged = 0
        public var kept = 0
        /// Data bytes of the files written.
        public var bytes: Int64 = 0
        public var sidecars = 0
        public var hasManifest = false
        /// Entries not restored, and objects that should have been there.
        public var problems: [VerifyJob.Problem] = []
        /// Remarks for people (prefixes removed from entry paths).
        public var notes: [String] = []
        /// A dry run's files that would be written (`written` counts them), in archive order.
        public var planned: [Planned] = []

        /// A file a dry run would write.
        public struct Planned: Sendable {
            /// The path under the destination.
            public var path: String
            public var size: Int64
            /// Whether something is there already (which `if-different` replaces only when it differs).
            public var exists: Bool
        }
    }

    /// Restores the archive.
    public func run(progress: ArchiveProgress? = nil) throws -> Report {
        let input = try ArchiveInput(path: archive)
        let manifest = input.manifest
        let extractor = dryRun ? nil : try SafeExtractor(destination: destination, overwrite: overwrite, limits: limits)
        var report = Report(hasManifest: manifest != nil)
        var seen = Set<String>()
        var removedPrefixes = 0
        var handed = 0
        progress?.begin("restoring", totalFiles: manifest?.objects.count, totalBytes: input.reader.fileSize)
        defer { progress?.finish() }

        while let entry = try input.nextEntry() {
            let cleaned = try? EntryPath(sanitizing: entry.path)
            guard filter.matches(cleaned?.description ?? entry.path) else { continue }
            if cleaned?.removedPrefix != nil { removedPrefixes += 1 }
            let object = manifest?.object(at: entry.path)
            if object != nil { seen.insert(entry.path) }

            // SHA-256 always (the manifest's hash), the other two when verifying.
            var sha256: SHA256? = object != nil && !verify ? SHA256() : nil
            var digest: ObjectDigest? = object != nil && verify ? ObjectDigest() : nil
            var size: Int64 = 0
            let observe = { (chunk: UnsafeRawBufferPointer) in
                size += Int64(chunk.count)
                sha256?.update(bufferPointer: chunk)
                digest?.update(chunk)
            }
            let approve = {
                Self.disagreement(size: size, sha256: sha256, digest: digest, object: object, verifying: verify && manifest != nil)
            }
            handed += 1
            let outcome =
                try extractor?.extract(entry, from: input.reader, observe: observe, approve: approve)
                ?? dryRunOutcome(entry, number: handed, cleaned: cleaned, reader: input.reader, observe: observe, approve: approve)
            progress?.set(bytes: input.reader.compressedBytesRead)
            switch outcome {
            case .written:
                report.written += 1
                report.bytes += size
                if extractor == nil, entry.kind == .file, let cleaned {
                    report.planned.append(Report.Planned(path: cleaned.description, size: size, exists: exists(cleaned)))
                }
            case .unchanged: report.unchanged += 1
            case .kept: report.kept += 1
            case .refused(let reason):
                report.problems.append(VerifyJob.Problem(path: entry.path, message: "not restored: \(reason)"))
            }
            if entry.kind == .file { progress?.fileDone() }
            if let extractor, let object, let manifest, outcome == .written || outcome == .unchanged {
                try restoreSidecar(object, manifest: manifest, extractor: extractor, report: &report)
            }
        }
        if verify, let manifest {
            for object in manifest.objects where !seen.contains(object.path) && filter.matches(object.path) {
                report.problems.append(VerifyJob.Problem(path: object.path, message: "missing: listed in the manifest, not in the archive"))
            }
        }
        if removedPrefixes > 0 {
            report.notes.append(
                "removed leading '/', drive or UNC prefixes from \(removedPrefixes) entry paths (restored inside \(destination))")
        }
        if !dryRun { try Self.syncFileSystem(of: destination) }
        return report
    }

    /// What `SafeExtractor.extract` would do with `entry`, the `number`th handed to it, found without writing: the refusals it
    /// makes from the entry alone, a file's data read through `observe` and judged by `approve`, and
    /// `kept` for a file whose target exists under `--overwrite never`. Files that would be written
    /// are `written` (whether `if-different` would find them unchanged is not looked at).
    private func dryRunOutcome(
        _ entry: ArchiveEntry, number: Int, cleaned: EntryPath?, reader: ArchiveReader, observe: (UnsafeRawBufferPointer) -> Void,
        approve: () -> String?
    ) throws -> SafeExtractor.Outcome {
        try limits.check(entries: number, path: entry.path, archive: reader.name)
        do {
            _ = try EntryPath(sanitizing: entry.path)
        } catch {
            return .refused(error.reason)
        }
        switch entry.kind {
        case .file:
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
            defer { buffer.deallocate() }
            while case let count = try reader.read(into: buffer), count > 0 {
                try limits.check(
                    dataBytes: reader.dataBytesRead, archiveBytes: reader.compressedBytesRead, path: entry.path, archive: reader.name)
                observe(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
            }
            if let reason = approve() { return .refused(reason) }
            return overwrite == .never && cleaned.map(exists) == true ? .kept : .written
        case .directory:
            return .unchanged
        case .symbolicLink(let target):
            return SafeExtractor.staysInside(linkTarget: target)
                ? .written : .refused("symbolic link to '\(target)' could lead outside the destination (absolute or with '..')")
        case .hardLink(let target):
            do {
                _ = try EntryPath(sanitizing: target)
                return .written
            } catch {
                return .refused("hard link target '\(target)': \(error.reason)")
            }
        case .special(let kind):
            return .refused("\(kind) entries are never extracted")
        }
    }

    /// Whether something is at `path` under the destination (not following a link at its end).
    private func exists(_ path: EntryPath) -> Bool {
        var status = stat()
        return lstat(destination + "/" + path.description, &status) == 0
    }

    /// Writes the restored files, their names and folders to disk: one `syncfs` on the destination's
    /// file system, cheaper than a sync per file and folder.
    private static func syncFileSystem(of destination: String) throws {
        let fd = open(destination, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0, dk_sync_file_system(fd) == 0 else {
            let message = String(cString: strerror(errno))
            if fd >= 0 { close(fd) }
            throw OutputError(file: destination, message: "cannot flush the restored files to disk: \(message)")
        }
        close(fd)
    }

    /// Why a file must not be moved into place (it disagrees with its manifest object), or `nil`.
    private static func disagreement(
        size: Int64, sha256: SHA256?, digest: ObjectDigest?, object: ArchiveManifest.Object?, verifying: Bool
    ) -> String? {
        guard let object else { return verifying ? "not in the manifest, so it cannot be verified" : nil }
        let expected = object.metadata
        if size != expected.size { return "size \(size) bytes, the manifest says \(expected.size) (truncated or altered)" }
        let actual =
            digest?.finalize() ?? (
                sha256: sha256.map { Hex.lowercase($0.finalize()) } ?? expected.sha256, md5: expected.md5, crc32c: expected.crc32c
            )
        if actual.sha256 != expected.sha256 { return "SHA-256 \(actual.sha256) does not match the manifest's \(expected.sha256)" }
        if actual.md5 != expected.md5 { return "MD5 \(actual.md5) does not match the manifest's \(expected.md5)" }
        if actual.crc32c != expected.crc32c { return "CRC-32C \(actual.crc32c) does not match the manifest's \(expected.crc32c)" }
        return nil
    }

    /// Writes the metadata sidecar of an object of a blob store: `<part>` + `DirectoryBlobStore.metadataPath(of:)`.
    private func restoreSidecar(_ object: ArchiveManifest.Object, manifest: ArchiveManifest, extractor: SafeExtractor, report: inout Report)
        throws
    {
        guard let part = manifest.bucketPart(containing: object.path), part.blobStore else { return }
        let components =
            part.path.split(separator: "/").map(String.init)
            + DirectoryBlobStore.metadataPath(of: object.metadata.name).split(separator: "/").map(String.init)
        let path: EntryPath
        do {
            path = try EntryPath(components: components)
        } catch {
            report.problems.append(VerifyJob.Problem(path: object.path, message: "metadata sidecar not restored: \(error.reason)"))
            return
        }
        let bytes = MemoryByteSink()
        let writer = JSONWriter(sink: bytes)
        try writer.value(object.metadata.jsonValue)
        try writer.raw("\n")
        try writer.flush()
        switch try extractor.writeFile(at: path, contents: bytes.bytes) {
        case .written, .unchanged: report.sidecars += 1
        case .kept: break
        case .refused(let reason):
            report.problems.append(VerifyJob.Problem(path: object.path, message: "metadata sidecar not restored: \(reason)"))
        }
    }
}

extension RestoreJob {
    /// A backup set's dump or rules file copied out of the archive into `folder` as `ROLE-NAME`,
    /// byte for byte (still compressed as it was archived), nothing else extracted: for `restore
    /// --database`, whose import reads its input twice. Written under a temporary name and renamed
    /// once its size and SHA-256 match the manifest; a file already there that matches is kept as it
    /// is (a resumed import then finds the same file). `nil` when the set has no such part.
    public func extractPart(_ role: ArchiveManifest.Part.Role, into folder: String) throws -> String? {
        let input = try ArchiveInput(path: archive)
        guard let manifest = input.manifest else {
            throw InputError(file: archive, message: "no manifest, so not a backup set (dumpkit backup writes one)")
        }
        guard let part = manifest.parts.first(where: { $0.role == role }) else { return nil }
        guard let object = manifest.object(at: part.path) else {
            throw ManifestError("the \(role.rawValue) part \(part.path) is not among its objects")
        }
        // The role first: a dump and a rules file of the same name stay apart.
        let path = folder + "/" + role.rawValue + "-" + (part.path.split(separator: "/").last.map(String.init) ?? "file")
        if let existing = Self.hashes(of: path), existing == (object.metadata.size, object.metadata.sha256) { return path }
        while let entry = try input.nextEntry() {
            guard entry.path == part.path, entry.kind == .file else { continue }
            let out = try OutputFile(path: path, compression: CompressionFilter.none)
            do {
                var sha256 = SHA256()
                var size: Int64 = 0
                let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
                defer { buffer.deallocate() }
                while case let count = try input.reader.read(into: buffer), count > 0 {
                    let chunk = UnsafeRawBufferPointer(rebasing: buffer[..<count])
                    sha256.update(bufferPointer: chunk)
                    size += Int64(count)
                    try out.write(chunk)
                }
                if let reason = Self.disagreement(size: size, sha256: sha256, digest: nil, object: object, verifying: false) {
                    throw InputError(file: archive, message: "\(part.path): \(reason)")
                }
                try out.commit()
            } catch {
                out.abort()
                throw error
            }
            return path
        }
        throw InputError(file: archive, message: "\(part.path): listed in the manifest, not in the archive")
    }

    /// The size and SHA-256 of a file's bytes (as stored, not decompressed); `nil` when it cannot be read.
    private static func hashes(of path: String) -> (Int64, String)? {
        guard let file = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? file.close() }
        var sha256 = SHA256()
        var size: Int64 = 0
        while let data = try? file.read(upToCount: 1 << 20), !data.isEmpty {
            sha256.update(data: data)
            size += Int64(data.count)
        }
        return (size, Hex.lowercase(sha256.finalize()))
    }
}
