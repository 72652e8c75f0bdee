import ArchiveKit
import Foundation
import JSONStream
import TestSupport
import XCTest

@testable import DumpKit

final class ArchiveVerifyRestoreTests: XCTestCase {
    private var directory: TemporaryDirectory!
    private var bucket: ArchiveTestBucket!
    /// A plain tar of the test bucket (easy to alter byte by byte).
    private var good: String!

    private let image = "v1/todolist/-Ka/image1/1479566994988"
    private let record = "v1/todolist/-Ka/revisions/1.json"
    private let note = "notes/買い物.txt"

    override func setUpWithError() throws {
        directory = try TemporaryDirectory()
        bucket = try ArchiveTestBucket(at: directory.path("store"), blobStore: true)
        good = directory.path("good.tar")
        try archiveBucket(bucket.root, to: good)
    }

    override func tearDown() {
        directory = nil
    }

    private func problems(_ archive: String) throws -> [String] {
        try VerifyJob(archive: archive).run().problems.map(\.description)
    }

    // MARK: verify

    func testAGoodArchiveVerifies() throws {
        let report = try VerifyJob(archive: good).run()
        XCTAssertTrue(report.hasManifest)
        XCTAssertEqual(report.entries, 3)
        XCTAssertEqual(report.bytes, 5004 + 33 + 7)
        XCTAssertEqual(report.problems.map(\.description), [])
    }

    func testAFlippedByteIsReportedByName() throws {
        var bytes = try contents(good)
        let marker = Array(#""buy milk""#.utf8)
        let at = try XCTUnwrap((0..<(bytes.count - marker.count)).last { bytes[$0..<($0 + marker.count)].elementsEqual(marker) })
        bytes[at + 1] ^= 0x20
        let bad = directory.path("flipped.tar")
        try Data(bytes).write(to: URL(fileURLWithPath: bad))
        let found = try problems(bad)
        XCTAssertEqual(found.count, 3, "\(found)")
        XCTAssertTrue(found.allSatisfy { $0.hasPrefix(record + ": ") }, "\(found)")
        XCTAssertTrue(found[0].contains("SHA-256"), "\(found)")
    }

    func testMissingExtraAndDuplicateEntriesAreReported() throws {
        let bad = directory.path("altered.tar")
        try rewriteArchive(
            good, to: bad,
            transform: { entry, data in
                switch entry.path {
                case self.image: []
                case self.record: [(entry, data), (ArchiveEntry(path: "stowaway.txt"), Array("hi".utf8)), (entry, data)]
                default: [(entry, data)]
                }
            })
        XCTAssertEqual(
            try problems(bad),
            [
                "stowaway.txt: extra entry: not in the manifest", "\(record): appears more than once in the archive",
                "\(image): missing: listed in the manifest, not in the archive",
            ])
    }

    func testATruncatedEntryIsReportedByName() throws {
        let bytes = try contents(good)
        let marker = Array(repeating: UInt8(0x42), count: 64)
        let at = try XCTUnwrap((0..<(bytes.count - marker.count)).first { bytes[$0..<($0 + marker.count)].elementsEqual(marker) })
        let cut = directory.path("cut.tar")
        try Data(bytes.prefix(at + 1000)).write(to: URL(fileURLWithPath: cut))
        let found = try problems(cut)
        XCTAssertEqual(found.first.map { $0.hasPrefix(image + ": ") }, true, "\(found)")
        XCTAssertTrue(found.contains { $0.hasPrefix(record + ": missing") }, "\(found)")
    }

    func testAManifestThatDisagreesWithTheEntriesIsReported() throws {
        let sha = bucket.metadata(record, contentType: nil).sha256
        let bad = directory.path("lying.tar")
        try rewriteArchive(good, to: bad, manifest: { $0.replacingOccurrences(of: sha, with: String(repeating: "0", count: 64)) })
        let found = try problems(bad)
        XCTAssertTrue(
            found.contains("\(record): SHA-256 \(sha) does not match the manifest's \(String(repeating: "0", count: 64))"), "\(found)")
        XCTAssertTrue(found.contains("\(record): its user.dumpkit.sha256 attribute disagrees with the manifest"), "\(found)")
    }

    func testAnArchiveWithoutManifestIsReadCompletelyAndItsUnsafePathsReported() throws {
        let stripped = directory.path("stripped.tar")
        try rewriteArchive(
            good, to: stripped, manifest: { _ in nil },
            transform: { entry, data in
                var renamed = entry
                if entry.path == self.note { renamed.path = "../" + entry.path }
                return [(renamed, data)]
            })
        let report = try VerifyJob(archive: stripped).run()
        XCTAssertFalse(report.hasManifest)
        XCTAssertEqual(report.entries, 3)
        XCTAssertEqual(report.problems.map(\.description), ["../\(note): restore would refuse it: the path contains a '..' component"])
    }

    func testAnUnreadableManifestIsADataError() throws {
        let bad = directory.path("bad-manifest.tar")
        try rewriteArchive(good, to: bad, manifest: { $0.replacingOccurrences(of: "\"formatVersion\": 1", with: "\"formatVersion\": 7") })
        XCTAssertThrowsError(try VerifyJob(archive: bad).run()) { error in
            XCTAssertTrue(error is DataError)
            XCTAssertEqual("\(error)", "manifest: manifest version 7 is newer than this dumpkit reads (1); upgrade dumpkit")
        }
        try rewriteArchive(good, to: bad, manifest: { String($0.prefix(200)) })
        XCTAssertThrowsError(try VerifyJob(archive: bad).run()) { error in
            XCTAssertTrue("\(error)".hasPrefix("manifest: not valid JSON: "), "\(error)")
        }
    }

    // MARK: restore

    func testRestoreBringsBackTheFilesTimesAndSidecars() throws {
        let destination = directory.path("restored")
        var job = RestoreJob(archive: good, destination: destination)
        job.verify = true
        let report = try job.run()
        XCTAssertEqual(report.written, 3)
        XCTAssertEqual(report.sidecars, 3)
        XCTAssertEqual(report.problems.map(\.description), [])
        XCTAssertEqual(
            filesBelow(destination),
            [
                DirectoryBlobStore.metadataPath(of: note), DirectoryBlobStore.metadataPath(of: image),
                DirectoryBlobStore.metadataPath(of: record), note, image, record,
            ].sorted())
        for (name, bytes) in ArchiveTestBucket.contents {
            XCTAssertEqual(try contents(destination + "/" + name), bytes, name)
            let modified = try FileManager.default.attributesOfItem(atPath: destination + "/" + name)[.modificationDate] as? Date
            XCTAssertEqual(modified?.timeIntervalSince1970, Double(ArchiveTestBucket.times[name]!), name)
        }
        let sidecar = try BlobMetadata(
            json: JSONReader(bytes: try contents(destination + "/" + DirectoryBlobStore.metadataPath(of: image))).readValue())
        XCTAssertEqual(sidecar.customMetadata["firebaseStorageDownloadTokens"], "5f1c2d3e-token")
        // A restored blob store archives to the same bytes.
        let again = directory.path("again.tar")
        try archiveBucket(destination, to: again)
        XCTAssertEqual(try contents(again), try contents(good))
    }

    func testRestoreWithVerifyKeepsTheGoodFileWhenTheArchivedOneIsBad() throws {
        let destination = directory.path("restored")
        try FileManager.default.createDirectory(atPath: destination + "/v1/todolist/-Ka/revisions", withIntermediateDirectories: true)
        try Data("the good one".utf8).write(to: URL(fileURLWithPath: destination + "/" + record))
        let bad = directory.path("bad.tar")
        try rewriteArchive(
            good, to: bad,
            transform: { entry, data in
                [(entry, entry.path == self.record ? Array(#"{"title":"buy beer","done":false}"#.utf8) : data)]
            })
        var job = RestoreJob(archive: bad, destination: destination)
        job.verify = true
        let report = try job.run()
        XCTAssertEqual(report.problems.map(\.path), [record])
        XCTAssertTrue(report.problems[0].message.hasPrefix("not restored: SHA-256 "), report.problems[0].message)
        XCTAssertEqual(try contents(destination + "/" + record), Array("the good one".utf8))
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination + "/" + DirectoryBlobStore.metadataPath(of: record)))
        XCTAssertEqual(filesBelow(destination).filter { $0.contains("dumpkit-partial") }, [])
    }

    func testRestoreOnlyChoosesEntriesAndAnInterruptedRunFinishesOnASecondRun() throws {
        let destination = directory.path("restored")
        var only = RestoreJob(archive: good, destination: destination)
        only.filter = PathFilter(include: ["v1/*/revisions/*"])
        XCTAssertEqual(try only.run().written, 1)
        XCTAssertEqual(filesBelow(destination), [DirectoryBlobStore.metadataPath(of: record), record])
        // As if the first run had been killed while writing the image.
        try FileManager.default.createDirectory(atPath: destination + "/v1/todolist/-Ka/image1", withIntermediateDirectories: true)
        try Data([0xFF, 0xD8]).write(to: URL(fileURLWithPath: destination + "/v1/todolist/-Ka/image1/.1479566994988.dumpkit-partial"))
        let report = try RestoreJob(archive: good, destination: destination).run()
        XCTAssertEqual(report.written, 2)
        XCTAssertEqual(report.unchanged, 1)
        XCTAssertEqual(filesBelow(destination).filter { !$0.hasPrefix(".dumpkit/") }, [note, image, record])
        XCTAssertEqual(try contents(destination + "/" + image), ArchiveTestBucket.contents[image])
    }

    func testABackupSetRestoresEachPart() throws {
        let dump = directory.path("backup.json")
        try Data(#"{"v1":{}}"#.utf8).write(to: URL(fileURLWithPath: dump))
        var job = ArchiveJob(source: .backup(dump: dump, rules: nil, bucket: bucket.root), output: directory.path("set.tar.zst"))
        job.created = Timestamp(seconds: 1)
        _ = try job.run()
        let destination = directory.path("set")
        let report = try RestoreJob(archive: directory.path("set.tar.zst"), destination: destination).run()
        XCTAssertEqual(report.written, 4)
        XCTAssertEqual(
            filesBelow(destination),
            [
                "bucket/" + DirectoryBlobStore.metadataPath(of: note), "bucket/" + DirectoryBlobStore.metadataPath(of: image),
                "bucket/" + DirectoryBlobStore.metadataPath(of: record), "bucket/" + note, "bucket/" + image, "bucket/" + record,
                "dump/backup.json",
            ].sorted())
        XCTAssertEqual(try contents(destination + "/dump/backup.json"), Array(#"{"v1":{}}"#.utf8))
    }

    func testListShowsEntriesWithTheManifestsMetadata() throws {
        let sink = MemoryByteSink()
        let summary = try ListJob(archive: good).run(to: sink)
        XCTAssertEqual(summary.entries, 3)
        XCTAssertEqual(
            sink.string,
            """
            -            7  2016-11-13T01:20:00Z  text/plain; charset=utf-8  notes/買い物.txt
            -         5004  2016-11-19T14:49:54Z  image/jpeg  v1/todolist/-Ka/image1/1479566994988
            -           33  2016-11-20T00:00:00Z  application/json  v1/todolist/-Ka/revisions/1.json

            """)
        let json = MemoryByteSink()
        var listing = ListJob(archive: good)
        listing.json = true
        _ = try listing.run(to: json)
        let value = try JSONReader(bytes: json.bytes).readValue()
        XCTAssertEqual(value[segment: "format"]?.stringValue, "tar")
        XCTAssertEqual(value[segment: "manifest"]?[segment: "objectCount"]?.numberValue?.int64Value, 3)
        let entries = try XCTUnwrap(value[segment: "entries"]?.arrayValue)
        XCTAssertEqual(entries.map { $0[segment: "path"]?.stringValue }, [note, image, record])
        XCTAssertEqual(entries[1][segment: "metadata"]?[segment: "firebaseStorageDownloadTokens"]?.stringValue, "5f1c2d3e-token")
    }
}
