import ArchiveKit

/// `dumpkit verify`: reads every entry of an archive and checks it against the manifest.
///
/// With a manifest, each file's size, SHA-256, MD5 and CRC-32C must match its object, every object must
/// be there once, and nothing else may be; a cut-off or corrupt archive is reported at the entry where it
/// breaks. Without a manifest (archives of other tools) every entry is read to its end, which checks the
/// compression and zip's CRC-32, and nothing more can be compared. In both cases entries that `restore`
/// would refuse (paths leaving the destination, devices) are reported.
public struct VerifyJob {
    public var archive: String

    public init(archive: String) {
        self.archive = archive
    }

    /// Something wrong with one entry or object.
    public struct Problem: Sendable, CustomStringConvertible {
        /// The entry path or object name it concerns.
        public var path: String
        public var message: String
        public var description: String { "\(path): \(message)" }
    }

    /// What a run found.
    public struct Report: Sendable {
        public var entries = 0
        public var bytes: Int64 = 0
        public var hasManifest = false
        public var problems: [Problem] = []
    }

    /// Verifies the archive; throws only when it cannot be opened or its manifest cannot be read.
    public func run(progress: ArchiveProgress? = nil) throws -> Report {
        let input = try ArchiveInput(path: archive)
        let manifest = input.manifest
        var report = Report(hasManifest: manifest != nil)
        var seen = Set<String>()
        // Set when the archive breaks off: the objects after that point were not reached, not missing.
        var stoppedEarly = false
        progress?.begin("verifying", totalFiles: manifest?.objects.count, totalBytes: manifest?.totalBytes)
        defer { progress?.finish() }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let entry: ArchiveEntry?
            do {
                entry = try input.nextEntry()
            } catch let error as ArchiveError {
                report.problems.append(Problem(path: archive, message: error.message))
                stoppedEarly = true
                break
            }
            guard let entry else { break }
            report.entries += 1
            do {
                _ = try EntryPath(sanitizing: entry.path)
            } catch {
                report.problems.append(Problem(path: entry.path, message: "restore would refuse it: \(error.reason)"))
            }
            let object = manifest?.object(at: entry.path)
            switch entry.kind {
            case .file:
                break
            case .special(let kind):
                report.problems.append(Problem(path: entry.path, message: "restore would refuse it: \(kind) entries are never extracted"))
                continue
            case .symbolicLink(let target) where !SafeExtractor.staysInside(linkTarget: target):
                report.problems.append(
                    Problem(path: entry.path, message: "restore would refuse it: symbolic link to '\(target)' could lead outside"))
                continue
            default:
                if object != nil {
                    report.problems.append(
                        Problem(path: entry.path, message: "is not a regular file, but the manifest lists it as an object"))
                }
                continue
            }
            if manifest != nil {
                if entry.path == ArchiveManifest.entryName {
                    report.problems.append(Problem(path: entry.path, message: "a second manifest"))
                } else if object == nil {
                    report.problems.append(Problem(path: entry.path, message: "extra entry: not in the manifest"))
                } else if !seen.insert(entry.path).inserted {
                    report.problems.append(Problem(path: entry.path, message: "appears more than once in the archive"))
                }
            }
            var digest = ObjectDigest()
            if let error = Self.readData(
                input.reader, into: &digest, hashing: object != nil, buffer: buffer, report: &report, progress: progress)
            {
                let prefix = entry.path + ": "
                let message = error.message.hasPrefix(prefix) ? String(error.message.dropFirst(prefix.count)) : error.message
                report.problems.append(Problem(path: entry.path, message: message))
                stoppedEarly = true
                break
            }
            progress?.fileDone()
            if let object { report.problems += Self.compare(entry, digest, with: object.metadata) }
        }
        if let manifest {
            let missing = manifest.objects.filter { !seen.contains($0.path) }
            if stoppedEarly && missing.count > 10 {
                report.problems.append(Problem(path: archive, message: "\(missing.count) objects of the manifest were not reached"))
            } else {
                report.problems += missing.map { Problem(path: $0.path, message: "missing: listed in the manifest, not in the archive") }
            }
        }
        return report
    }

    /// Reads the current entry's data to its end, hashing it when asked; returns the error that stopped it.
    private static func readData(
        _ reader: ArchiveReader, into digest: inout ObjectDigest, hashing: Bool, buffer: UnsafeMutableRawBufferPointer,
        report: inout Report, progress: ArchiveProgress?
    ) -> ArchiveError? {
        do {
            while true {
                let count = try reader.read(into: buffer)
                if count == 0 { return nil }
                let chunk = UnsafeRawBufferPointer(rebasing: buffer[..<count])
                if hashing { digest.update(chunk) }
                report.bytes += Int64(count)
                progress?.add(bytes: count)
            }
        } catch {
            return error
        }
    }

    /// The differences between an entry's data and its object in the manifest.
    private static func compare(_ entry: ArchiveEntry, _ digest: ObjectDigest, with metadata: BlobMetadata) -> [Problem] {
        var problems: [Problem] = []
        if digest.size != metadata.size {
            problems.append(
                Problem(path: entry.path, message: "size \(digest.size) bytes, the manifest says \(metadata.size) (truncated or altered)"))
        }
        let (sha256, md5, crc32c) = digest.finalize()
        if sha256 != metadata.sha256 {
            problems.append(Problem(path: entry.path, message: "SHA-256 \(sha256) does not match the manifest's \(metadata.sha256)"))
        }
        if md5 != metadata.md5 {
            problems.append(Problem(path: entry.path, message: "MD5 \(md5) does not match the manifest's \(metadata.md5)"))
        }
        if crc32c != metadata.crc32c {
            problems.append(Problem(path: entry.path, message: "CRC-32C \(crc32c) does not match the manifest's \(metadata.crc32c)"))
        }
        if let stored = entry.extendedAttribute("user.dumpkit.sha256"), String(decoding: stored, as: UTF8.self) != metadata.sha256 {
            problems.append(Problem(path: entry.path, message: "its user.dumpkit.sha256 attribute disagrees with the manifest"))
        }
        return problems
    }
}
