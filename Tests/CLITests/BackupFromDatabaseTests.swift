import Foundation
import RTDBTestServer
import TestSupport
import XCTest

/// `dumpkit backup --dump URL --rules URL` against the project's REST test server (through
/// `FIREBASE_DATABASE_EMULATOR_HOST`): the export as `dumpkit export` writes it and the rules byte for
/// byte go into the archive beside the bucket.
final class BackupFromDatabaseTests: XCTestCase {
    private var servers: [RTDBTestServer] = []

    override func tearDown() {
        for s in servers { try? s.stop() }
    }

    /// Rules as people write them: comments, odd spacing, no final line break.
    static let rules = Array(
        "{\n  // Only signed-in users read.\n  \"rules\": {\n    \".read\": \"auth != null\",   \".write\": false /* never */\n  }\n}".utf8)

    private func server(rules: [UInt8]? = BackupFromDatabaseTests.rules) throws -> RTDBTestServer {
        let s = try RTDBTestServer(configuration: .init(namespace: "demo-app", maxResponseBytes: 2048, rules: rules))
        servers.append(s)
        let records = (0..<120).map { #""-K\#($0)": {"title": "task \#($0)", "done": \#($0 % 2 == 0)}"# }.joined(separator: ", ")
        try s.database.load(json: Array(#"{"v1": {"todolist": {\#(records)}}, "users": {"ana": {"name": "Ana"}}}"#.utf8))
        return s
    }

    private func dumpkit(_ server: RTDBTestServer, _ arguments: [String]) throws -> CLI.Result {
        let r = try Shell.execute(
            URL(fileURLWithPath: "/usr/bin/env"), ["FIREBASE_DATABASE_EMULATOR_HOST=\(server.host)", CLI.binary.path] + arguments)
        return CLI.Result(
            status: r.status, stdout: String(decoding: r.stdout, as: UTF8.self), stderr: String(decoding: r.stderr, as: UTF8.self))
    }

    private func bsdtar(_ arguments: [String]) throws -> Data {
        try Shell.runData(try RequiredTool.path("bsdtar", package: "libarchive-tools"), arguments)
    }

    func testABackupExportsTheDatabaseAndKeepsItsRulesByteForByte() throws {
        let tmp = try TemporaryDirectory()
        let s = try server()
        try FileManager.default.createDirectory(atPath: tmp.path("bucket/v1"), withIntermediateDirectories: true)
        try writeFile(tmp.path("bucket/v1/a.png"), SampleBytes.random(count: 3000, seed: 1))
        let archive = tmp.path("set.tar.zst")
        let r = try dumpkit(
            s,
            [
                "backup", "--dump", "https://demo-app.firebaseio.com", "--rules", "https://demo-app.firebaseio.com/users",
                "--bucket", tmp.path("bucket"), "-o", archive, "--json",
            ])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(
            String(decoding: try bsdtar(["-tf", archive]), as: UTF8.self).split(separator: "\n"),
            [".dumpkit-manifest.json", "bucket/v1/a.png", "dump/demo-app.json", "rules/database.rules.json"])
        XCTAssertEqual(
            Array(try bsdtar(["-xOf", archive, "rules/database.rules.json"])), Self.rules, "the rules as the database keeps them")
        XCTAssertTrue(r.stdout.contains("exported from https://demo-app.firebaseio.com/"), r.stdout)
        // Split into pages (2 KB answers at most), assembled as `export` assembles them.
        XCTAssertGreaterThan(s.requests.filter { $0.method == "GET" }.count, 3)
        let exported = tmp.path("export.json")
        let e = try dumpkit(s, ["export", "https://demo-app.firebaseio.com", "-o", exported, "-q"])
        XCTAssertEqual(e.status, 0, e.stderr)
        XCTAssertEqual(Array(try bsdtar(["-xOf", archive, "dump/demo-app.json"])), try contents(exported))
        XCTAssertFalse(FileManager.default.fileExists(atPath: tmp.path(".set.tar.zst.dumpkit-backup.d")), "the work folder is removed")
        let v = try dumpkit(s, ["verify", archive])
        XCTAssertEqual(v.status, 0, v.stderr)

        // A path of the database, without rules; a dry run fetches nothing and leaves nothing.
        let requests = s.requests.count
        let dry = try dumpkit(s, ["backup", "--dump", "https://demo-app.firebaseio.com/users", "-o", tmp.path("u.tar.zst"), "--dry-run"])
        XCTAssertEqual(dry.status, 0, dry.stderr)
        XCTAssertEqual(dry.stdout, "0\tdump/demo-app_users.json\n")
        XCTAssertTrue(dry.stderr.contains("when the archive is written (its size is not known in a dry run)"), dry.stderr)
        XCTAssertEqual(s.requests.count, requests)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: tmp.path("")).filter { $0.hasPrefix(".") }, [])
        let users = try dumpkit(s, ["backup", "--dump", "https://demo-app.firebaseio.com/users", "-o", tmp.path("u.tar.zst"), "-q"])
        XCTAssertEqual(users.status, 0, users.stderr)
        XCTAssertEqual(
            String(decoding: try bsdtar(["-xOf", tmp.path("u.tar.zst"), "dump/demo-app_users.json"]), as: UTF8.self),
            #"{"ana":{"name":"Ana"}}"#)
    }

    /// A database that does not answer as asked: one line naming the request, exit code 2, no archive.
    func testAMissingDatabaseOrRulesIsOneLineAndNoArchive() throws {
        let tmp = try TemporaryDirectory()
        let s = try server(rules: nil)
        for (arguments, needle) in [
            (["--dump", "https://other-app.firebaseio.com"], "namespace other-app does not exist"),
            (["--dump", tmp.path("missing.json"), "--rules", "https://demo-app.firebaseio.com"], "/.settings/rules.json"),
        ] {
            let r = try dumpkit(s, ["backup"] + arguments + ["-o", tmp.path("x.tar.zst")])
            XCTAssertEqual(r.status, 2, r.stderr)
            XCTAssertEqual(r.stderr.split(separator: "\n").count, 1, r.stderr)
            XCTAssertTrue(r.stderr.contains(needle), r.stderr)
            XCTAssertFalse(FileManager.default.fileExists(atPath: tmp.path("x.tar.zst")))
        }
    }
}
