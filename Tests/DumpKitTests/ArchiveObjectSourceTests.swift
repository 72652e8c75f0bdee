import ArchiveKit
import Foundation
import JSONStream
import TestSupport
import XCTest

@testable import DumpKit

/// An in-memory bucket as an `ArchiveObjectSource`: listed in an order of its own (reverse), with or
/// without metadata in the listing, reads answered on another thread, and hooks that change objects
/// between the listing and a read, as another writer would.
final class MemoryBucket: ArchiveObjectSource, @unchecked Sendable {
    struct Stored {
        var bytes: [UInt8]
        var version: Int
        var metadata: BlobMetadata
        /// Hashes the store vouches for.
        var vouched: (sha256: String?, md5: String?, crc32c: String?) = (nil, nil, nil)
    }

    let location = "mem://bucket/"
    private let lock = NSLock()
    private var stored: [String: Stored] = [:]
    /// Whether the listing carries the metadata (Cloud Storage) or a describe must ask for it (S3).
    var listsMetadata = true
    /// Every read asked for: the name and range.
    private(set) var reads: [(name: String, range: Range<Int64>?)] = []
    private(set) var describes = 0
    /// Called (outside the lock) before the `n`th read (counted from 1) is served.
    var beforeRead: ((_ n: Int, _ name: String, _ range: Range<Int64>?) -> Void)?

    func put(_ name: String, _ bytes: [UInt8], metadata: BlobMetadata? = nil, vouching: Bool = false) {
        lock.withLock {
            var m = metadata ?? bytes.withUnsafeBytes { ContentDigest($0) }.metadata(name: name, contentType: "application/octet-stream")
            m.name = name
            m.size = Int64(bytes.count)
            let version = (stored[name]?.version ?? 0) + 1
            var object = Stored(bytes: bytes, version: version, metadata: m)
            if vouching { object.vouched = (m.sha256, m.md5, m.crc32c) }
            stored[name] = object
        }
    }

    /// Replaces the content of `name` (a new version), as another writer would.
    func replace(_ name: String, with bytes: [UInt8]) {
        lock.withLock {
            stored[name]!.bytes = bytes
            stored[name]!.version += 1
            stored[name]!.metadata.size = Int64(bytes.count)
        }
    }

    func readCount(of name: String) -> Int {
        lock.withLock { reads.filter { $0.name == name }.count }
    }

    func setVouched(_ name: String, md5: String) {
        lock.withLock { stored[name]!.vouched.md5 = md5 }
    }

    private func object(_ name: String, _ s: Stored, described: Bool) -> ArchiveSourceObject {
        var o = ArchiveSourceObject(name: name, size: Int64(s.bytes.count), version: String(s.version), updated: s.metadata.updated)
        guard described else { return o }
        o.described = true
        o.contentType = s.metadata.contentType
        o.cacheControl = s.metadata.cacheControl
        o.contentDisposition = s.metadata.contentDisposition
        o.contentEncoding = s.metadata.contentEncoding
        o.contentLanguage = s.metadata.contentLanguage
        o.customMetadata = s.metadata.customMetadata
        (o.sha256, o.md5, o.crc32c) = s.vouched
        return o
    }

    func list(_ body: (ArchiveSourceObject) throws -> Void) throws {
        let all = lock.withLock { stored.sorted { $0.key > $1.key }.map { object($0.key, $0.value, described: listsMetadata) } }
        for o in all { try body(o) }
    }

    func describe(_ objects: [ArchiveSourceObject], progress: @escaping @Sendable () -> Void) throws
        -> [Result<ArchiveSourceObject, ArchiveSourceChange>]
    {
        lock.withLock {
            describes += 1
            return objects.map { listed in
                progress()
                guard let s = stored[listed.name], String(s.version) == listed.version else {
                    return .failure(ArchiveSourceChange(location: location, name: listed.name, reason: "another version when described"))
                }
                var o = object(listed.name, s, described: true)
                o.updated = listed.updated
                return .success(o)
            }
        }
    }

    func read(_ object: ArchiveSourceObject, range: Range<Int64>?) -> ArchiveSourceRead {
        let n = lock.withLock {
            reads.append((object.name, range))
            return reads.count
        }
        let read = ArchiveSourceRead()
        DispatchQueue.global().async { [self] in
            beforeRead?(n, object.name, range)
            let result: Result<[UInt8], any Error> = lock.withLock {
                guard let s = stored[object.name], String(s.version) == object.version else {
                    return .failure(ArchiveSourceChange(location: location, name: object.name, reason: "not the version listed"))
                }
                let r = range ?? 0..<Int64(s.bytes.count)
                return .success(Array(s.bytes[Int(r.lowerBound)..<Int(r.upperBound)]))
            }
            read.complete(result)
        }
        return read
    }
}

final class ArchiveObjectSourceTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws {
        directory = try TemporaryDirectory()
    }

    override func tearDown() {
        directory = nil
    }

    /// Names whose byte order differs from a walk of folders ('-' and '.' sort before '/') and from
    /// Unicode or case-blind orders.
    static let names = ["a-b", "a.b", "a/b", "a/c/d", "B", "z/ü.txt", "é.txt", "v1/todolist/-K1/image.png", "v1/todolist/-K1/x"]

    func bytes(_ i: Int, count: Int = 3000) -> [UInt8] { SampleBytes.random(count: count + i * 17, seed: UInt64(40 + i)) }

    func metadata(_ name: String, _ bytes: [UInt8], _ i: Int) -> BlobMetadata {
        var m = bytes.withUnsafeBytes { ContentDigest($0) }.metadata(
            name: name, contentType: i % 3 == 0 ? nil : "image/png",
            customMetadata: ["firebaseStorageDownloadTokens": "token-\(i)", "Owner": "x"])
        m.cacheControl = i % 2 == 0 ? "public, max-age=60" : nil
        m.contentDisposition = "inline"
        m.contentLanguage = i % 4 == 0 ? "en" : nil
        m.updated = 1_600_000_000_000 + Int64(i) * 1234
        return m
    }

    func archive(_ location: String, _ source: MemoryBucket?, to output: String, _ configure: (inout ArchiveJob) -> Void = { _ in })
        throws -> ArchiveJob.Summary
    {
        var job = ArchiveJob(source: .bucket(location), output: output)
        job.created = Timestamp(seconds: 1_700_000_000)
        job.threads = 2
        if let source { job.openBucket = { $0 == source.location ? source : nil } }
        configure(&job)
        return try job.run()
    }

    func verify(_ archive: String) throws -> [String] {
        try VerifyJob(archive: archive).run().problems.map(\.description)
    }

    /// The same objects, in a blob-store folder and in a bucket, give the same entries (paths in byte
    /// order, sizes, bytes, attributes) and the same manifest objects, in one pass and in two.
    func testABucketGivesTheEntriesTheSameObjectsGiveInAFolder() throws {
        let folder = directory.path("store")
        let store = try DirectoryBlobStore(directory: folder, writable: true)
        let bucket = MemoryBucket()
        for (i, name) in Self.names.enumerated() {
            let content = bytes(i)
            let m = metadata(name, content, i)
            _ = try content.withUnsafeBytes { try store.put($0, metadata: m, replacing: false) }
            bucket.put(name, content, metadata: m)
        }
        store.close()
        let sorted = Self.names.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
        for listsMetadata in [true, false] {
            bucket.listsMetadata = listsMetadata
            for name in ["x.tar.zst", "x.zip", "x.tar.gz"] {
                let fromFolder = directory.path("folder-" + name), fromBucket = directory.path("bucket-\(listsMetadata)-" + name)
                let a = try archive(folder, nil, to: fromFolder)
                let b = try archive(bucket.location, bucket, to: fromBucket)
                XCTAssertEqual(a.objects, b.objects)
                XCTAssertEqual(a.bytes, b.bytes)
                XCTAssertEqual(b.changed, [])
                let (ma, ea) = try readArchiveContents(fromFolder)
                let (mb, eb) = try readArchiveContents(fromBucket)
                XCTAssertEqual(eb.map(\.0.path), sorted, name)
                XCTAssertEqual(ea.map(\.0.path), eb.map(\.0.path), name)
                for ((x, dx), (y, dy)) in zip(ea, eb) {
                    XCTAssertEqual(dx, dy, x.path)
                    XCTAssertEqual(x.size, y.size, x.path)
                    XCTAssertEqual(x.extendedAttributes, y.extendedAttributes, x.path)
                }
                XCTAssertEqual(ma?.parts, mb?.parts)
                XCTAssertEqual(
                    ma?.objects.map { o in
                        var o = o; o.metadata.updated = nil; return o
                    },
                    mb?.objects.map { o in
                        var o = o; o.metadata.updated = nil; return o
                    }, name)
                // What the bucket said is what the manifest holds, a guessed type where it said none.
                let m = try XCTUnwrap(mb?.object(at: "a/c/d")?.metadata)
                XCTAssertEqual(m.customMetadata, ["firebaseStorageDownloadTokens": "token-3", "Owner": "x"])
                XCTAssertNil(m.contentType, "none in the store, none in the manifest, as with a sidecar")
                XCTAssertEqual(m.updated, 1_600_000_000_000 + 3 * 1234)
                if !name.hasSuffix(".zip") {  // zip keeps whole seconds
                    XCTAssertEqual(eb.first { $0.0.path == "a/c/d" }?.0.modificationTime, Timestamp(milliseconds: m.updated!))
                }
                XCTAssertEqual(try verify(fromBucket), [], name)
            }
        }
    }

    /// A small object read once into memory, all its bytes; a large one in parts of
    /// `RemoteStream.partSize`, never more; in a `.tar.zst` each object is read once.
    func testObjectsAreReadOnceAndLargeOnesInParts() throws {
        let bucket = MemoryBucket()
        let large = SampleBytes.random(count: 2 * RemoteStream.partSize + 12345, seed: 7)
        bucket.put("big.bin", large)
        bucket.put("small.bin", bytes(1))
        bucket.put("empty", [])
        let output = directory.path("b.tar.zst")
        let summary = try archive(bucket.location, bucket, to: output)
        XCTAssertEqual(summary.objects, 3)
        let parts = bucket.reads.filter { $0.name == "big.bin" }.map(\.range)
        let p = Int64(RemoteStream.partSize)
        XCTAssertEqual(parts, [0..<p, p..<2 * p, 2 * p..<Int64(large.count)])
        XCTAssertEqual(bucket.reads.filter { $0.name != "big.bin" }.map(\.range), [nil, nil])
        let (manifest, entries) = try readArchiveContents(output)
        XCTAssertEqual(entries.map(\.1), [large, [], bytes(1)])
        XCTAssertEqual(manifest?.object(at: "big.bin")?.metadata.sha256, large.withUnsafeBytes { ContentDigest($0) }.sha256)
        XCTAssertEqual(try verify(output), [])
    }

    /// Objects that change after the listing are reported and left out (the archive stays consistent);
    /// one that changes in the middle of its entry ends with zeros and is left out of the manifest.
    func testObjectsThatChangeWhileArchivedAreReportedNotArchivedAsConsistent() throws {
        for output in ["c.tar.zst", "c.zip"] {
            let bucket = MemoryBucket()
            bucket.listsMetadata = false
            for (i, name) in ["a", "b", "c", "d"].enumerated() { bucket.put(name, bytes(i)) }
            let large = SampleBytes.random(count: RemoteStream.partSize + 100, seed: 9)
            bucket.put("e-large", large)
            // "a" changes before it is read; "e-large" after its first part; "c" before its second read
            // (a two-pass archive's second pass).
            bucket.beforeRead = { _, name, range in
                if name == "a" { bucket.replace("a", with: [1, 2, 3]) }
                if name == "e-large", range?.lowerBound == Int64(RemoteStream.partSize) {
                    bucket.replace("e-large", with: [9])
                }
                if name == "c", bucket.readCount(of: "c") == 2 { bucket.replace("c", with: [7]) }
            }
            let path = directory.path(output)
            let summary = try archive(bucket.location, bucket, to: path)
            XCTAssertEqual(summary.changed.map(\.name), output.hasSuffix(".zst") ? ["a", "e-large"] : ["a", "e-large", "c"], output)
            XCTAssertEqual(summary.objects, output.hasSuffix(".zst") ? 3 : 2, output)
            XCTAssertTrue(summary.changed[0].description.hasPrefix("mem://bucket/: object \"a\" changed while it was being archived"))
            let (manifest, entries) = try readArchiveContents(path)
            XCTAssertEqual(manifest?.objects.map(\.path), ["b", "c", "d"], output)
            if output.hasSuffix(".zst") {
                // In one pass the large object's entry had begun: it ends in zeros, and the manifest leaves it out.
                XCTAssertEqual(entries.map(\.0.path), ["b", "c", "d", "e-large"])
                XCTAssertTrue(summary.changed[1].outcome.contains("zeros"), summary.changed[1].outcome)
                let data = entries.last!.1
                XCTAssertEqual(Array(data.prefix(RemoteStream.partSize)), Array(large.prefix(RemoteStream.partSize)))
                XCTAssertEqual(Array(data.dropFirst(RemoteStream.partSize)), [UInt8](repeating: 0, count: 100))
                XCTAssertEqual(try verify(path), ["e-large: extra entry: not in the manifest"])
            } else {
                // In two, the first pass read "a" and "e-large": their changes are seen before anything is
                // written. "c" changed after the manifest was written: it lists it, the entry is missing.
                XCTAssertEqual(entries.map(\.0.path), ["b", "d"])
                XCTAssertTrue(summary.changed[2].outcome.contains("the manifest lists it"), summary.changed[2].outcome)
                let problems = try verify(path)
                XCTAssertEqual(problems.count, 1, "\(problems)")
                XCTAssertTrue(problems.first?.hasPrefix("c: ") ?? false, "\(problems)")
            }
            // A change between the listing and the HEAD (S3's describe).
            let second = MemoryBucket()
            second.listsMetadata = false
            second.put("x", bytes(1))
            second.put("y", bytes(2))
            var job = ArchiveJob(source: .bucket(second.location), output: directory.path("d-" + output))
            job.openBucket = { _ in
                // Listed, then replaced before it is described.
                ReplacingBeforeDescribe(base: second, name: "y")
            }
            let s = try job.run()
            XCTAssertEqual(s.changed.map(\.name), ["y"])
            XCTAssertEqual(try readArchiveContents(directory.path("d-" + output)).0?.objects.map(\.path), ["x"])
        }
    }

    /// Hashes the store vouches for are checked against the bytes; when it gives all three, a two-pass
    /// archive takes them instead of reading every object twice.
    func testTheStoresHashesAreCheckedAndSpareASecondRead() throws {
        let bucket = MemoryBucket()
        for (i, name) in ["a", "b", "c"].enumerated() {
            let content = bytes(i)
            bucket.put(name, content, metadata: metadata(name, content, 1), vouching: true)
        }
        let path = directory.path("h.zip")
        let summary = try archive(bucket.location, bucket, to: path)
        XCTAssertEqual(summary.changed, [])
        XCTAssertEqual(bucket.reads.count, 3, "read once each: the store's hashes served the manifest")
        XCTAssertEqual(try verify(path), [])

        bucket.setVouched("b", md5: "AAAAAAAAAAAAAAAAAAAAAA==")
        let again = try archive(bucket.location, bucket, to: directory.path("h.tar.zst"))
        XCTAssertEqual(again.changed.map(\.name), ["b"])
        XCTAssertTrue(again.changed[0].reason.contains("MD5"), again.changed[0].reason)
        XCTAssertEqual(try readArchiveContents(directory.path("h.tar.zst")).0?.objects.map(\.path), ["a", "c"])
    }

    /// `--include`, `--exclude` and `--dry-run` as for a folder: a dry run lists without describing or
    /// reading anything. Folder placeholders, a blob store's own files and a manifest are no objects.
    func testFiltersDryRunsAndWhatIsNoObject() throws {
        let bucket = MemoryBucket()
        bucket.listsMetadata = false
        for name in ["v1/a.png", "v1/b.jpg", "v2/c.png", "v1/", ".dumpkit/meta/x.json", ".dumpkit-manifest.json"] {
            bucket.put(name, name.hasSuffix("/") ? [] : bytes(1))
        }
        let dry = try archive(bucket.location, bucket, to: directory.path("f.tar.zst")) {
            $0.filter = PathFilter(include: ["v1/*", "nothing/*"], exclude: ["*.jpg"])
            $0.dryRun = true
        }
        XCTAssertEqual(dry.entries.map(\.path), ["v1/a.png"])
        XCTAssertEqual(dry.unmatchedIncludes?.patterns, ["nothing/*"])
        XCTAssertEqual(dry.unmatchedIncludes?.bucket, "mem://bucket/")
        XCTAssertEqual(bucket.reads.count + bucket.describes, 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.path("f.tar.zst")))
        XCTAssertEqual(dry.notes.count, 2, "\(dry.notes)")
        XCTAssertTrue(dry.notes.contains { $0.contains("1 folder placeholder") }, "\(dry.notes)")

        let all = try archive(bucket.location, bucket, to: directory.path("all.tar.zst"))
        XCTAssertEqual(try readArchiveContents(directory.path("all.tar.zst")).1.map(\.0.path), ["v1/a.png", "v1/b.jpg", "v2/c.png"])
        XCTAssertEqual(all.objects, 3)
    }

    /// A bucket with no object (an empty prefix) gives an archive of the manifest alone, as an empty folder does.
    func testAnEmptyBucketGivesAManifestAlone() throws {
        try FileManager.default.createDirectory(atPath: directory.path("empty"), withIntermediateDirectories: true)
        for name in ["e.tar.zst", "e.zip"] {
            let fromBucket = try archive(MemoryBucket().location, MemoryBucket(), to: directory.path("b-" + name))
            let fromFolder = try archive(directory.path("empty"), nil, to: directory.path("f-" + name))
            XCTAssertEqual(fromBucket.objects, 0)
            XCTAssertEqual(fromFolder.objects, 0)
            let (m, entries) = try readArchiveContents(directory.path("b-" + name))
            XCTAssertEqual(m?.objects, [])
            XCTAssertEqual(entries.count, 0)
            XCTAssertEqual(try readArchiveContents(directory.path("f-" + name)).1.count, 0)
        }
    }

    /// A backup set with its bucket read from a store: the bucket's objects under bucket/, after the
    /// dump's and rules' files in no way mixed up.
    func testABackupSetTakesItsBucketFromAStore() throws {
        let bucket = MemoryBucket()
        bucket.put("v1/x.png", bytes(1), metadata: metadata("v1/x.png", bytes(1), 1))
        let dump = directory.path("backup.json")
        try Data(#"{"v1":{}}"#.utf8).write(to: URL(fileURLWithPath: dump))
        for name in ["s.tar.zst", "s.zip"] {
            var job = ArchiveJob(source: .backup(dump: dump, rules: nil, bucket: bucket.location), output: directory.path(name))
            job.openBucket = { _ in bucket }
            let summary = try job.run()
            XCTAssertEqual(summary.objects, 2)
            let (m, entries) = try readArchiveContents(directory.path(name))
            XCTAssertEqual(entries.map(\.0.path), ["bucket/v1/x.png", "dump/backup.json"])
            XCTAssertEqual(m?.parts.map(\.role), [.dump, .bucket])
            XCTAssertEqual(m?.object(at: "bucket/v1/x.png")?.metadata.customMetadata["firebaseStorageDownloadTokens"], "token-1")
            XCTAssertEqual(try verify(directory.path(name)), [])
        }
    }

    /// Without an opener (the library alone), a bucket URL is refused with a message.
    func testABucketURLNeedsAnOpener() throws {
        var job = ArchiveJob(source: .bucket("gs://bucket"), output: directory.path("x.tar.zst"))
        job.threads = 1
        XCTAssertThrowsError(try job.run()) { XCTAssertTrue("\($0)".contains("ObjectStores"), "\($0)") }
    }
}

/// A source whose object `name` is replaced after the listing, before `describe`.
private struct ReplacingBeforeDescribe: ArchiveObjectSource {
    let base: MemoryBucket
    let name: String
    var location: String { base.location }
    func list(_ body: (ArchiveSourceObject) throws -> Void) throws { try base.list(body) }
    func describe(_ objects: [ArchiveSourceObject], progress: @escaping @Sendable () -> Void) throws
        -> [Result<ArchiveSourceObject, ArchiveSourceChange>]
    {
        base.replace(name, with: [0])
        return try base.describe(objects, progress: progress)
    }
    func read(_ object: ArchiveSourceObject, range: Range<Int64>?) -> ArchiveSourceRead { base.read(object, range: range) }
}
