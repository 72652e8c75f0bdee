import ArchiveKit
import Foundation
import TestSupport
import XCTest

/// Extraction never writes outside its destination, whatever the archive says.
final class SafeExtractorTests: XCTestCase {
    private var directory: TemporaryDirectory!
    /// The destination, inside `directory`; everything else in `directory` is "outside".
    private var destination: String!

    override func setUpWithError() throws {
        directory = try TemporaryDirectory()
        destination = directory.path("dest")
    }

    override func tearDown() {
        directory = nil
    }

    /// Everything in the temporary directory outside the destination (the archives themselves aside).
    private func outside() -> [String] {
        tree(directory.url.path).filter { !$0.hasPrefix("dest") && !$0.hasSuffix(".tar") && !$0.hasSuffix(".zip") }
    }

    private func refusals(_ outcomes: [(String, SafeExtractor.Outcome)]) -> [String] {
        outcomes.compactMap { if case .refused = $0.1 { $0.0 } else { nil } }
    }

    func testZipSlipEntriesAreRefusedOrReRooted() throws {
        let zip = directory.path("slip.zip")
        try python(
            """
            import zipfile
            with zipfile.ZipFile('\(zip)', 'w') as z:
                for name in ['../evil.txt', 'a/../../evil2.txt', '..\\\\evil3.txt', '/abs.txt', 'c:/drive.txt', 'ok/fine.txt']:
                    z.writestr(zipfile.ZipInfo(name), b'pwned ' + name.encode())
            """)
        let outcomes = try extractAll(zip, to: destination)
        // libarchive's zip reader turns the backslash of '..\\evil3.txt' into a slash.
        XCTAssertEqual(refusals(outcomes), ["../evil.txt", "a/../../evil2.txt", "../evil3.txt"])
        XCTAssertEqual(tree(destination), ["abs.txt", "drive.txt", "ok", "ok/fine.txt"])
        XCTAssertEqual(outside(), [])
    }

    func testTarTraversalLinksAndSpecialFilesNeverLeaveTheDestination() throws {
        let tar = directory.path("evil.tar")
        try python(
            """
            import tarfile, io
            def add(t, name, kind=tarfile.REGTYPE, data=b'', link='', mode=0o644):
                info = tarfile.TarInfo(name); info.type = kind; info.linkname = link; info.mode = mode; info.size = len(data)
                t.addfile(info, io.BytesIO(data) if data else None)
            with tarfile.open('\(tar)', 'w', format=tarfile.PAX_FORMAT) as t:
                add(t, '../up.txt', data=b'x')
                add(t, 'escape', tarfile.SYMTYPE, link='\(directory.url.path)')
                add(t, 'escape/through-link.txt', data=b'x')
                add(t, 'rel', tarfile.SYMTYPE, link='../..')
                add(t, 'hard', tarfile.LNKTYPE, link='/etc/passwd')
                add(t, 'hard2', tarfile.LNKTYPE, link='../../etc/passwd')
                add(t, 'dev', tarfile.CHRTYPE)
                add(t, 'fifo', tarfile.FIFOTYPE)
                add(t, 'suid', data=b'#!/bin/sh', mode=0o6755)
                add(t, 'inside', tarfile.SYMTYPE, link='suid')
                add(t, 'hard3', tarfile.LNKTYPE, link='suid')
            """)
        let outcomes = try extractAll(tar, to: destination)
        XCTAssertEqual(refusals(outcomes), ["../up.txt", "escape", "rel", "hard", "hard2", "dev", "fifo"])
        // The refused link is not there, so the next entry makes a real directory of that name.
        XCTAssertEqual(tree(destination), ["escape", "escape/through-link.txt", "hard3", "inside", "suid"])
        XCTAssertEqual(outside(), [])
        var status = stat()
        XCTAssertEqual(stat(destination + "/suid", &status), 0)
        XCTAssertEqual(status.st_mode & 0o7000, 0, "setuid and setgid bits are dropped")
        XCTAssertEqual(status.st_mode & 0o700, 0o700)
        XCTAssertEqual(try String(contentsOfFile: destination + "/inside", encoding: .utf8), "#!/bin/sh")
        var linked = stat()
        XCTAssertEqual(stat(destination + "/hard3", &linked), 0)
        XCTAssertEqual(linked.st_ino, status.st_ino, "a hard link inside the destination is made")
    }

    func testALinkAlreadyInTheDestinationIsNeverFollowed() throws {
        let outsideDirectory = directory.path("outside-dir")
        try FileManager.default.createDirectory(atPath: outsideDirectory, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: destination, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: destination + "/v1", withDestinationPath: outsideDirectory)
        try FileManager.default.createSymbolicLink(atPath: destination + "/file", withDestinationPath: outsideDirectory + "/victim")
        let tar = directory.path("plain.tar")
        try writeArchive(
            tar, compression: .none,
            [
                (ArchiveEntry(path: "v1/a.json", size: 2), Array("{}".utf8)),
                (ArchiveEntry(path: "file", size: 3), Array("new".utf8)),
            ])
        let outcomes = try extractAll(tar, to: destination)
        XCTAssertEqual(refusals(outcomes), ["v1/a.json"])
        XCTAssertEqual(tree(outsideDirectory), [], "nothing written through the link")
        XCTAssertFalse(exists(outsideDirectory + "/victim"))
        // The link named like a file is replaced by the file itself (rename does not follow links).
        XCTAssertEqual(try String(contentsOfFile: destination + "/file", encoding: .utf8), "new")
        var status = stat()
        XCTAssertEqual(lstat(destination + "/file", &status), 0)
        XCTAssertEqual(status.st_mode & S_IFMT, S_IFREG)
    }

    func testExistingFilesFollowTheOverwritePolicy() throws {
        let tar = directory.path("a.tar")
        let time = Timestamp(seconds: 1_000_000_000)
        try writeArchive(
            tar, compression: .none,
            [
                (ArchiveEntry(path: "same", size: 3, modificationTime: time), Array("abc".utf8)),
                (ArchiveEntry(path: "changed", size: 3, modificationTime: time), Array("abc".utf8)),
                (ArchiveEntry(path: "longer", size: 3, modificationTime: time), Array("abc".utf8)),
                (ArchiveEntry(path: "shorter", size: 3, modificationTime: time), Array("abc".utf8)),
            ])
        func prepare() throws {
            try? FileManager.default.removeItem(atPath: destination)
            try FileManager.default.createDirectory(atPath: destination, withIntermediateDirectories: true)
            for (name, text) in [("same", "abc"), ("changed", "abX"), ("longer", "abcd"), ("shorter", "ab")] {
                try writeFile(destination + "/" + name, Array(text.utf8))
            }
        }
        try prepare()
        XCTAssertEqual(try extractAll(tar, to: destination, overwrite: .never).map(\.1), Array(repeating: .kept, count: 4))
        XCTAssertEqual(try String(contentsOfFile: destination + "/changed", encoding: .utf8), "abX")

        try prepare()
        XCTAssertEqual(try extractAll(tar, to: destination, overwrite: .ifDifferent).map(\.1), [.unchanged, .written, .written, .written])
        for name in ["same", "changed", "longer", "shorter"] {
            XCTAssertEqual(try String(contentsOfFile: destination + "/" + name, encoding: .utf8), "abc", name)
        }
        XCTAssertEqual(tree(destination), ["changed", "longer", "same", "shorter"], "no temporary files left")

        try prepare()
        XCTAssertEqual(try extractAll(tar, to: destination, overwrite: .always).map(\.1), Array(repeating: .written, count: 4))
        let attributes = try FileManager.default.attributesOfItem(atPath: destination + "/same")
        XCTAssertEqual((attributes[.modificationDate] as? Date)?.timeIntervalSince1970, 1_000_000_000)
    }

    func testALeftoverTemporaryFileFromAnInterruptedRunIsReplaced() throws {
        try FileManager.default.createDirectory(atPath: destination + "/v1", withIntermediateDirectories: true)
        try writeFile(destination + "/v1/.a.json.dumpkit-partial", Array("half of the da".utf8))
        let tar = directory.path("a.tar")
        try writeArchive(tar, compression: .none, [(ArchiveEntry(path: "v1/a.json", size: 7), Array(#"{"a":1}"#.utf8))])
        XCTAssertEqual(try extractAll(tar, to: destination).map(\.1), [.written])
        XCTAssertEqual(tree(destination), ["v1", "v1/a.json"])
        XCTAssertEqual(try String(contentsOfFile: destination + "/v1/a.json", encoding: .utf8), #"{"a":1}"#)
    }

    /// Temporary files carry their process id: those of a process that is gone are removed when a
    /// restore writes into their directory, those of a live one (another restore at work) stay.
    func testOnlyTemporaryFilesOfProcessesThatAreGoneAreRemoved() throws {
        try FileManager.default.createDirectory(atPath: destination + "/v1", withIntermediateDirectories: true)
        let finished = Process()
        finished.executableURL = URL(fileURLWithPath: "/bin/true")
        try finished.run()
        finished.waitUntilExit()
        let gone = finished.processIdentifier
        let live = getppid()
        for name in [
            ".a.json.dumpkit-partial-\(gone)-abc123", ".b.json.dumpkit-partial-\(live)-abc123", ".dumpkit-partial-f00d-\(gone)-xyz789",
            ".c.json.dumpkit-partial", "c.json.dumpkit-partial-\(gone)-abc123",
        ] {
            try writeFile(destination + "/v1/" + name, Array("half of the da".utf8))
        }
        let tar = directory.path("a.tar")
        try writeArchive(tar, compression: .none, [(ArchiveEntry(path: "v1/a.json", size: 7), Array(#"{"a":1}"#.utf8))])
        XCTAssertEqual(try extractAll(tar, to: destination).map(\.1), [.written])
        XCTAssertEqual(
            tree(destination), ["v1", "v1/.b.json.dumpkit-partial-\(live)-abc123", "v1/a.json", "v1/c.json.dumpkit-partial-\(gone)-abc123"])
    }

    func testAFailedWriteLeavesTheExistingFileAsItWas() throws {
        try FileManager.default.createDirectory(atPath: destination, withIntermediateDirectories: true)
        try writeFile(destination + "/good.bin", Array("the good file".utf8))
        // A cut-off archive: the entry's data ends early, so the read fails in the middle of the file.
        let tar = directory.path("cut.tar")
        try writeArchive(
            tar, compression: .none, [(ArchiveEntry(path: "good.bin", size: 200_000), SampleBytes.random(count: 200_000, seed: 9))])
        let bytes = try contents(tar)
        try writeFile(tar, Array(bytes.prefix(100_000)))
        XCTAssertThrowsError(try extractAll(tar, to: destination)) { error in
            XCTAssertTrue("\(error)".contains("good.bin"), "\(error)")
        }
        XCTAssertEqual(try String(contentsOfFile: destination + "/good.bin", encoding: .utf8), "the good file")
        XCTAssertEqual(tree(destination), ["good.bin"])
    }

    func testTheDestinationMustBeADirectory() throws {
        let file = directory.path("a-file")
        try writeFile(file, [1])
        XCTAssertThrowsError(try SafeExtractor(destination: file)) { error in
            XCTAssertEqual("\(error)", "\(file): not a directory (the destination must be a directory)")
        }
        _ = try SafeExtractor(destination: directory.path("new/nested/dest"))
        XCTAssertTrue(exists(directory.path("new/nested/dest")))
    }

    func testLimitsStopDecompressionBombs() throws {
        let bomb = directory.path("bomb.tar.zst")
        try writeArchive(bomb, [(ArchiveEntry(path: "zeros", size: 80 << 20), [UInt8](repeating: 0, count: 80 << 20))])
        XCTAssertThrowsError(try extractAll(bomb, to: destination)) { error in
            XCTAssertTrue("\(error)".contains("the ratio limit against decompression bombs"), "\(error)")
        }
        XCTAssertEqual(tree(destination), [], "the partial file is removed")
        XCTAssertThrowsError(try extractAll(bomb, to: destination, limits: ExtractionLimits(maxBytes: 1 << 20, maxRatio: nil))) { error in
            XCTAssertTrue("\(error)".contains("zeros: the archive expands to more than 1048576 bytes (the byte limit)"), "\(error)")
        }
        let many = directory.path("many.tar")
        try writeArchive(many, compression: .none, (0..<5).map { (ArchiveEntry(path: "f\($0)", size: 0), []) })
        XCTAssertThrowsError(try extractAll(many, to: destination, limits: ExtractionLimits(maxEntries: 3))) { error in
            XCTAssertTrue("\(error)".contains("f3: the archive has more than 3 entries (the entry limit)"), "\(error)")
        }
        XCTAssertEqual(try extractAll(bomb, to: destination, limits: ExtractionLimits(maxRatio: nil)).map(\.1), [.written])
    }

    func testWorksWithARelativeDestinationAndNeverChangesTheWorkingDirectory() throws {
        let tar = directory.path("a.tar")
        try writeArchive(tar, compression: .none, [(ArchiveEntry(path: "x/y.txt", size: 1), [65])])
        let before = FileManager.default.currentDirectoryPath
        // Up to the root from the working directory, then down to the destination.
        let depth = before.split(separator: "/").count
        let relative = String(repeating: "../", count: depth) + destination.dropFirst()
        _ = try extractAll(tar, to: relative)
        XCTAssertEqual(FileManager.default.currentDirectoryPath, before)
        XCTAssertEqual(tree(destination), ["x", "x/y.txt"])
    }
}
