import ArchiveKit
import Foundation
import JSONStream
import Synchronization
import TestSupport
import XCTest

@testable import DumpKit

final class BlobStoreTests: XCTestCase {
    private func metadata(_ name: String, _ bytes: [UInt8], type: String = "image/png") -> BlobMetadata {
        bytes.withUnsafeBytes {
            ContentDigest($0).metadata(name: name, contentType: type, customMetadata: ["firebaseStorageDownloadTokens": "t"])
        }
    }

    private func put(_ store: BlobStore, _ name: String, _ bytes: [UInt8], replacing: Bool = false) throws -> BlobPutOutcome {
        try bytes.withUnsafeBytes { try store.put($0, metadata: metadata(name, bytes), replacing: replacing) }
    }

    func testADigestTakesRecordedHashesOnlyForTheContentTheyDescribe() {
        let bytes: [UInt8] = Array("the content".utf8), other: [UInt8] = Array("other content".utf8)
        let computed = bytes.withUnsafeBytes { ContentDigest($0) }
        // The SHA-256 matches: MD5 and CRC-32C are taken as recorded (here deliberately not the real ones).
        let recorded = (computed.sha256, "recorded-md5", "recorded-crc")
        let taken = bytes.withUnsafeBytes { ContentDigest($0, recorded: recorded) }
        XCTAssertEqual([taken.sha256, taken.md5, taken.crc32c], [computed.sha256, "recorded-md5", "recorded-crc"])
        XCTAssertEqual(taken.size, Int64(bytes.count))
        // Other bytes, or nothing recorded: every hash computed.
        XCTAssertEqual(other.withUnsafeBytes { ContentDigest($0, recorded: recorded) }, other.withUnsafeBytes { ContentDigest($0) })
        XCTAssertEqual(bytes.withUnsafeBytes { ContentDigest($0, recorded: nil) }, computed)
    }

    func testPutGetMetadataListAndLayout() throws {
        let dir = try TemporaryDirectory()
        let root = dir.path("store/nested")
        let store = try DirectoryBlobStore(directory: root, writable: true)
        let png = BlobFixtures.png()
        XCTAssertEqual(try put(store, "v1/todolist/-Ka/image1.png", png), .stored)
        XCTAssertEqual(try put(store, "top.png", [1, 2, 3]), .stored)
        XCTAssertEqual(try store.get("v1/todolist/-Ka/image1.png"), png)
        XCTAssertEqual(try store.metadata("v1/todolist/-Ka/image1.png"), metadata("v1/todolist/-Ka/image1.png", png))
        XCTAssertTrue(try store.exists("top.png"))
        XCTAssertFalse(try store.exists("v1/todolist/-Ka"))
        XCTAssertNil(try store.metadata("missing.png"))
        XCTAssertThrowsError(try store.get("missing.png"))
        var names: [String] = []
        try store.list { names.append($0) }
        XCTAssertEqual(names.sorted(), ["top.png", "v1/todolist/-Ka/image1.png"])
        // The documented layout: the object at its name, metadata in a file named by the SHA-256 of
        // the name, temporary files gone.
        store.close()
        XCTAssertEqual(
            DirectoryBlobStore.metadataPath(of: "top.png"),
            ".dumpkit/meta/9d/9da2d28251f8f94ebfbc6fb34537c24deebd75db74d5f2d294707eeaf1177601.json")
        XCTAssertEqual(
            filesBelow(root),
            [
                ".dumpkit/lock", DirectoryBlobStore.metadataPath(of: "top.png"),
                DirectoryBlobStore.metadataPath(of: "v1/todolist/-Ka/image1.png"), "top.png", "v1/todolist/-Ka/image1.png",
            ].sorted())
        let sidecar = try String(contentsOfFile: root + "/" + DirectoryBlobStore.metadataPath(of: "top.png"), encoding: .utf8)
        XCTAssertTrue(
            sidecar.hasPrefix(
                #"{"name":"top.png","size":3,"contentType":"image/png","sha256":"039058c6f2c0cb492c533b0a4d14ef77cc0f78abccced5287d84a1a2011cfb81""#
            ), sidecar)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: root + "/.dumpkit/tmp"), [])
    }

    func testListingAFolderWiderThanTheDescriptorLimitFindsEveryObject() throws {
        let dir = try TemporaryDirectory()
        let store = try DirectoryBlobStore(directory: dir.path("s"), writable: true)
        defer { store.close() }
        let names = (0..<300).map { "v1/todolist/k\($0)/image.png" } + ["top.png"]
        for name in names { _ = try put(store, name, [1, 2, 3]) }
        // Fewer descriptors than the folder has subfolders: each must be closed before the next opens.
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        let openNow = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count
        var lowered = limit
        lowered.rlim_cur = rlim_t(openNow + 64)
        XCTAssertEqual(setrlimit(Int32(RLIMIT_NOFILE.rawValue), &lowered), 0)
        defer { setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) }
        var listed: [String] = []
        try store.list { listed.append($0) }
        XCTAssertEqual(listed.sorted(), names.sorted())
    }

    /// A bucket lists in UTF-8 byte order of the whole name; the folder store lists the same way
    /// without holding the listing (`a-b` before `a/x`, since `-` < `/`; `Z` before `a`; `é` last).
    func testListingIsInTheByteOrderOfWholeNames() throws {
        let dir = try TemporaryDirectory()
        let store = try DirectoryBlobStore(directory: dir.path("s"), writable: true)
        defer { store.close() }
        let names = ["a/x.png", "a-b.png", "a/y/z.png", "a.png", "Z.png", "é/1.png", "b", "a/y-1.png", "a/y/a.png", "a0"]
        for name in names.shuffled() { _ = try put(store, name, [1]) }
        var listed: [String] = []
        try store.list { listed.append($0) }
        XCTAssertEqual(listed, names.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
        XCTAssertEqual(listed, ["Z.png", "a-b.png", "a.png", "a/x.png", "a/y-1.png", "a/y/a.png", "a/y/z.png", "a0", "b", "é/1.png"])
        let paged = try store.names()
        var again: [String] = []
        while let name = try paged.next() { again.append(name) }
        XCTAssertEqual(again, listed)
    }

    func testPutIsIdempotentAndReplacesOtherContentOnlyWhenAsked() throws {
        try checkPutIsIdempotentAndReplacesOtherContentOnlyWhenAsked(namedTemporaryFiles: false)
    }

    func testPutWithNamedTemporaryFilesWhereUnnamedOnesAreMissing() throws {
        try checkPutIsIdempotentAndReplacesOtherContentOnlyWhenAsked(namedTemporaryFiles: true)
    }

    /// An object written in pieces (`begin`, `write`, `commit`) becomes what `put` of the whole would
    /// make, appears only when committed, and is refused or kept as `put` refuses or keeps it.
    func testAnObjectWrittenInPiecesIsNamedOnlyWhenCommitted() throws {
        for named in [false, true] {
            let dir = try TemporaryDirectory()
            let store = try DirectoryBlobStore(directory: dir.path("s"), writable: true)
            if named { store.useNamedTemporaryFiles() }
            let bytes = SampleBytes.random(count: (3 << 20) + 17, seed: 3)
            func write(_ name: String, _ content: [UInt8]) throws -> DirectoryBlobStore.PendingObject {
                let pending = try store.begin(name)
                for start in stride(from: 0, to: content.count, by: 1 << 20) {
                    try content[start..<min(content.count, start + (1 << 20))].withUnsafeBytes { try pending.write($0) }
                }
                return pending
            }
            let pending = try write("v/big.bin", bytes)
            XCTAssertFalse(try store.exists("v/big.bin"), "named \(named): visible before commit")
            XCTAssertEqual(
                try pending.commit(metadata: { $0.metadata(name: "ignored", contentType: "image/png") }, replacing: false), .stored)
            XCTAssertEqual(try store.get("v/big.bin"), bytes)
            XCTAssertEqual(
                try store.metadata("v/big.bin"),
                bytes.withUnsafeBytes { ContentDigest($0).metadata(name: "v/big.bin", contentType: "image/png") })
            XCTAssertEqual(
                try write("v/big.bin", bytes).commit(
                    metadata: { $0.metadata(name: "v/big.bin", contentType: "image/png") }, replacing: false),
                .unchanged)
            XCTAssertThrowsError(
                try write("v/big.bin", [1, 2]).commit(metadata: { $0.metadata(name: "v/big.bin", contentType: nil) }, replacing: false)
            ) { XCTAssertTrue($0 is BlobExistsError, "\($0)") }
            XCTAssertEqual(try store.get("v/big.bin"), bytes)
            let dropped = try write("v/other.bin", [7])
            dropped.abort()
            XCTAssertFalse(try store.exists("v/other.bin"))
            store.close()
            XCTAssertEqual(filesBelow(dir.path("s")).filter { !$0.hasPrefix(".dumpkit/") }, ["v/big.bin"], "named \(named)")
        }
    }

    /// `put(streaming:)` stores bytes that match their metadata, and nothing when they do not.
    func testAStreamedPutStoresOnlyBytesThatMatchTheirMetadata() throws {
        let dir = try TemporaryDirectory()
        let store = try DirectoryBlobStore(directory: dir.path("s"), writable: true)
        let bytes = SampleBytes.random(count: 5000, seed: 5)
        let m = metadata("x/y.bin", bytes)
        func pieces(_ content: [UInt8]) -> ((UnsafeRawBufferPointer) throws -> Void) throws -> Void {
            { write in
                for start in stride(from: 0, to: content.count, by: 1000) {
                    try content[start..<min(content.count, start + 1000)].withUnsafeBytes(write)
                }
            }
        }
        var other = bytes
        other[4000] ^= 1
        XCTAssertThrowsError(try store.put(streaming: m, replacing: false, fill: pieces(other))) {
            XCTAssertTrue("\($0)".contains("SHA-256 is "), "\($0)")
            XCTAssertTrue($0 is BlobContentMismatch)
        }
        XCTAssertFalse(try store.exists("x/y.bin"))
        XCTAssertEqual(try store.put(streaming: m, replacing: false, fill: pieces(bytes)), .stored)
        XCTAssertEqual(try store.get("x/y.bin"), bytes)
        XCTAssertEqual(try store.metadata("x/y.bin"), m)
        XCTAssertEqual(try store.put(streaming: m, replacing: false, fill: pieces(bytes)), .unchanged)
    }

    /// A folder with more entries than are sorted in memory is sorted on disk: the same names in
    /// the same byte order, subfolders included at their places.
    func testAFlatFolderOfManyObjectsIsListedInByteOrderWithoutSortingItInMemory() throws {
        let dir = try TemporaryDirectory()
        let store = try DirectoryBlobStore(directory: dir.path("s"), writable: true)
        var expected: [String] = []
        for i in 0..<2500 {
            let name = i % 500 == 0 ? "f-\(i)/x" : i % 7 == 0 ? "f.\(i)" : "f\(i)"
            if name.contains("/") { mkdir(dir.path("s/" + name.split(separator: "/")[0]), 0o755) }
            let fd = open(dir.path("s/" + name), O_WRONLY | O_CREAT | O_EXCL, 0o644)
            XCTAssertGreaterThanOrEqual(fd, 0, name)
            close(fd)
            expected.append(name)
        }
        expected.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        for limit in [100_000, 1000, 1] {
            let names = try store.names(memoryLimit: limit)
            var listed: [String] = []
            while let name = try names.next() { listed.append(name) }
            XCTAssertEqual(listed, expected, "at most \(limit) in memory")
        }
    }

    private func checkPutIsIdempotentAndReplacesOtherContentOnlyWhenAsked(namedTemporaryFiles: Bool) throws {
        let dir = try TemporaryDirectory()
        let store = try DirectoryBlobStore(directory: dir.path("s"), writable: true)
        if namedTemporaryFiles { store.useNamedTemporaryFiles() }
        XCTAssertEqual(try put(store, "a/b.png", [1, 2, 3]), .stored)
        let before = try FileManager.default.attributesOfItem(atPath: dir.path("s/a/b.png"))[.modificationDate] as? Date
        XCTAssertEqual(try put(store, "a/b.png", [1, 2, 3]), .unchanged)
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: dir.path("s/a/b.png"))[.modificationDate] as? Date, before)
        // Other bytes under the name: refused, nothing changed, unless replacing.
        XCTAssertThrowsError(try put(store, "a/b.png", [4, 5])) { error in
            let e = error as? BlobExistsError
            XCTAssertEqual(e?.name, "a/b.png")
            XCTAssertTrue(error is DataError)
        }
        XCTAssertEqual(try store.get("a/b.png"), [1, 2, 3])
        XCTAssertEqual(try store.metadata("a/b.png")?.size, 3)
        XCTAssertEqual(try put(store, "a/b.png", [4, 5], replacing: true), .replaced)
        XCTAssertEqual(try store.get("a/b.png"), [4, 5])
        XCTAssertEqual(try store.metadata("a/b.png")?.size, 2)
        XCTAssertEqual(try put(store, "a/b.png", [4, 5], replacing: true), .unchanged)
        // A missing sidecar (a run killed between the two renames): only the metadata is written.
        try FileManager.default.removeItem(atPath: dir.path("s/" + DirectoryBlobStore.metadataPath(of: "a/b.png")))
        XCTAssertEqual(try put(store, "a/b.png", [4, 5]), .stored)
        XCTAssertEqual(try store.metadata("a/b.png"), metadata("a/b.png", [4, 5]))
        XCTAssertEqual(try put(store, "c.png", [6]), .stored)
        store.close()
        XCTAssertEqual(
            filesBelow(dir.path("s")),
            [
                ".dumpkit/lock", DirectoryBlobStore.metadataPath(of: "a/b.png"),
                DirectoryBlobStore.metadataPath(of: "c.png"), "a/b.png", "c.png",
            ].sorted())
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path("s/.dumpkit/tmp")), [])
    }

    /// "Unchanged" is decided by the bytes: an object changed in place (same size, sidecar untouched)
    /// is not taken for the one the sidecar describes.
    func testAnObjectChangedBehindTheSidecarIsNotTakenAsUnchanged() throws {
        let dir = try TemporaryDirectory()
        let store = try DirectoryBlobStore(directory: dir.path("s"), writable: true)
        defer { store.close() }
        XCTAssertEqual(try put(store, "a.png", [1, 2, 3]), .stored)
        try Data([9, 9, 9]).write(to: URL(fileURLWithPath: dir.path("s/a.png")))
        XCTAssertThrowsError(try put(store, "a.png", [1, 2, 3])) { XCTAssertTrue($0 is BlobExistsError, "\($0)") }
        XCTAssertEqual(try put(store, "a.png", [1, 2, 3], replacing: true), .replaced)
        XCTAssertEqual(try store.get("a.png"), [1, 2, 3])
        // A file put there by other means, without a sidecar, with the same bytes: kept, metadata added.
        try Data([7, 7]).write(to: URL(fileURLWithPath: dir.path("s/copied.png")))
        XCTAssertEqual(try put(store, "copied.png", [7, 7]), .stored)
        XCTAssertEqual(try store.metadata("copied.png"), metadata("copied.png", [7, 7]))
    }

    /// Two writers (two store instances, as two processes would have) put other bytes under the same
    /// names at the same time, round after round: after each round, check-blobs finds every object
    /// with the metadata of its own bytes.
    func testConcurrentWritersOfOneNameNeverMixObjectAndMetadata() throws {
        let dir = try TemporaryDirectory()
        let root = dir.path("s")
        let names = (0..<16).map { "v1/todolist/-K\($0)/image1.png" }
        let contents: [[UInt8]] = [BlobFixtures.png(3000, seed: 1), BlobFixtures.png(5000, seed: 2)]
        let metadata = (0..<2).map { writer in names.map { self.metadata($0, contents[writer]) } }
        // check-blobs on a dump naming every object (path references are checked against the store's metadata).
        let dump = dir.path("dump.json")
        try Data(("{" + names.enumerated().map { "\"k\($0.offset)\": \"\($0.element)\"" }.joined(separator: ",") + "}").utf8)
            .write(to: URL(fileURLWithPath: dump))
        var check = CheckBlobsJob(input: dump, store: root)
        check.referenceStyle = .path
        let stores = try (0..<2).map { _ in try DirectoryBlobStore(directory: root, writable: true) }
        defer { for store in stores { store.close() } }
        let errors = Mutex<[String]>([])
        for round in 0..<25 {
            DispatchQueue.concurrentPerform(iterations: 2) { writer in
                for (index, name) in names.enumerated() {
                    do {
                        _ = try contents[writer].withUnsafeBytes {
                            try stores[writer].put($0, metadata: metadata[writer][index], replacing: true)
                        }
                    } catch {
                        errors.withLock { $0.append("\(name): \(error)") }
                    }
                }
            }
            XCTAssertEqual(errors.withLock { $0 }, [])
            let (findings, references) = try check.run()
            XCTAssertEqual(references, names.count)
            XCTAssertEqual(findings.map(\.message), [], "round \(round)")
            if !findings.isEmpty { break }
        }
    }

    func testMetadataOfAnotherNameIsAnError() throws {
        let dir = try TemporaryDirectory()
        let store = try DirectoryBlobStore(directory: dir.path("s"), writable: true)
        XCTAssertEqual(try put(store, "a.png", [1]), .stored)
        XCTAssertEqual(try put(store, "b.png", [2]), .stored)
        let a = dir.path("s/" + DirectoryBlobStore.metadataPath(of: "a.png"))
        try FileManager.default.removeItem(atPath: a)
        try FileManager.default.copyItem(atPath: dir.path("s/" + DirectoryBlobStore.metadataPath(of: "b.png")), toPath: a)
        XCTAssertThrowsError(try store.metadata("a.png")) { XCTAssertTrue("\($0)".contains(#"describes "b.png""#), "\($0)") }
    }

    func testNameRulesSayTheFirstRuleBroken() {
        let empty = "has an empty segment ('//' or a trailing '/')"
        let cases: [(String, String)] = [
            ("", "is empty"), (String(repeating: "a", count: 1025), "is longer than 1024 bytes"),
            ("../a\nb", "contains a line break"), ("a\rb", "contains a line break"), ("/a\u{0}", "contains a NUL character"),
            ("/a/../b", "is absolute (starts with '/')"), ("../x.png", "has a '..' segment"), ("a/./b/../c", "has a '.' segment"),
            ("a//b/..", empty), ("a/", empty), ("./.dumpkit/x", "has a '.' segment"),
            (".dumpkit", "starts with '.dumpkit/', which the store keeps for itself"),
            (".dumpkit/meta/x.json", "starts with '.dumpkit/', which the store keeps for itself"),
            ("a/" + String(repeating: "b", count: 256) + "/../c", "has a segment of 256 bytes (a file name holds at most 255)"),
            (String(repeating: "é", count: 150) + ".png", "has a segment of 304 bytes (a file name holds at most 255)"),
            (#"..\..\x.png"#, "has a '..' between backslashes, which restore refuses (a separator on Windows)"),
            (#"a/b\.."#, "has a '..' between backslashes, which restore refuses (a separator on Windows)"),
            (#"\x.png"#, #"starts with '\', which archives strip (a Windows root)"#),
            ("C:x.png", "starts with a drive letter ('C:'), which archives strip"),
        ]
        for (name, reason) in cases {
            XCTAssertThrowsError(try BlobObjectName.validate(name), String(reflecting: name)) {
                XCTAssertEqual(($0 as? BlobNameError)?.reason, reason, String(reflecting: name))
            }
        }
        for name in [
            "...", ".a/..b/c.", ".dumpkitx/a.png", "a/.dumpkit/b.png", "a", "写真/é.jpg", String(repeating: "a", count: 255) + "/b",
            #"a\b"#, #"a..\..b"#, #"...\x"#, #"a/.\b"#, "a/c:b", "1:x",
        ] {
            XCTAssertNoThrow(try BlobObjectName.validate(name), name)
        }
    }

    /// One rule for every command: a name passes exactly when restore would put it back unchanged
    /// (`EntryPath`, which cleans archive paths as bsdtar does), over every short name of these pieces.
    func testTheNameRuleIsTheOneRestoreApplies() {
        let pieces = ["a", ".", "..", #"\"#, "/", "c:", "é"]
        var names = [""]
        var checked = 0
        for _ in 0..<5 {
            names = names.flatMap { name in pieces.map { name + $0 } }
            for name in names {
                let valid = (try? BlobObjectName.validate(name)) != nil
                let restored = try? EntryPath(sanitizing: name)
                let unchanged = restored != nil && restored!.removedPrefix == nil && restored!.description == name
                XCTAssertEqual(valid, unchanged, String(reflecting: name))
                checked += 1
            }
        }
        XCTAssertEqual(checked, 7 + 49 + 343 + 2401 + 16807)
    }

    func testNamesThatCouldLeaveTheStoreAreRefused() throws {
        let dir = try TemporaryDirectory()
        let store = try DirectoryBlobStore(directory: dir.path("s"), writable: true)
        let bad = [
            "", "/etc/x.png", "../x.png", "a/../../x.png", "a/./b.png", "a//b.png", "a/", "a\nb.png", "a\rb.png",
            ".dumpkit/meta/x.json", String(repeating: "a", count: 1025), "a\u{0}b",
        ]
        for name in bad {
            XCTAssertThrowsError(try put(store, name, [1]), String(reflecting: name)) { XCTAssertTrue($0 is BlobNameError, "\($0)") }
        }
        XCTAssertThrowsError(try put(store, String(repeating: "é", count: 512) + "/x.png", [1]))  // 1030 bytes
        // 1024 bytes (in segments the file system takes: at most 255 bytes each).
        let longest =
            Array(repeating: String(repeating: "é", count: 125), count: 4).joined(separator: "/") + "/" + String(repeating: "a", count: 20)
        XCTAssertEqual(try put(store, longest, [1]), .stored)
        store.close()
        XCTAssertEqual(filesBelow(dir.path("s")).filter { !$0.hasPrefix(".dumpkit") }, [longest])
    }

    /// A store for writing in `dir/s`, holding a symbolic link `s/<link>` to the empty folder `dir/outside`.
    private func storeWithLinkOutside(_ dir: TemporaryDirectory, link: String) throws -> DirectoryBlobStore {
        try FileManager.default.createDirectory(atPath: dir.path("outside"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: dir.path("s"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: dir.path("s/\(link)"), withDestinationPath: dir.path("outside"))
        return try DirectoryBlobStore(directory: dir.path("s"), writable: true)
    }

    func testSymbolicLinksInsideTheStoreAreNotFollowed() throws {
        let dir = try TemporaryDirectory()
        let store = try storeWithLinkOutside(dir, link: "v1")
        XCTAssertThrowsError(try put(store, "v1/x.png", [1])) { XCTAssertTrue("\($0)".contains("symbolic link"), "\($0)") }
        // As a parent, and as the object's folder below a parent that earlier objects opened.
        XCTAssertThrowsError(try put(store, "v1/a/x.png", [1])) { XCTAssertTrue("\($0)".contains("symbolic link"), "\($0)") }
        XCTAssertEqual(try put(store, "p/a/x.png", [1]), .stored)
        XCTAssertEqual(try put(store, "p/b/x.png", [1]), .stored)
        try FileManager.default.createSymbolicLink(atPath: dir.path("s/p/c"), withDestinationPath: dir.path("outside"))
        XCTAssertThrowsError(try put(store, "p/c/x.png", [1])) { XCTAssertTrue("\($0)".contains("symbolic link"), "\($0)") }
        // A file where a folder should be.
        try Data([1]).write(to: URL(fileURLWithPath: dir.path("s/p/f")))
        XCTAssertThrowsError(try put(store, "p/f/x.png", [1])) { XCTAssertTrue("\($0)".contains("is a file"), "\($0)") }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path("outside")), [])
        XCTAssertEqual(try store.get("p/b/x.png"), [1])
    }

    func testNamesAreCutAndFoldersKeptByTheirBytes() throws {
        let dir = try TemporaryDirectory()
        let store = try storeWithLinkOutside(dir, link: "ln")
        // Two spellings of "café": equal as Strings, two names and two folders. The first folder is
        // kept open once an object finds it existing; the second must not be taken for it.
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        XCTAssertEqual(composed, decomposed)
        for i in 0..<3 { XCTAssertEqual(try put(store, "\(composed)/\(i).png", [1]), .stored) }
        XCTAssertEqual(try put(store, "\(decomposed)/0.png", [2]), .stored)
        XCTAssertEqual(try store.get("\(composed)/0.png"), [1])
        XCTAssertEqual(try store.get("\(decomposed)/0.png"), [2])
        // A "/" followed by a combining mark is one Character but still a separator.
        XCTAssertThrowsError(try put(store, "ln/\u{301}x.png", [1])) { XCTAssertTrue("\($0)".contains("symbolic link"), "\($0)") }
        XCTAssertEqual(try put(store, "d/\u{301}x.png", [3]), .stored)
        store.close()
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path("outside")), [])
        let files = filesBelow(dir.path("s")).filter { !$0.hasPrefix(".dumpkit") }.map { Array($0.utf8) }
        let expected = ["\(composed)/0.png", "\(composed)/1.png", "\(composed)/2.png", "\(decomposed)/0.png", "d/\u{301}x.png"]
        XCTAssertEqual(Set(files), Set(expected.map { Array($0.utf8) }))
    }

    func testOpeningForWritingRemovesTemporaryFilesOfDeadRunsOnly() throws {
        let dir = try TemporaryDirectory()
        let root = dir.path("s")
        let live = try DirectoryBlobStore(directory: root, writable: true)
        XCTAssertEqual(try put(live, "x.png", [1]), .stored)
        // A run killed while writing: its folder and a partial file, with nobody holding its lock.
        let dead = root + "/.dumpkit/tmp/run-dead01"
        try FileManager.default.createDirectory(atPath: dead, withIntermediateDirectories: false)
        try Data([9, 9]).write(to: URL(fileURLWithPath: dead + "/put-1"))
        try Data([9, 9]).write(to: URL(fileURLWithPath: dead + "/put-2"))
        let second = try DirectoryBlobStore(directory: root, writable: true)
        XCTAssertEqual(second.staleTemporaryFilesRemoved, 2)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dead))
        // The live store's folder survived and still works.
        XCTAssertEqual(try put(live, "y.png", [2]), .stored)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: root + "/.dumpkit/tmp").count, 2)
        live.close()
        second.close()
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: root + "/.dumpkit/tmp"), [])
    }

    func testReadingOpensWithoutWritingAndComputesMissingMetadata() throws {
        let dir = try TemporaryDirectory()
        XCTAssertThrowsError(try DirectoryBlobStore(directory: dir.path("nope"), writable: false)) {
            XCTAssertTrue("\($0)".contains("cannot open"), "\($0)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.path("nope")))
        // A plain copy of a bucket, without sidecars.
        try FileManager.default.createDirectory(atPath: dir.path("b/v1"), withIntermediateDirectories: true)
        let jpeg = BlobFixtures.jpeg()
        try Data(jpeg).write(to: URL(fileURLWithPath: dir.path("b/v1/p.jpg")))
        let store = try DirectoryBlobStore(directory: dir.path("b"), writable: false)
        let m = try XCTUnwrap(try store.metadata("v1/p.jpg"))
        XCTAssertEqual(m.contentType, "image/jpeg")
        XCTAssertEqual(m.size, Int64(jpeg.count))
        XCTAssertThrowsError(try put(store, "v1/q.png", [1]))
        store.close()
        XCTAssertEqual(filesBelow(dir.path("b")), ["v1/p.jpg"])
    }
}
