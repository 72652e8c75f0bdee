import Foundation
import TestSupport
import XCTest

/// `dumpkit archive`, `backup`, `list`, `verify` and `restore` as users run them, against bsdtar, GNU tar,
/// zip and unzip in both directions, and with broken inputs.
final class ArchiveCommandTests: XCTestCase {
    private var directory: TemporaryDirectory!
    private var bucket: String { directory.path("bucket") }

    override func setUpWithError() throws {
        directory = try TemporaryDirectory()
        _ = try Shell.run(
            "python3",
            [
                TestData.projectRoot.appendingPathComponent("Scripts/gen_dataset.py").path, "bucket", "--count", "24", "--size", "400KB",
                "--seed", "7", "-o", bucket,
            ])
    }

    override func tearDown() {
        directory = nil
    }

    /// Files whose names restore would refuse or rename are refused up front, listed by name, and
    /// nothing is written: every archive the tool makes, the tool can restore whole.
    func testNamesRestoreCouldNotPutBackAreRefusedBeforeArchiving() throws {
        for name in [#"..\..\x.png"#, "c:y.png"] {
            try Data([1, 2, 3]).write(to: URL(fileURLWithPath: bucket + "/" + name))
        }
        let archive = directory.path("bucket.tar.zst")
        let r = try CLI.run(["archive", bucket, "-o", archive])
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertTrue(r.stderr.contains("2 files have names restore could not put back, so nothing was archived"), r.stderr)
        XCTAssertTrue(r.stderr.contains(#"object name "..\\..\\x.png" has a '..' between backslashes"#), r.stderr)
        XCTAssertTrue(r.stderr.contains(#"object name "c:y.png" starts with a drive letter ('c:')"#), r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: archive))
        let excluded = try CLI.run(["archive", bucket, "-o", archive, "--exclude", "*.png", "-q"])
        XCTAssertEqual(excluded.status, 0, excluded.stderr)
    }

    /// Two restores into one destination at the same time both succeed: each writes its own
    /// temporary files, and neither removes the other's.
    func testTwoRestoresIntoOneDestinationAtOnceBothSucceed() throws {
        // Large incompressible files, so that both runs are writing the same file at the same time.
        let bucket = directory.path("large")
        _ = try Shell.run(
            "python3",
            [
                "-c",
                "import os, sys\nos.makedirs(sys.argv[1])\nfor i in range(6): open(f'{sys.argv[1]}/f{i}.bin', 'wb').write(os.urandom(6 << 20))",
                bucket,
            ])
        let archive = directory.path("large.tar.zst")
        XCTAssertEqual(try CLI.run(["archive", bucket, "-o", archive, "-q"]).status, 0)
        let destination = directory.path("restored")
        for round in 0..<4 {
            let runs = (0..<2).map { _ -> (Process, Pipe) in
                let p = Process()
                p.executableURL = CLI.binary
                p.arguments = ["restore", archive, destination, "--overwrite", "always", "-q"]
                let errors = Pipe()
                p.standardError = errors
                p.standardOutput = FileHandle.nullDevice
                return (p, errors)
            }
            for (p, _) in runs { try p.run() }
            for (p, errors) in runs {
                let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                p.waitUntilExit()
                XCTAssertEqual(p.terminationStatus, 0, "round \(round): \(message)")
            }
        }
        // Every file whole, and no temporary file left.
        XCTAssertEqual(try files(destination), try files(bucket))
    }

    /// Runs a shell command line (for environment variables and resource limits); returns status and standard error.
    private func sh(_ script: String) throws -> (status: Int32, stderr: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script, CLI.binary.path]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: message, as: UTF8.self))
    }

    /// Relative path -> bytes of every file below `root`, leaving out `.dumpkit-manifest.json`.
    private func files(_ root: String) throws -> [String: Data] {
        var result: [String: Data] = [:]
        let enumerator = FileManager.default.enumerator(atPath: root)
        while let path = enumerator?.nextObject() as? String {
            var isDirectory: ObjCBool = false
            guard path != ".dumpkit-manifest.json", FileManager.default.fileExists(atPath: root + "/" + path, isDirectory: &isDirectory),
                !isDirectory.boolValue
            else { continue }
            result[path] = try Data(contentsOf: URL(fileURLWithPath: root + "/" + path))
        }
        return result
    }

    private func run(_ arguments: [String], expect status: Int32 = 0, file: StaticString = #filePath, line: UInt = #line) throws
        -> CLI.Result
    {
        let result = try CLI.run(arguments)
        XCTAssertEqual(result.status, status, "dumpkit \(arguments.joined(separator: " ")): \(result.stderr)", file: file, line: line)
        return result
    }

    func testArchiveListVerifyRestoreAndRestoreAgain() throws {
        let archive = directory.path("b.tar.zst")
        let written = try run(["archive", bucket, "-o", archive])
        XCTAssertTrue(written.stderr.hasPrefix("wrote \(archive): 24 objects, "), written.stderr)
        let listing = try run(["list", archive])
        XCTAssertEqual(listing.stdout.split(separator: "\n").count, 24)
        XCTAssertTrue(
            listing.stdout.contains("  image/jpeg  v1/todolist/") || listing.stdout.contains("  image/png  v1/todolist/"), listing.stdout)
        let verified = try run(["verify", archive])
        XCTAssertTrue(verified.stdout.hasPrefix("\(archive): OK, 24 entries"), verified.stdout)
        // From a pipe: no seeking, the compression found from the first bytes all the same.
        let piped = try CLI.run(["verify", "-"], stdin: try Data(contentsOf: URL(fileURLWithPath: archive)))
        XCTAssertEqual(piped.status, 0, piped.stderr)
        XCTAssertTrue(piped.stdout.hasPrefix("-: OK, 24 entries"), piped.stdout)

        let destination = directory.path("restored")
        let restored = try run(["restore", archive, destination, "--verify"])
        XCTAssertTrue(restored.stderr.contains("24 written"), restored.stderr)
        XCTAssertEqual(try files(destination), try files(bucket))
        let again = try run(["restore", archive, destination])
        XCTAssertTrue(again.stderr.contains("0 written (0 B), 24 unchanged"), again.stderr)
    }

    func testOurArchivesListAndExtractWithBsdtarGNUTarAndUnzip() throws {
        for name in ["b.tar.zst", "b.tar.gz", "b.tar.xz", "b.tar", "b.zip"] {
            let archive = directory.path(name)
            _ = try run(["archive", bucket, "-o", archive, "-q"])
            let extractors: [(String, [String])] =
                name.hasSuffix(".zip")
                ? [("unzip", ["-q", archive, "-d"]), ("bsdtar", ["-xf", archive, "-C"])]
                : [("bsdtar", ["-xf", archive, "-C"]), ("tar", ["-xf", archive, "-C"])]
            for (tool, arguments) in extractors {
                let out = directory.path("\(name)-\(tool)")
                try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
                _ = try Shell.run(tool, arguments + [out])
                XCTAssertEqual(try files(out), try files(bucket), "\(tool) on \(name)")
            }
            let listed = name.hasSuffix(".zip") ? try Shell.run("unzip", ["-Z1", archive]) : try Shell.run("tar", ["-tf", archive])
            XCTAssertEqual(listed.split(separator: "\n").first, ".dumpkit-manifest.json", name)
        }
    }

    func testArchivesOfOtherToolsListVerifyAndRestore() throws {
        let made: [(String, String, [String])] = [
            ("bsdtar.tar.zst", "bsdtar", ["--zstd", "-cf", directory.path("bsdtar.tar.zst"), "-C", bucket, "."]),
            ("gnu.tar.gz", "tar", ["-czf", directory.path("gnu.tar.gz"), "-C", bucket, "."]),
            ("gnu.tar", "tar", ["--format=gnu", "-cf", directory.path("gnu.tar"), "-C", bucket, "v1"]),
        ]
        for (_, tool, arguments) in made { _ = try Shell.run(tool, arguments) }
        _ = try Shell.run("zip", ["-qr", directory.path("info.zip"), "."], in: URL(fileURLWithPath: bucket))
        for name in made.map(\.0) + ["info.zip"] {
            let archive = directory.path(name)
            let listing = try run(["list", archive])
            XCTAssertTrue(listing.stdout.contains("v1/todolist/"), "\(name): \(listing.stdout)")
            let verified = try run(["verify", archive])
            XCTAssertTrue(verified.stdout.contains("no manifest"), "\(name): \(verified.stdout)")
            let destination = directory.path("from-\(name)")
            _ = try run(["restore", archive, destination, "--verify"])
            XCTAssertEqual(try files(destination), try files(bucket), name)
        }
    }

    func testTheSameBucketGivesAByteIdenticalArchive() throws {
        let first = directory.path("1.tar.zst")
        let second = directory.path("2.tar.zst")
        XCTAssertEqual(try sh(#""$0" archive "\#(bucket)" -o "\#(first)" -q"#).status, 0)
        XCTAssertEqual(try sh(#""$0" archive "\#(bucket)" -o "\#(second)" -q --threads 1"#).status, 0)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: first)), try Data(contentsOf: URL(fileURLWithPath: second)))
        let pinned = directory.path("3.tar.zst")
        XCTAssertEqual(try sh(#"SOURCE_DATE_EPOCH=1700000000 "$0" archive "\#(bucket)" -o "\#(pinned)" -q"#).status, 0)
        let manifest = try Shell.run("tar", ["-xOf", pinned, ".dumpkit-manifest.json"])
        XCTAssertTrue(manifest.contains(#""created": "2023-11-14T22:13:20Z""#), manifest)
    }

    func testABackupSetRoundTrips() throws {
        let dump = directory.path("backup.json.gz")
        let rules = directory.path("database.rules.json")
        try Shell.runData("gzip", ["-c"], stdin: Data(#"{"v1":{"todolist":{}}}"#.utf8)).write(to: URL(fileURLWithPath: dump))
        try Data(#"{"rules":{".read":true}}"#.utf8).write(to: URL(fileURLWithPath: rules))
        let archive = directory.path("set.tar.zst")
        _ = try run(["backup", "--dump", dump, "--rules", rules, "--bucket", bucket, "-o", archive, "-q"])
        _ = try run(["verify", archive])
        let destination = directory.path("set")
        _ = try run(["restore", archive, destination, "-q"])
        XCTAssertEqual(try files(destination + "/bucket"), try files(bucket))
        XCTAssertEqual(
            try Data(contentsOf: URL(fileURLWithPath: destination + "/dump/backup.json.gz")),
            try Data(contentsOf: URL(fileURLWithPath: dump)))
        XCTAssertEqual(
            try Data(contentsOf: URL(fileURLWithPath: destination + "/rules/database.rules.json")),
            try Data(contentsOf: URL(fileURLWithPath: rules)))
    }

    func testATruncatedArchiveIsReportedByEntryAndLeavesGoodFilesAlone() throws {
        let archive = directory.path("b.tar")
        _ = try run(["archive", bucket, "-o", archive, "-q"])
        let bytes = try Data(contentsOf: URL(fileURLWithPath: archive))
        let cut = directory.path("cut.tar")
        try bytes.prefix(bytes.count * 2 / 3).write(to: URL(fileURLWithPath: cut))
        let verified = try run(["verify", cut], expect: 1)
        XCTAssertTrue(verified.stderr.contains("dumpkit: \(cut): v1/todolist/"), verified.stderr)
        XCTAssertTrue(verified.stderr.contains("Truncated tar archive"), verified.stderr)

        let destination = directory.path("restored")
        _ = try run(["restore", archive, destination, "-q"])
        let before = try files(destination)
        // Replace every file by an older version: the cut archive must not turn any into a partial one.
        let restored = try run(["restore", cut, destination, "--overwrite", "always"], expect: 2)
        XCTAssertTrue(restored.stderr.contains("Truncated tar archive"), restored.stderr)
        XCTAssertEqual(try files(destination), before)
        XCTAssertFalse(try files(destination).keys.contains { $0.contains("dumpkit-partial") })
    }

    func testACorruptZstdFrameIsAnError() throws {
        let archive = directory.path("b.tar.zst")
        _ = try run(["archive", bucket, "-o", archive, "-q", "--level", "19"])
        var bytes = try Data(contentsOf: URL(fileURLWithPath: archive))
        for i in stride(from: bytes.count / 2, to: bytes.count / 2 + 64, by: 1) { bytes[i] ^= 0x5A }
        let corrupt = directory.path("corrupt.tar.zst")
        try bytes.write(to: URL(fileURLWithPath: corrupt))
        let verified = try run(["verify", corrupt], expect: 1)
        XCTAssertTrue(verified.stderr.lowercased().contains("zstd") || verified.stderr.contains("does not match"), verified.stderr)
        // Flipped bytes in an incompressible (raw) zstd block decompress fine: only the manifest's SHA-256 can
        // tell, and restore checks it before moving a file into place.
        let restored = try CLI.run(["restore", corrupt, directory.path("r")])
        XCTAssertNotEqual(restored.status, 0)
        XCTAssertTrue(restored.stderr.contains("\(corrupt): v1/todolist/"), "the error names an entry: \(restored.stderr)")
        XCTAssertFalse(try files(directory.path("r")).keys.contains { $0.contains("dumpkit-partial") })
    }

    func testAManifestThatDisagreesFailsVerifyAndRestoreVerify() throws {
        let archive = directory.path("b.tar")
        _ = try run(["archive", bucket, "-o", archive, "-q"])
        // Change one object's bytes in place (same length): the manifest no longer agrees.
        var bytes = try Data(contentsOf: URL(fileURLWithPath: archive))
        let marker = Data(#""_createdAt""#.utf8)
        let range = try XCTUnwrap(bytes.range(of: marker))
        bytes[range.lowerBound + 2] = UInt8(ascii: "C")
        let altered = directory.path("altered.tar")
        try bytes.write(to: URL(fileURLWithPath: altered))
        let verified = try run(["verify", altered], expect: 1)
        XCTAssertTrue(verified.stderr.contains("SHA-256"), verified.stderr)
        XCTAssertTrue(
            verified.stderr.hasSuffix("1 problem found while verifying\n") || verified.stderr.contains("3 problems"), verified.stderr)
        let restored = try run(["restore", altered, directory.path("r"), "--verify"], expect: 1)
        XCTAssertTrue(restored.stderr.contains("not restored: SHA-256"), restored.stderr)
        XCTAssertTrue(restored.stderr.contains(" kept, 1 problem\n"), restored.stderr)
    }

    func testADestinationThatIsAFileIsAUsageProblem() throws {
        let archive = directory.path("b.tar.zst")
        _ = try run(["archive", bucket, "-o", archive, "-q"])
        let file = directory.path("file")
        try Data([1]).write(to: URL(fileURLWithPath: file))
        let result = try run(["restore", archive, file], expect: 2)
        XCTAssertEqual(result.stderr, "dumpkit: error: \(file): not a directory (the destination must be a directory)\n")
    }

    func testAFullDiskStopsWithTheEntryNameAndNothingHalfWritten() throws {
        let archive = directory.path("b.tar.zst")
        _ = try run(["archive", bucket, "-o", archive, "-q"])
        let destination = directory.path("restored")
        _ = try run(["restore", archive, destination, "-q"])
        let before = try files(destination)
        // A file-size limit makes every write past 8 KiB fail with EFBIG, as a full disk fails with ENOSPC.
        let result = try sh(#"trap '' XFSZ; ulimit -f 16; exec "$0" restore "\#(archive)" "\#(destination)" --overwrite always"#)
        XCTAssertEqual(result.status, 2, result.stderr)
        XCTAssertTrue(result.stderr.hasPrefix("dumpkit: error: \(destination)/v1/todolist/"), result.stderr)
        XCTAssertTrue(result.stderr.contains("cannot write: File too large"), result.stderr)
        XCTAssertEqual(try files(destination), before)

        let output = directory.path("new.tar.zst")
        let archived = try sh(#"trap '' XFSZ; ulimit -f 16; exec "$0" archive "\#(bucket)" -o "\#(output)""#)
        XCTAssertEqual(archived.status, 2, archived.stderr)
        XCTAssertTrue(archived.stderr.contains("File too large"), archived.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0.contains("new.tar.zst") }, [])
    }

    func testUsageErrors() throws {
        let result = try run(["archive", bucket, "-o", directory.path("x.zip"), "--compression", "zstd"], expect: 2)
        XCTAssertTrue(
            result.stderr.contains("zip archives compress entries with deflate (gzip) or not at all, not with zstd"), result.stderr)
        let missing = try run(["verify", directory.path("missing.tar.zst")], expect: 2)
        XCTAssertEqual(missing.stderr, "dumpkit: error: \(directory.path("missing.tar.zst")): cannot open: No such file or directory\n")
    }

    /// An output name that says no format needs --format; an --include that matches nothing fails.
    func testUnknownOutputNamesAndIncludesThatMatchNothing() throws {
        let sevenZip = directory.path("b.7z")
        let refused = try run(["archive", bucket, "-o", sevenZip], expect: 2)
        XCTAssertTrue(refused.stderr.hasPrefix("dumpkit: error: \(sevenZip): the name does not say what to write"), refused.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: sevenZip))
        _ = try run(["archive", bucket, "-o", sevenZip, "--format", "zip", "-q"])
        XCTAssertEqual(try Shell.run("unzip", ["-Z1", sevenZip]).split(separator: "\n").first, ".dumpkit-manifest.json")

        let none = directory.path("none.tar.zst")
        let nothing = try run(["archive", bucket, "-o", none, "--include", "v9/*"], expect: 1)
        XCTAssertEqual(nothing.stderr, "dumpkit: error: --include 'v9/*' matches no object in \(bucket)\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: none))
        let some = directory.path("some.tar.zst")
        let partial = try run(["archive", bucket, "-o", some, "--include", "*", "--include", "v9/*", "-q"], expect: 1)
        XCTAssertEqual(
            partial.stderr,
            "dumpkit: warning: --include 'v9/*' matches no object in \(bucket) (the archive holds the other patterns' 24 objects)\n")
        XCTAssertTrue(FileManager.default.fileExists(atPath: some))
    }

    /// An empty file or a text file is not an archive: one clear line and exit 2 from each command.
    func testFilesThatAreNotArchives() throws {
        let empty = directory.path("empty.tar.zst"), text = directory.path("notes.tar")
        XCTAssertTrue(FileManager.default.createFile(atPath: empty, contents: Data()))
        XCTAssertTrue(FileManager.default.createFile(atPath: text, contents: Data(String(repeating: "just some text\n", count: 100).utf8)))
        for (file, message) in [
            (empty, "the file is empty, not a tar or zip archive"), (text, "not a tar or zip archive (Unrecognized archive format)"),
        ] {
            for command in [["list", file], ["verify", file], ["restore", file, directory.path("out")]] {
                let result = try run(command, expect: 2)
                XCTAssertEqual(result.stderr, "dumpkit: error: \(file): \(message)\n", "\(command)")
            }
        }
    }
}
