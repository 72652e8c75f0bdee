import Foundation
import TestSupport
import XCTest

@testable import DumpKit

/// Listing a bucket on several threads: every file once, links and special files skipped, errors stop it.
final class BucketScannerTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws {
        directory = try TemporaryDirectory()
    }

    override func tearDown() {
        directory = nil
    }

    private func write(_ bytes: Int, at path: String) throws {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(repeating: 7, count: bytes).write(to: URL(fileURLWithPath: path))
    }

    /// A shard's scan (`range`) skips folders wholly outside its names: it finds exactly the names of
    /// a whole scan that lie in the range, where byte order is not the order of a walk of folders
    /// ('-' and '.' sort before '/').
    func testAScanOfAShardsRangeFindsExactlyTheNamesInTheRange() throws {
        let root = directory.path("bucket")
        let names = [
            "a-b", "a.b", "a/b.txt", "a/b-c/x", "a/b/c", "a/b/c-d", "a/b0", "a/c/d.png", "B", "z/ü.txt", "é.txt", "v1/t/-K1/image",
            "v1/t/-K1-/x", "v1/t/-K1/revisions/1.json", "v1/t/-K10/image",
        ]
        for (i, name) in names.enumerated() { try write(i, at: root + "/" + name) }
        let all = try BucketScanner(root: root, prefix: "", filter: PathFilter()).scan().items.map(\.name).sorted(
            by: ArchiveItem.bytesPrecede)
        XCTAssertEqual(Set(all), Set(names))
        var builder = BucketIndex.Builder(source: root, unitBytes: 1)
        for name in all { try builder.add(name: name, size: 1) }
        let index = builder.index()
        for n in [2, 3, 5, 8, 15] {
            var union: [String] = []
            for i in 0..<n {
                let range = index.range(of: try ShardSpec(index: i, count: n))
                var scanner = BucketScanner(root: root, prefix: "", filter: PathFilter())
                scanner.range = range
                let found = try scanner.scan().items.map(\.name).sorted(by: ArchiveItem.bytesPrecede)
                XCTAssertEqual(found, all.filter { BucketIndex.contains(range, $0) }, "shard \(i) of \(n)")
                union += found
            }
            XCTAssertEqual(union, all, "\(n) shards")
        }
    }

    func testEveryFileOfAWideDeepTreeIsFoundOnceWhateverTheThreads() throws {
        let root = directory.path("bucket")
        var expected: [String: Int64] = [:]
        for index in 0..<400 {
            // Mostly folders of one file, as buckets are, some two deep more, some with two files.
            let name = "v1/todolist/-K\(index)/" + (index % 3 == 0 ? "images/0/photo.jpg" : "image1.png")
            try write(index, at: root + "/" + name)
            expected[name] = Int64(index)
            if index % 7 == 0 {
                try write(1, at: root + "/v1/todolist/-K\(index)/note.txt")
                expected["v1/todolist/-K\(index)/note.txt"] = 1
            }
        }
        try write(3, at: root + "/top.json")
        expected["top.json"] = 3
        try write(5, at: root + "/" + ArchiveManifest.entryName)
        try write(5, at: root + "/" + DirectoryBlobStore.metadataPath(of: "top.json"))
        try FileManager.default.createSymbolicLink(atPath: root + "/v1/link", withDestinationPath: "/etc/passwd")
        XCTAssertEqual(mkfifo(root + "/v1/todolist/fifo", 0o600), 0)

        for threads in [1, 2, 4, 9] {
            var scanner = BucketScanner(root: root, prefix: "", filter: PathFilter())
            scanner.threads = threads
            let result = try scanner.scan()
            XCTAssertEqual(result.items.count, expected.count, "threads \(threads)")
            XCTAssertEqual(Dictionary(uniqueKeysWithValues: result.items.map { ($0.name, $0.size) }), expected, "threads \(threads)")
            XCTAssertTrue(result.blobStore)
            XCTAssertEqual(result.skipped, [root + "/v1/link", root + "/v1/todolist/fifo"], "sorted, whatever thread found them")
        }
    }

    func testANameThatIsNotUTF8StopsTheScan() throws {
        let root = directory.path("bucket")
        for index in 0..<50 { try write(1, at: root + "/v1/\(index)/a.txt") }
        let folder = root + "/v1/17"
        let bad = open(folder + "/bad-\u{FFFD}", O_CREAT | O_WRONLY, 0o600)
        XCTAssertGreaterThanOrEqual(bad, 0)
        close(bad)
        // Rename it to a name with a lone 0xFF byte, which no String can hold.
        var target = Array((folder + "/bad-").utf8) + [0xFF, 0]
        XCTAssertEqual(
            target.withUnsafeMutableBufferPointer {
                rename(folder + "/bad-\u{FFFD}", UnsafeRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self))
            }, 0)
        var scanner = BucketScanner(root: root, prefix: "", filter: PathFilter())
        scanner.threads = 4
        XCTAssertThrowsError(try scanner.scan()) { error in
            XCTAssertTrue("\(error)".contains("not valid UTF-8"), "\(error)")
            XCTAssertTrue("\(error)".contains("v1/17"), "\(error)")
        }
    }
}
