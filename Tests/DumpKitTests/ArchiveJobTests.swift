import ArchiveKit
import Foundation
import JSONStream
import Synchronization
import TestSupport
import XCTest

@testable import DumpKit

final class ArchiveJobTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws {
        directory = try TemporaryDirectory()
    }

    override func tearDown() {
        directory = nil
    }

    private let image = "v1/todolist/-Ka/image1/1479566994988"
    private let record = "v1/todolist/-Ka/revisions/1.json"
    private let note = "notes/買い物.txt"

    /// Runs `body` on a thread of its own and fails when it has not finished within `seconds` (then
    /// `release` is called so that the thread can end).
    private func finishes(within seconds: Double, release: () -> Void, _ body: @escaping @Sendable () -> Void) -> Bool {
        let done = DispatchSemaphore(value: 0)
        Thread {
            body()
            done.signal()
        }.start()
        if done.wait(timeout: .now() + seconds) == .success { return true }
        release()
        done.wait()
        return false
    }

    /// A listed file replaced by a FIFO before it is read: every pass that reads objects (hashing,
    /// the single-pass read-ahead, the sidecar) refuses it by name instead of waiting for a writer.
    func testAFileSwappedForAFIFOIsRefusedInsteadOfHangingTheRun() throws {
        let bucket = directory.path("bucket")
        try FileManager.default.createDirectory(atPath: bucket + "/.dumpkit/meta", withIntermediateDirectories: true)
        let fifo = bucket + "/photo.jpg"
        XCTAssertEqual(mkfifo(fifo, 0o644), 0)
        var status = stat()
        XCTAssertEqual(stat(fifo, &status), 0)
        let item = ArchiveItem(
            folder: bucket, prefix: "", name: "photo.jpg", size: 0,
            modificationTime: Timestamp(seconds: Int64(status.st_mtim.tv_sec), nanoseconds: Int32(status.st_mtim.tv_nsec)),
            inBlobStore: true)
        // A FIFO in the sidecar's place too.
        let sidecar = item.sidecar!
        try FileManager.default.createDirectory(atPath: (sidecar as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let output = directory.path("out.tar.zst")
        // Unblocks an open that waits for a writer (only needed where the run hangs).
        let release = {
            for path in [fifo, sidecar] {
                let fd = open(path, O_RDWR | O_NONBLOCK)
                if fd >= 0 { close(fd) }
            }
        }
        let errors = Mutex<[String]>([])
        let hashing = finishes(within: 10, release: release) {
            var notes: [String] = []
            do {
                _ = try MetadataCollector(threads: 1, hashing: true).collect([item], progress: nil, notes: &notes)
            } catch {
                errors.withLock { $0.append("\(error)") }
            }
        }
        XCTAssertTrue(hashing, "hashing waited on the FIFO")
        let singlePass = finishes(within: 10, release: release) {
            do {
                var notes: [String] = []
                let collected = try MetadataCollector(threads: 1, hashing: false).collect([item], progress: nil, notes: &notes)
                try SinglePassArchiver(output: output, level: 3, threads: 1).write(
                    items: [item], collected: collected, created: Timestamp(seconds: 0), kind: .bucket,
                    parts: [ArchiveManifest.Part(role: .bucket, path: "", blobStore: true)], progress: nil)
            } catch {
                errors.withLock { $0.append("\(error)") }
            }
        }
        XCTAssertTrue(singlePass, "the single-pass archiver waited on the FIFO")
        XCTAssertEqual(
            errors.withLock { $0 },
            Array(
                repeating: "\(fifo): is a FIFO now, not a regular file (it was replaced after it was listed); nothing is read from it",
                count: 2))
        XCTAssertEqual(mkfifo(sidecar, 0o644), 0)
        let sidecarRead = finishes(within: 10, release: release) {
            var notes: [String] = []
            do {
                _ = try MetadataCollector(threads: 1, hashing: false).collect([item], progress: nil, notes: &notes)
            } catch {
                errors.withLock { $0.append("\(error)") }
            }
        }
        XCTAssertTrue(sidecarRead, "reading the sidecar waited on a FIFO")
        XCTAssertEqual(
            errors.withLock { $0.last },
            "\(sidecar): is a FIFO now, not a regular file (it was replaced after it was listed); nothing is read from it")
        XCTAssertFalse(FileManager.default.fileExists(atPath: output))
    }

    func testTheManifestComesFirstWithEveryObjectsMetadata() throws {
        let bucket = try ArchiveTestBucket(at: directory.path("bucket"))
        let output = directory.path("b.tar.zst")
        let summary = try archiveBucket(bucket.root, to: output)
        XCTAssertEqual(summary.objects, 3)
        XCTAssertEqual(summary.format, .tar)
        XCTAssertEqual(summary.compression, .zstd)

        let reader = try ArchiveReader(path: output)
        XCTAssertEqual(try reader.nextEntry()?.path, ArchiveManifest.entryName)
        let (manifest, entries) = try readArchiveContents(output)
        let m = try XCTUnwrap(manifest)
        XCTAssertEqual(m.kind, .bucket)
        XCTAssertEqual(m.toolVersion, DumpKitVersion.string)
        XCTAssertEqual(m.created, Timestamp(seconds: 1_500_000_000))
        XCTAssertEqual(m.parts, [ArchiveManifest.Part(role: .bucket, path: "", blobStore: false)])
        // Sorted by the bytes of the name, as buckets list them.
        XCTAssertEqual(m.objects.map(\.path), [note, image, record])
        XCTAssertEqual(entries.map(\.0.path), [note, image, record])
        XCTAssertEqual(m.object(at: image)?.metadata, bucket.metadata(image, contentType: "image/jpeg"))
        XCTAssertEqual(m.object(at: record)?.metadata, bucket.metadata(record, contentType: "application/json"))
        XCTAssertEqual(m.object(at: note)?.metadata, bucket.metadata(note, contentType: "text/plain"))
        for (entry, data) in entries {
            XCTAssertEqual(data, ArchiveTestBucket.contents[entry.path])
            XCTAssertEqual(entry.modificationTime, Timestamp(seconds: ArchiveTestBucket.times[entry.path]!))
            XCTAssertEqual(entry.permissions, 0o644)
            XCTAssertEqual(
                entry.extendedAttribute("user.dumpkit.sha256").map { String(decoding: $0, as: UTF8.self) },
                m.object(at: entry.path)?.metadata.sha256)
        }
    }

    func testTheSameBucketGivesTheSameBytes() throws {
        let bucket = try ArchiveTestBucket(at: directory.path("bucket"))
        for name in ["a.tar.zst", "a.tar.gz", "a.tar.xz", "a.tar", "a.zip"] {
            let first = directory.path("1-" + name)
            let second = directory.path("2-" + name)
            try archiveBucket(bucket.root, to: first, created: nil)
            // Reading the files again (and touching their access times) changes nothing.
            _ = try FileManager.default.contentsOfDirectory(atPath: bucket.root)
            try archiveBucket(bucket.root, to: second, created: nil)
            XCTAssertEqual(try contents(first), try contents(second), name)
        }
        // Without SOURCE_DATE_EPOCH the manifest's time is the newest object's.
        XCTAssertEqual(try readArchiveContents(directory.path("1-a.tar")).0?.created, Timestamp(seconds: 1_479_600_000))
    }

    func testSourceDateEpochIsWholeSeconds() throws {
        XCTAssertEqual(try ArchiveJob.sourceDateEpoch(in: ["SOURCE_DATE_EPOCH": "1700000000"]), Timestamp(seconds: 1_700_000_000))
        XCTAssertNil(try ArchiveJob.sourceDateEpoch(in: [:]))
        XCTAssertThrowsError(try ArchiveJob.sourceDateEpoch(in: ["SOURCE_DATE_EPOCH": "yesterday"]))
    }

    func testABlobStoresSidecarsProvideTheMetadataAndAreNotObjects() throws {
        let bucket = try ArchiveTestBucket(at: directory.path("store"), blobStore: true)
        let output = directory.path("s.tar")
        let summary = try archiveBucket(bucket.root, to: output)
        XCTAssertEqual(summary.notes, [])
        let (manifest, entries) = try readArchiveContents(output)
        let m = try XCTUnwrap(manifest)
        XCTAssertEqual(m.parts, [ArchiveManifest.Part(role: .bucket, path: "", blobStore: true)])
        XCTAssertEqual(entries.map(\.0.path), [note, image, record], "the .dumpkit folder is not archived")
        let imageMetadata = try XCTUnwrap(m.object(at: image)?.metadata)
        XCTAssertEqual(imageMetadata.customMetadata["firebaseStorageDownloadTokens"], "5f1c2d3e-token")
        XCTAssertEqual(imageMetadata.cacheControl, "public, max-age=3600")
        XCTAssertEqual(m.object(at: note)?.metadata.contentType, "text/plain; charset=utf-8")
        XCTAssertEqual(m.object(at: record)?.metadata.contentType, "application/json", "no sidecar: guessed")
        let imageEntry = try XCTUnwrap(entries.first { $0.0.path == image }?.0)
        XCTAssertEqual(
            imageEntry.extendedAttribute("user.dumpkit.metadata.firebaseStorageDownloadTokens").map { String(decoding: $0, as: UTF8.self) },
            "5f1c2d3e-token")
        XCTAssertEqual(
            imageEntry.extendedAttribute("user.dumpkit.cacheControl").map { String(decoding: $0, as: UTF8.self) }, "public, max-age=3600")
    }

    func testASidecarThatDescribesAnotherObjectIsNotTakenForIt() throws {
        let bucket = try ArchiveTestBucket(at: directory.path("store"))
        try bucket.writeSidecar(image, contentType: "image/jpeg", custom: ["firebaseStorageDownloadTokens": "the-token"], cacheControl: nil)
        try FileManager.default.createDirectory(
            atPath: (bucket.root + "/" + DirectoryBlobStore.metadataPath(of: note) as NSString).deletingLastPathComponent,
            withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: bucket.root + "/" + DirectoryBlobStore.metadataPath(of: image),
            toPath: bucket.root + "/" + DirectoryBlobStore.metadataPath(of: note))
        let summary = try archiveBucket(bucket.root, to: directory.path("s.tar"))
        XCTAssertEqual(summary.notes.count, 1)
        XCTAssertTrue(summary.notes[0].contains("describes \(String(reflecting: image))"), summary.notes[0])
        let manifest = try XCTUnwrap(try readArchiveContents(directory.path("s.tar")).0)
        XCTAssertEqual(manifest.object(at: image)?.metadata.customMetadata, ["firebaseStorageDownloadTokens": "the-token"])
        XCTAssertEqual(manifest.object(at: note)?.metadata.customMetadata, [:])
        XCTAssertEqual(manifest.object(at: note)?.metadata.sha256, bucket.metadata(note, contentType: nil).sha256)
    }

    func testAStaleSidecarKeepsItsMetadataButHashesAreRecomputed() throws {
        let bucket = try ArchiveTestBucket(at: directory.path("store"), blobStore: true)
        try bucket.writeSidecar(
            image, contentType: "image/jpeg", custom: ["firebaseStorageDownloadTokens": "tok"], cacheControl: nil, size: 3)
        let summary = try archiveBucket(bucket.root, to: directory.path("s.tar"))
        XCTAssertEqual(summary.notes.count, 1)
        XCTAssertTrue(summary.notes[0].contains("hashes recomputed"), summary.notes[0])
        let metadata = try XCTUnwrap(try readArchiveContents(directory.path("s.tar")).0?.object(at: image)?.metadata)
        XCTAssertEqual(metadata.size, 5004)
        XCTAssertEqual(metadata.sha256, bucket.metadata(image, contentType: nil).sha256)
        XCTAssertEqual(metadata.customMetadata, ["firebaseStorageDownloadTokens": "tok"])
    }

    func testASidecarThatLiesAboutTheContentFailsTheArchive() throws {
        let bucket = try ArchiveTestBucket(at: directory.path("store"), blobStore: true)
        // Same size, different bytes: only the second pass's SHA-256 check can tell.
        var bytes = ArchiveTestBucket.contents[image]!
        bytes[100] ^= 1
        try Data(bytes).write(to: URL(fileURLWithPath: bucket.root + "/" + image))
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSince1970: 1_479_566_994)], ofItemAtPath: bucket.root + "/" + image)
        let output = directory.path("s.tar")
        XCTAssertThrowsError(try archiveBucket(bucket.root, to: output)) { error in
            XCTAssertTrue("\(error)".contains("does not match the SHA-256 in its metadata sidecar"), "\(error)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: output), "no partial archive")
    }

    func testIncludeAndExcludeChooseObjects() throws {
        let bucket = try ArchiveTestBucket(at: directory.path("bucket"))
        try archiveBucket(bucket.root, to: directory.path("i.tar")) { $0.filter = PathFilter(include: ["v1/*"], exclude: ["*.json"]) }
        XCTAssertEqual(try readArchiveContents(directory.path("i.tar")).1.map(\.0.path), [image])
        try archiveBucket(bucket.root, to: directory.path("j.tar")) { $0.filter = PathFilter(exclude: ["v1/todolist"]) }
        XCTAssertEqual(try readArchiveContents(directory.path("j.tar")).1.map(\.0.path), [note])
    }

    func testFormatAndCompressionFollowTheNameUnlessGiven() throws {
        func resolved(_ output: String, _ format: ArchiveFormat? = nil, _ compression: CompressionFilter? = nil) throws -> String {
            var job = ArchiveJob(source: .bucket("b"), output: output)
            job.format = format
            job.compression = compression
            let (f, c) = try job.resolvedFormat()
            return "\(f) \(c)"
        }
        XCTAssertEqual(try resolved("b.tar.zst"), "tar zstd")
        XCTAssertEqual(try resolved("b.tgz"), "tar gzip")
        XCTAssertEqual(try resolved("b.tar"), "tar none")
        XCTAssertEqual(try resolved("b.zip"), "zip gzip")
        XCTAssertEqual(try resolved("-"), "tar zstd")
        XCTAssertEqual(try resolved("b.bin", .zip, CompressionFilter.none), "zip none")
        XCTAssertEqual(try resolved("b.tar.zst", nil, .xz), "tar xz")
        // A name that says neither is refused unless the format is given.
        XCTAssertEqual(try resolved("b.7z", .tar), "tar zstd")
        for name in ["b.7z", "backup", "b.json.gz"] {
            XCTAssertThrowsError(try resolved(name)) { XCTAssertTrue($0 is UsageError, "\($0)") }
            XCTAssertThrowsError(try resolved(name, nil, .gzip), name)
        }
    }

    func testAnIncludeThatMatchesNothingIsReported() throws {
        let bucket = try ArchiveTestBucket(at: directory.path("bucket"))
        var job = ArchiveJob(source: .bucket(bucket.root), output: directory.path("i.tar"))
        job.filter = PathFilter(include: ["v1/*", "v9/*"])
        let summary = try job.run()
        XCTAssertEqual(summary.unmatchedIncludes?.patterns, ["v9/*"])
        XCTAssertEqual(try readArchiveContents(directory.path("i.tar")).1.map(\.0.path), [image, record])
        // Nothing selected: an error before anything is written.
        job.output = directory.path("none.tar")
        job.filter = PathFilter(include: ["v9/*"])
        XCTAssertThrowsError(try job.run()) { XCTAssertEqual("\($0)", "--include 'v9/*' matches no object in \(bucket.root)") }
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.path("none.tar")))
    }

    func testTheOutputMayNotBeInsideTheBucket() throws {
        let bucket = try ArchiveTestBucket(at: directory.path("bucket"))
        XCTAssertThrowsError(try archiveBucket(bucket.root, to: bucket.root + "/v1/self.tar.zst")) { error in
            XCTAssertTrue(error is UsageError, "\(error)")
        }
    }

    func testABackupSetHoldsTheDumpTheRulesAndTheBucket() throws {
        let bucket = try ArchiveTestBucket(at: directory.path("store"), blobStore: true)
        let dump = directory.path("backup.json.gz")
        let rules = directory.path("database.rules.json")
        try Data([0x1F, 0x8B, 0x08, 0x00]).write(to: URL(fileURLWithPath: dump))
        try Data(#"{"rules":{}}"#.utf8).write(to: URL(fileURLWithPath: rules))
        var job = ArchiveJob(source: .backup(dump: dump, rules: rules, bucket: bucket.root), output: directory.path("set.tar.zst"))
        job.created = Timestamp(seconds: 1)
        _ = try job.run()
        let (manifest, entries) = try readArchiveContents(directory.path("set.tar.zst"))
        let m = try XCTUnwrap(manifest)
        XCTAssertEqual(m.kind, .backup)
        XCTAssertEqual(
            m.parts,
            [
                ArchiveManifest.Part(role: .dump, path: "dump/backup.json.gz"),
                ArchiveManifest.Part(role: .rules, path: "rules/database.rules.json"),
                ArchiveManifest.Part(role: .bucket, path: "bucket/", blobStore: true),
            ])
        XCTAssertEqual(
            entries.map(\.0.path),
            ["bucket/" + note, "bucket/" + image, "bucket/" + record, "dump/backup.json.gz", "rules/database.rules.json"])
        XCTAssertEqual(m.object(at: "bucket/" + image)?.metadata.name, image)
        XCTAssertEqual(m.object(at: "dump/backup.json.gz")?.metadata.contentType, "application/gzip")
        XCTAssertEqual(m.object(at: "rules/database.rules.json")?.metadata.contentType, "application/json")
    }

    func testAMissingOrWrongSourceIsAClearInputError() throws {
        let file = directory.path("file")
        try Data([1]).write(to: URL(fileURLWithPath: file))
        for (source, message) in [
            (directory.path("nope"), "cannot open: No such file or directory"), (file, "not a directory (a bucket must be a directory)"),
        ] {
            XCTAssertThrowsError(try archiveBucket(source, to: directory.path("x.tar"))) { error in
                XCTAssertEqual("\(error)", "\(source): \(message)")
            }
        }
    }
}
