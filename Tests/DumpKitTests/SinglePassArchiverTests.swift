import ArchiveKit
import Crypto
import Foundation
import JSONStream
import TestSupport
import Workers
import XCTest

@testable import DumpKit

/// `.tar.zst` archives written in one pass: their frame layout, other tools reading them, the manifest's
/// hashes against the files, determinism, and failures.
final class SinglePassArchiverTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws {
        directory = try TemporaryDirectory()
    }

    override func tearDown() {
        directory = nil
    }

    private static let block = ZstdFrame.maximumBlockSize

    /// 64 KiB of deterministic noise, repeated to any length (content stored raw need not be random).
    private static let noise: [UInt8] = {
        var state: UInt64 = 1
        return (0..<65_536).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 33)
        }
    }()

    private static func jpeg(_ count: Int) -> [UInt8] {
        [0xFF, 0xD8, 0xFF, 0xE0] + (0..<count - 4).map { noise[$0 % noise.count] }
    }

    private static func record(_ number: Int) -> [UInt8] {
        Array((0..<300).map { #"{"title": "task \#($0 * number)", "done": \#($0 % 3 == 0)}"# }.joined(separator: "\n").utf8)
    }

    /// Objects at raw-block boundaries, one larger than the read-ahead keeps in memory, one already
    /// compressed but below the raw minimum, JSON records and an empty file.
    private static let objects: [String: [UInt8]] = [
        "img/a": jpeg(block - 1), "img/b": jpeg(block), "img/c": jpeg(block + 1), "img/d": jpeg(300_000),
        "img/e": jpeg(ObjectReadAhead.bufferLimit + 5),
        "img/f.png": [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(noise.prefix(100)),
        "json/1.json": record(1), "json/2.json": record(2), "json/3.json": record(3), "empty.txt": [],
    ]

    /// Writes `objects` below `name` with fixed times; returns the bucket's path.
    private func makeBucket(_ name: String, _ objects: [String: [UInt8]]) throws -> String {
        let root = directory.path(name)
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        for (path, bytes) in objects {
            let file = root + "/" + path
            try FileManager.default.createDirectory(
                atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data(bytes).write(to: URL(fileURLWithPath: file))
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 1_479_566_994)], ofItemAtPath: file)
        }
        return root
    }

    /// Relative path -> bytes of the files below `root`, without the manifest.
    private func files(_ root: String) throws -> [String: [UInt8]] {
        var result: [String: [UInt8]] = [:]
        for path in filesBelow(root) where path != ArchiveManifest.entryName { result[path] = try contents(root + "/" + path) }
        return result
    }

    func testTheArchiveReadsWithEveryToolAndItsManifestHashesTheFiles() throws {
        let bucket = try makeBucket("bucket", Self.objects)
        let archive = directory.path("b.tar.zst")
        try archiveBucket(bucket, to: archive)

        let frames = try ZstdFrameList(try contents(archive)).frames
        XCTAssertEqual(frames.prefix(2).map(\.kind), [.compressed, .skippable], "the manifest frame, then the rest of the gap")
        XCTAssertEqual(frames[1].offset, frames[0].size)
        // img/a to img/e in raw frames (img/e in 1 MiB frames), the small PNG compressed with the rest.
        let raw = frames.filter { $0.kind == .raw }.compactMap(\.contentSize)
        XCTAssertEqual(
            raw.reduce(0, +), [Self.block - 1, Self.block, Self.block + 1, 300_000, ObjectReadAhead.bufferLimit + 5].reduce(0, +))

        _ = try Shell.run("zstd", ["-t", "-q", archive])
        for (tool, arguments) in [
            ("bsdtar", ["-tf", archive]), ("tar", ["-I", "zstd", "-tf", archive]), ("tar", ["--zstd", "-tf", archive]),
        ] {
            let listed = try Shell.run(tool, arguments).split(separator: "\n").map(String.init)
            XCTAssertEqual(listed.first, ArchiveManifest.entryName, tool)
            XCTAssertEqual(Set(listed.dropFirst()).subtracting(["img/", "json/"]), Set(Self.objects.keys), tool)
        }
        for (tool, arguments) in [("bsdtar", ["-xf", archive, "-C"]), ("tar", ["-I", "zstd", "-xf", archive, "-C"])] {
            let out = directory.path("by-\(tool)")
            try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
            _ = try Shell.run(tool, arguments + [out])
            XCTAssertEqual(try files(out), Self.objects, tool)
        }

        let manifest = try XCTUnwrap(try readArchiveContents(archive).0)
        XCTAssertEqual(Set(manifest.objects.map(\.path)), Set(Self.objects.keys))
        for object in manifest.objects {
            let file = bucket + "/" + object.path
            let sha256 = try Shell.run("sha256sum", [file]).prefix(64)
            let md5Hex = Array(try Shell.run("md5sum", [file]).prefix(32))
            let md5 = stride(from: 0, to: 32, by: 2).map { UInt8(String(md5Hex[$0..<$0 + 2]), radix: 16)! }
            var crc32c = CRC32C()
            Self.objects[object.path]!.withUnsafeBytes { crc32c.update($0) }
            XCTAssertEqual(object.metadata.sha256, String(sha256), object.path)
            XCTAssertEqual(object.metadata.md5, Data(md5).base64EncodedString(), object.path)
            XCTAssertEqual(object.metadata.crc32c, crc32c.base64, object.path)
            XCTAssertEqual(object.metadata.size, Int64(Self.objects[object.path]!.count))
        }
        XCTAssertEqual(manifest.object(at: "img/a")?.metadata.contentType, "image/jpeg")
        XCTAssertEqual(manifest.object(at: "json/1.json")?.metadata.contentType, "application/json")

        XCTAssertEqual(try VerifyJob(archive: archive).run().problems.map(\.description), [])
        let listing = MemoryByteSink()
        XCTAssertEqual(try ListJob(archive: archive).run(to: listing).entries, Self.objects.count)
        var restore = RestoreJob(archive: archive, destination: directory.path("restored"))
        restore.verify = true
        XCTAssertEqual(try restore.run().written, Self.objects.count)
        XCTAssertEqual(try files(directory.path("restored")), Self.objects)
    }

    func testObjectsHashedInGroupsEachGetTheirOwnHashes() throws {
        // 150 objects of 0 ... 40 KB: several read-ahead groups, each hashed with its MD5s side by side.
        var objects: [String: [UInt8]] = [:]
        for index in 0..<150 {
            objects["o/\(1_000 + index)"] = Array(Self.noise[index..<index + (index * 2_741) % 40_000])
        }
        let bucket = try makeBucket("bucket", objects)
        let archive = directory.path("g.tar.zst")
        try archiveBucket(bucket, to: archive)
        let manifest = try XCTUnwrap(try readArchiveContents(archive).0)
        XCTAssertEqual(manifest.objects.count, objects.count)
        for object in manifest.objects {
            let bytes = try XCTUnwrap(objects[object.path])
            XCTAssertEqual(object.metadata.md5, Data(Insecure.MD5.hash(data: bytes)).base64EncodedString(), object.path)
            XCTAssertEqual(object.metadata.sha256, Hex.lowercase(SHA256.hash(data: bytes)), object.path)
        }
        XCTAssertEqual(try VerifyJob(archive: archive).run().problems.map(\.description), [])
    }

    func testTheSameBucketGivesTheSameBytesWithAnyNumberOfThreads() throws {
        let bucket = try makeBucket("bucket", Self.objects)
        var outputs: [[UInt8]] = []
        for (run, threads) in [1, 2, 2, 3].enumerated() {
            let archive = directory.path("\(run).tar.zst")
            try archiveBucket(bucket, to: archive, created: nil) { $0.threads = threads }
            outputs.append(try contents(archive))
        }
        XCTAssertEqual(Set(outputs).count, 1, "archives of \(outputs.count) thread counts differ")
    }

    func testABucketWithoutCompressedContentHasNoRawFrames() throws {
        let bucket = try makeBucket("bucket", Self.objects.filter { $0.key.hasPrefix("json/") })
        let archive = directory.path("j.tar.zst")
        try archiveBucket(bucket, to: archive)
        let frames = try ZstdFrameList(try contents(archive)).frames
        XCTAssertEqual(frames.map(\.kind), [.compressed, .skippable, .compressed])
        XCTAssertEqual(try VerifyJob(archive: archive).run().problems.map(\.description), [])
    }

    func testAnEmptyBucketGivesAManifestAndNothingElse() throws {
        let bucket = try makeBucket("empty", [:])
        let archive = directory.path("e.tar.zst")
        XCTAssertEqual(try archiveBucket(bucket, to: archive).objects, 0)
        XCTAssertEqual(try Shell.run("bsdtar", ["-tf", archive]), ArchiveManifest.entryName + "\n")
        XCTAssertEqual(try Shell.run("tar", ["-I", "zstd", "-tf", archive]), ArchiveManifest.entryName + "\n")
        XCTAssertEqual(try readArchiveContents(archive).0?.objects.count, 0)
        XCTAssertEqual(try VerifyJob(archive: archive).run().problems.map(\.description), [])
    }

    func testAManifestOfManyObjectsSpansSeveralBlocks() throws {
        let objects = Dictionary(uniqueKeysWithValues: (0..<5000).map { ("o/\($0)", Array("object \($0)\n".utf8)) })
        let bucket = try makeBucket("many", objects)
        let archive = directory.path("m.tar.zst")
        try archiveBucket(bucket, to: archive)
        let first = try XCTUnwrap(try ZstdFrameList(try contents(archive)).frames.first)
        XCTAssertGreaterThan(first.blockSizes.count, 4, "the manifest alone is over 512 KiB")
        XCTAssertEqual(try readArchiveContents(archive).0?.objects.count, 5000)
        XCTAssertEqual(try VerifyJob(archive: archive).run().problems.map(\.description), [])
        XCTAssertEqual(try Shell.run("tar", ["-I", "zstd", "-tf", archive]).split(separator: "\n").count, 5001)
    }

    func testASidecarThatLiesLeavesNoOutputBehind() throws {
        let store = try ArchiveTestBucket(at: directory.path("store"), blobStore: true)
        let image = "v1/todolist/-Ka/image1/1479566994988"
        var bytes = ArchiveTestBucket.contents[image]!
        bytes[100] ^= 1
        try Data(bytes).write(to: URL(fileURLWithPath: store.root + "/" + image))
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSince1970: 1_479_566_994)], ofItemAtPath: store.root + "/" + image)
        let archive = directory.path("s.tar.zst")
        XCTAssertThrowsError(try archiveBucket(store.root, to: archive)) { error in
            XCTAssertTrue("\(error)".contains("\(image): does not match the SHA-256 in its metadata sidecar"), "\(error)")
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted(), ["store"])
    }

    func testAFileThatChangesWhileArchivedIsAnError() throws {
        let large = "img/e"
        let bucket = try makeBucket("bucket", ["small.json": Self.record(1), large: Self.objects[large]!])
        let items = try BucketScanner(root: bucket, prefix: "", filter: PathFilter()).scan().items.sorted(by: ArchiveItem.precedes)
        var notes: [String] = []
        let collected = try MetadataCollector(threads: 1, hashing: false).collect(items, progress: nil, notes: &notes)
        let pool = WorkerPool(threads: 0)
        let readAhead = ObjectReadAhead(items: items, collected: collected, pool: pool)

        // The large file is hashed now and read again while written: a byte changed in between (same
        // size and time) is caught by the CRC-32C of the second read.
        let object = try XCTUnwrap(try readAhead.next())
        XCTAssertEqual(object.item.path, large)
        XCTAssertNil(object.data)
        var bytes = Self.objects[large]!
        bytes[1_000_000] ^= 1
        try Data(bytes).write(to: URL(fileURLWithPath: bucket + "/" + large))
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSince1970: 1_479_566_994)], ofItemAtPath: bucket + "/" + large)
        let writer = try ArchiveWriter(sink: DiscardingSink(), format: .tar, compression: .none, name: "test")
        try writer.begin(ArchiveEntry(path: large, size: object.item.size))
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        XCTAssertThrowsError(try ObjectReadAhead.copy(object, to: writer, buffer: buffer, progress: nil)) { error in
            XCTAssertTrue("\(error)".hasSuffix("\(large): changed while being archived (its bytes differ from the first read)"), "\(error)")
        }

        // A file that grew since it was listed (and was not read ahead yet).
        try Data(Self.record(1) + [0x20]).write(to: URL(fileURLWithPath: bucket + "/small.json"))
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSince1970: 1_479_566_994)], ofItemAtPath: bucket + "/small.json")
        let again = ObjectReadAhead(items: Array(items.suffix(1)), collected: Array(collected.suffix(1)), pool: pool)
        XCTAssertThrowsError(try again.next()) { error in
            XCTAssertTrue("\(error)".contains("small.json: changed while being archived"), "\(error)")
        }
    }
}

/// An archive sink that drops what it is given.
private final class DiscardingSink: ArchiveSink {
    func write(_ bytes: UnsafeRawBufferPointer) throws {}
}
