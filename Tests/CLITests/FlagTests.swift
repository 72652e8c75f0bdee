import Foundation
import TestSupport
import XCTest

/// One set of flags across the commands: `--json`, `--jobs` (and its hidden alias `--threads`),
/// `--include/--exclude`, `--dry-run`, `--level/--pretty/--canonical`, and warnings for options
/// that do nothing in a call.
final class FlagTests: XCTestCase {
    private var directory: TemporaryDirectory!
    private let root = TestData.projectRoot

    override func setUpWithError() throws {
        directory = try TemporaryDirectory()
    }

    override func tearDown() {
        directory = nil
    }

    private func sample(_ app: String, _ file: String) -> String { root.appendingPathComponent("samples/\(app)/\(file)").path }

    /// Standard output as one JSON object.
    private func object(_ r: CLI.Result, _ context: String) throws -> [String: Any] {
        let value = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8))
        return try XCTUnwrap(value as? [String: Any], "\(context): \(r.stdout)")
    }

    /// The todolist sample's images extracted into `bucket`, and the clean dump.
    private func extracted() throws -> (clean: String, bucket: String) {
        let clean = directory.path("clean.json"), bucket = directory.path("bucket")
        let r = try CLI.run(["extract-blobs", sample("todolist", "v1.json"), "-o", clean, "--blobs", bucket, "-q"])
        XCTAssertEqual(r.status, 0, r.stderr)
        return (clean, bucket)
    }

    func testEveryCommandPrintsOneJSONObjectWithJSON() throws {
        let (clean, bucket) = try extracted()
        let archive = directory.path("bucket.tar.zst")
        let v1 = sample("todolist", "v1.json")
        let plan = root.appendingPathComponent("schemas/todolist/plan.yaml").path
        // Each command with --json: the keys its object must have.
        let calls: [([String], Int32, [String])] = [
            (["convert", v1, "-o", directory.path("c.json.gz")], 0, ["records", "bytesIn", "bytesOut", "fileBytes"]),
            (["stats", v1], 0, ["patterns", "recordPatterns"]),
            (
                ["migrate", v1, "-o", directory.path("v2.json"), "--plan", plan, "--on-error", "keep"], 0,
                ["plans", "input", "output", "stats", "rejects"]
            ),
            (["migrate", v1, "--plan", plan, "--dry-run"], 1, ["plans", "stats", "dryRun"]),
            (["validate", v1], 0, ["errors", "warnings", "findings"]),
            (["extract-blobs", v1, "-o", directory.path("c2.json"), "--blobs", bucket], 0, ["extracted", "types", "objects"]),
            (["inline-blobs", clean, "-o", directory.path("r.json"), "--blobs", bucket], 0, ["inlined", "bytes", "foreign"]),
            (["check-blobs", clean, "--blobs", bucket], 0, ["errors", "warnings", "findings"]),
            (["archive", bucket, "-o", archive], 0, ["objects", "bytes", "format", "compression"]),
            (["backup", "--dump", v1, "--bucket", bucket, "-o", directory.path("backup.tar.zst")], 0, ["objects", "bytes"]),
            (["list", archive], 0, ["manifest", "entries"]),
            (["verify", archive], 0, ["entries", "bytes", "problems"]),
            (["restore", archive, directory.path("restored")], 0, ["written", "bytes", "problems"]),
        ]
        for (args, status, keys) in calls {
            let r = try CLI.run(args + ["--json"])
            XCTAssertEqual(r.status, status, "\(args): \(r.stderr)")
            let o = try object(r, "\(args)")
            for key in keys { XCTAssertNotNil(o[key], "\(args): no '\(key)' in \(r.stdout)") }
        }
        // --json is the same object as --report, and as --format json.
        let report = directory.path("report.json")
        let migrate = try CLI.run([
            "migrate", v1, "-o", directory.path("v2b.json"), "--plan", plan, "--on-error", "keep", "--report", report, "--json",
        ])
        var printed = try object(migrate, "migrate")
        var written = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any])
        printed["seconds"] = nil
        written["seconds"] = nil
        printed["output"] = nil
        written["output"] = nil
        XCTAssertEqual(NSDictionary(dictionary: printed), NSDictionary(dictionary: written))
        XCTAssertEqual(try CLI.run(["validate", v1, "--json"]).stdout, try CLI.run(["validate", v1, "--format", "json"]).stdout)
        let both = try CLI.run(["validate", v1, "--json", "--format", "junit"])
        XCTAssertEqual(both.status, 2)
        XCTAssertTrue(both.stderr.hasPrefix("dumpkit: error: --json and --format junit ask for two outputs"), both.stderr)
        // Not with an output on standard output.
        let clash = try CLI.run(["convert", v1, "--json"])
        XCTAssertEqual(clash.status, 2)
        XCTAssertTrue(clash.stderr.hasPrefix("dumpkit: error: --json and the output would both go to standard output"), clash.stderr)
    }

    func testJobsIsTheNameForThreadsAndThreadsIsAHiddenAlias() throws {
        let v1 = sample("todolist", "v1.json")
        for command in ["convert", "archive"] {
            let help = try CLI.run([command, "--help"]).stdout
            XCTAssertTrue(help.contains("--jobs <jobs>"), help)
            XCTAssertFalse(help.contains("--threads"), help)
        }
        let (_, bucket) = try extracted()
        for flag in ["--jobs", "--threads"] {
            XCTAssertEqual(try CLI.run(["convert", v1, "-o", directory.path("a\(flag).json.zst"), flag, "2", "-q"]).status, 0, flag)
            XCTAssertEqual(try CLI.run(["archive", bucket, "-o", directory.path("a\(flag).tar.zst"), flag, "2", "-q"]).status, 0, flag)
        }
        XCTAssertEqual(try contents(directory.path("a--jobs.tar.zst")), try contents(directory.path("a--threads.tar.zst")))
        let both = try CLI.run(["convert", v1, "-o", directory.path("b.json.zst"), "--jobs", "2", "--threads", "2"])
        XCTAssertEqual(both.status, 2)
        XCTAssertTrue(both.stderr.hasPrefix("dumpkit: error: --threads is the older name of --jobs"), both.stderr)
        let zero = try CLI.run(["archive", bucket, "-o", directory.path("z.tar.zst"), "--jobs", "0"])
        XCTAssertEqual(zero.status, 2)
        XCTAssertTrue(zero.stderr.hasPrefix("dumpkit: error: --jobs must be at least 1"), zero.stderr)
    }

    func testOptionsWithNoEffectGetAOneLineWarning() throws {
        let v1 = sample("todolist", "v1.json")
        var cases: [([String], String)] = [
            (["convert", v1, "-o", directory.path("a.json"), "--records", "/v1/todolist/{id}"], "--records has no effect"),
            (["convert", v1, "-o", directory.path("b.json"), "--jobs", "2"], "--jobs has no effect"),
            (["convert", v1, "-o", directory.path("c.json.gz"), "--threads", "2"], "--threads has no effect"),
            (["convert", v1, "-o", directory.path("d.json"), "--level", "3"], "--level has no effect"),
            (["validate", v1, "--auth", #"{"uid":"u1"}"#], "--auth has no effect without --rules"),
            (["validate", v1, "--ref-style", "salada"], "--ref-style has no effect without --blobs"),
            (
                [
                    "migrate", v1, "--plan", root.appendingPathComponent("schemas/todolist/plan.yaml").path, "--dry-run", "--on-error",
                    "keep", "--pretty",
                ],
                "--pretty has no effect with --dry-run"
            ),
            (
                [
                    "migrate", v1, "--plan", root.appendingPathComponent("schemas/todolist/plan.yaml").path, "--on-error", "keep", "-o",
                    directory.path("v2.json"),
                    "--blobs", directory.path("unused"),
                ], "--blobs has no effect: the plans have no extract-blobs steps"
            ),
            (
                ["extract-blobs", v1, "-o", directory.path("clean.json"), "--blobs", directory.path("b2"), "--bucket", "x.appspot.com"],
                "--bucket has no effect with --ref-style object"
            ),
        ]
        let records = directory.path("records.ndjson")
        XCTAssertEqual(try CLI.run(["convert", v1, "-o", records, "-q"]).status, 0)
        cases.append(
            (
                ["convert", records, "-o", directory.path("g.json"), "--duplicate-keys", "keep-last"],
                "--duplicate-keys has no effect on NDJSON input"
            ))
        for (args, warning) in cases {
            let r = try CLI.run(args)
            XCTAssertEqual(r.status, 0, "\(args): \(r.stderr)")
            let lines = r.stderr.split(separator: "\n").filter { $0.hasPrefix("dumpkit: warning: ") }
            XCTAssertEqual(lines.count, 1, "\(args): \(r.stderr)")
            XCTAssertTrue(lines.first?.hasPrefix("dumpkit: warning: \(warning)") == true, "\(args): \(r.stderr)")
        }
        // Where they do something, no warning.
        for args in [
            ["convert", v1, "-o", directory.path("e.ndjson"), "--records", "/v1/todolist/{id}"],
            ["convert", v1, "-o", directory.path("f.json.zst"), "--jobs", "2", "--level", "9"],
        ] {
            let r = try CLI.run(args)
            XCTAssertEqual(r.status, 0, "\(args): \(r.stderr)")
            XCTAssertFalse(r.stderr.contains("warning"), "\(args): \(r.stderr)")
        }
    }

    func testEveryCommandThatWritesADumpTakesLevelPrettyAndCanonical() throws {
        let v1 = sample("todolist", "v1.json")
        let plan = root.appendingPathComponent("schemas/todolist/plan.yaml").path
        let (clean, bucket) = try extracted()
        let calls: [(String, [String])] = [
            ("convert", ["convert", v1]),
            ("migrate", ["migrate", v1, "--plan", plan, "--on-error", "keep", "--rejects", directory.path("rejects.ndjson")]),
            ("extract-blobs", ["extract-blobs", v1, "--blobs", bucket]),
            ("inline-blobs", ["inline-blobs", clean, "--blobs", bucket]),
        ]
        for (name, args) in calls {
            let plain = directory.path("\(name).json"), styled = directory.path("\(name).json.gz")
            XCTAssertEqual(try CLI.run(args + ["-o", plain, "-q"]).status, 0, name)
            let r = try CLI.run(args + ["-o", styled, "--pretty", "--canonical", "--level", "9", "-q"])
            XCTAssertEqual(r.status, 0, "\(name): \(r.stderr)")
            // The same data, indented and in the database's key order, compressed at level 9.
            let expected = directory.path("\(name).expected.json")
            XCTAssertEqual(try CLI.run(["convert", plain, "-o", expected, "--pretty", "--canonical", "-q"]).status, 0)
            let written = try Shell.runData("gzip", ["-dc", styled])
            XCTAssertEqual(Array(written), try contents(expected), name)
            XCTAssertTrue(String(decoding: written, as: UTF8.self).contains("\n  "), name)
        }
    }

    func testArchiveRestoreAndInlineBlobsHaveADryRunThatWritesNothing() throws {
        let (clean, bucket) = try extracted()
        // archive: the objects and sizes, no archive.
        let archive = directory.path("bucket.tar.zst")
        var r = try CLI.run(["archive", bucket, "-o", archive, "--dry-run", "--exclude", "*.png"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stdout, "1092\tv1/todolist/-KcXs-75-lLuvAVF4ygL/image1.jpg\n")
        XCTAssertTrue(r.stderr.contains("dry run, nothing written: would archive 1 object, 1.1 kB (tar, zstd)"), r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: archive))
        r = try CLI.run(["archive", bucket, "-o", archive, "--dry-run", "--json"])
        let entries = try XCTUnwrap(try object(r, "archive")["entries"] as? [[String: Any]])
        XCTAssertEqual(
            entries.map { $0["path"] as? String },
            ["v1/todolist/-KcXs-75-lLuvAVF4ygL/image1.jpg", "v1/todolist/-Kk0YSe56qY-GxUnaVY9/image2.png"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: archive))

        // restore: what would be written and what refused; not even the destination is made.
        XCTAssertEqual(try CLI.run(["archive", bucket, "-o", archive, "-q"]).status, 0)
        let destination = directory.path("restored")
        r = try CLI.run(["restore", archive, destination, "--dry-run", "--exclude", "*.png"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stdout, "1092\tv1/todolist/-KcXs-75-lLuvAVF4ygL/image1.jpg\n")
        XCTAssertTrue(r.stderr.contains("dry run, nothing written: \(archive) to \(destination): would write 1 (1.1 kB)"), r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination))
        let evil = directory.path("evil.tar")
        _ = try Shell.run(
            "python3",
            [
                "-c",
                """
                import io, tarfile, sys
                with tarfile.open(sys.argv[1], "w") as t:
                    for name, data in (("../escape.txt", b"x"), ("ok.txt", b"fine")):
                        info = tarfile.TarInfo(name); info.size = len(data); t.addfile(info, io.BytesIO(data))
                """, evil,
            ])
        r = try CLI.run(["restore", evil, destination, "--dry-run", "--json"])
        XCTAssertEqual(r.status, 1, r.stderr)
        let planned = try object(r, "restore")
        XCTAssertEqual((planned["files"] as? [[String: Any]])?.map { $0["path"] as? String }, ["ok.txt"])
        XCTAssertEqual((planned["problems"] as? [[String: Any]])?.map { $0["path"] as? String }, ["../escape.txt"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination))
        // The real run refuses and writes the same.
        r = try CLI.run(["restore", evil, destination, "--json"])
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertEqual(filesBelow(destination), ["ok.txt"])
        // Over a restored copy: what is there is listed as existing, or kept under --overwrite never.
        let copy = directory.path("copy")
        XCTAssertEqual(try CLI.run(["restore", archive, copy, "-q"]).status, 0)
        r = try CLI.run(["restore", archive, copy, "--dry-run", "--json"])
        XCTAssertEqual((try object(r, "restore")["files"] as? [[String: Any]])?.map { $0["exists"] as? Bool }, [true, true])
        r = try CLI.run(["restore", archive, copy, "--dry-run", "--json", "--overwrite", "never"])
        XCTAssertEqual(try object(r, "restore")["kept"] as? Int, 2)
        // --include (and its old name --only) choose entries.
        for flag in ["--include", "--only"] {
            r = try CLI.run(["restore", archive, directory.path("only\(flag)"), flag, "*.png", "-q"])
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertEqual(
                filesBelow(directory.path("only\(flag)")).filter { !$0.hasPrefix(".dumpkit") },
                ["v1/todolist/-Kk0YSe56qY-GxUnaVY9/image2.png"])
        }
        XCTAssertFalse(try CLI.run(["restore", "--help"]).stdout.contains("--only"))

        // inline-blobs: every object read and checked, no output.
        let restored = directory.path("inlined.json")
        r = try CLI.run(["inline-blobs", clean, "-o", restored, "--blobs", bucket, "--dry-run"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stdout, "dry run, nothing written: would inline 2 references (2.2 kB)\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: restored))
        try FileManager.default.removeItem(atPath: bucket + "/v1/todolist/-KcXs-75-lLuvAVF4ygL/image1.jpg")
        r = try CLI.run(["inline-blobs", clean, "-o", restored, "--blobs", bucket, "--dry-run"])
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: restored))
    }
}
