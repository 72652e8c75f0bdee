import Foundation
import RTDBTestServer
import TestSupport
import XCTest

/// `dumpkit export` and `dumpkit import` against the project's REST test server, through
/// `FIREBASE_DATABASE_EMULATOR_HOST`: round trips, kill -9 and resume, refusals and exit codes.
final class LiveDatabaseCommandTests: XCTestCase {
    private var servers: [RTDBTestServer] = []

    override func tearDown() {
        for s in servers { try? s.stop() }
    }

    private func server(_ configuration: RTDBDatabase.Configuration = .init(namespace: "demo-app")) throws -> RTDBTestServer {
        let s = try RTDBTestServer(configuration: configuration)
        servers.append(s)
        return s
    }

    /// Runs dumpkit with the emulator host set to `server`.
    private func dumpkit(_ server: RTDBTestServer, _ arguments: [String]) throws -> CLI.Result {
        let r = try Shell.execute(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["FIREBASE_DATABASE_EMULATOR_HOST=\(server.host)", CLI.binary.path] + arguments)
        return CLI.Result(
            status: r.status, stdout: String(decoding: r.stdout, as: UTF8.self), stderr: String(decoding: r.stderr, as: UTF8.self))
    }

    /// Starts dumpkit, waits until the server has seen `requests` requests of `method` (the last of
    /// them stalled by the caller's fault), and kills it with SIGKILL.
    private func killDumpkit(_ server: RTDBTestServer, _ arguments: [String], after requests: Int, method: String) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["FIREBASE_DATABASE_EMULATOR_HOST=\(server.host)", CLI.binary.path] + arguments
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        let deadline = Date().addingTimeInterval(60)
        while server.requests.filter({ $0.method == method }).count < requests, p.isRunning, Date() < deadline {
            usleep(10_000)
        }
        XCTAssertTrue(p.isRunning, "dumpkit ended before the stalled request")
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        XCTAssertEqual(p.terminationReason, .uncaughtSignal)
    }

    private func realDump(_ name: String) throws -> URL {
        try TestData.directory("real-dumps").appendingPathComponent(name)
    }

    func testExportThenImportThenExportGivesTheSameBytes() throws {
        let tmp = try TemporaryDirectory()
        let source = try server(.init(namespace: "demo-app", maxResponseBytes: 4096, maxWriteBytes: 4096))
        try source.database.load(json: try contents(try realDump("budgetparty__firebase-export.sanitized.json").path), at: ["app"])
        let first = tmp.url.appendingPathComponent("first.json.zst").path
        var r = try dumpkit(source, ["export", "https://demo-app.firebaseio.com/app", "-o", first, "--json", "--jobs", "3"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("\"splits\":"), r.stdout)
        _ = try RequiredTool.path("zstd", package: "zstd")
        let plain = tmp.url.appendingPathComponent("first.json").path
        try Shell.runData("zstd", ["-dc", first]).write(to: URL(fileURLWithPath: plain))
        XCTAssertTrue(try contents(plain) == source.database.contents(at: ["app"]), "the export is not what one GET returns")

        let target = try server(.init(namespace: "demo-app", maxResponseBytes: 4096, maxWriteBytes: 4096))
        r = try dumpkit(target, ["import", first, "https://demo-app.firebaseio.com/restored", "--chunk-size", "8192", "--json"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("\"chunks\":"), r.stdout)
        XCTAssertTrue(
            target.database.contents(at: ["restored"]) == source.database.contents(at: ["app"]), "the import differs from the source")
        let second = tmp.url.appendingPathComponent("second.json").path
        r = try dumpkit(target, ["export", "https://demo-app.firebaseio.com/restored", "-o", second, "-q"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(try contents(second) == contents(plain), "export -> import -> export differs")
        // Nothing is left beside the outputs and the dump but themselves.
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: tmp.url.path).sorted(), ["first.json", "first.json.zst", "second.json"])
    }

    func testAnExportKilledMidwayResumesAndWritesTheSameBytes() throws {
        let tmp = try TemporaryDirectory()
        let limits = RTDBDatabase.Configuration(namespace: "demo-app", maxResponseBytes: 2048)
        let source = try server(limits)
        try source.database.load(json: try contents(try realDump("HooHacks19__firebase-export.json").path))
        let out = tmp.url.appendingPathComponent("out.json").path
        let arguments = ["export", "https://demo-app.firebaseio.com", "-o", out, "--jobs", "2", "--page-size", "20", "-q"]

        source.injectFaults([.stall(milliseconds: 60_000)], method: "GET", skipping: 40)
        try killDumpkit(source, arguments, after: 41, method: "GET")
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))
        let beforeResume = source.requests.count
        let r = try dumpkit(source, arguments)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(try contents(out) == source.database.contents(), "the resumed export differs from one GET")

        // A whole run for comparison: the resumed one fetched less.
        let again = tmp.url.appendingPathComponent("again.json").path
        let before = source.requests.count
        XCTAssertEqual(
            try dumpkit(source, ["export", "https://demo-app.firebaseio.com", "-o", again, "--jobs", "2", "--page-size", "20", "-q"])
                .status, 0)
        let whole = source.requests.count - before
        let resumed = before - beforeResume
        XCTAssertLessThan(resumed, whole - 30, "the resumed run fetched \(resumed) of \(whole) again")
        XCTAssertTrue(try contents(again) == contents(out), "a whole run differs from the resumed one")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: tmp.url.path).sorted(), ["again.json", "out.json"])
    }

    func testAnImportKilledMidwayResumesWithTheSameContent() throws {
        let tmp = try TemporaryDirectory()
        let dump = tmp.url.appendingPathComponent("dump.json").path
        try FileManager.default.copyItem(atPath: try realDump("HooHacks19__firebase-export.json").path, toPath: dump)
        let expected = RTDBDatabase(configuration: .init())
        try expected.load(json: try contents(dump), at: ["copy"])
        let target = try server()
        try target.database.load(json: Array(#"{"keep":{"me":1}}"#.utf8))
        let arguments = ["import", dump, "https://demo-app.firebaseio.com/copy", "--chunk-size", "4096", "--jobs", "2", "-q"]

        target.injectFaults([.stall(milliseconds: 60_000)], method: "PATCH", skipping: 30)
        try killDumpkit(target, arguments, after: 31, method: "PATCH")
        let journals = try FileManager.default.contentsOfDirectory(atPath: tmp.url.path).filter { $0.hasSuffix(".journal") }
        XCTAssertEqual(journals.count, 1, "the journal stays beside the dump")

        let before = target.requests.filter { $0.method == "PATCH" }.count
        let r = try dumpkit(target, arguments + ["--json"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let sent = target.requests.filter { $0.method == "PATCH" }.count - before
        XCTAssertTrue(r.stdout.contains("\"resumedChunks\":"), r.stdout)
        let plan = try CLI.run(["import", dump, "https://demo-app.firebaseio.com/copy", "--chunk-size", "4096", "--dry-run", "--json"])
        let total = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(plan.stdout.utf8)) as? [String: Any])?["chunks"] as? Int)
        XCTAssertLessThan(sent, total - 25, "the resumed run sent \(sent) of \(total) chunks")
        XCTAssertTrue(target.database.contents(at: ["copy"]) == expected.contents(at: ["copy"]), "the resumed import differs from the dump")
        XCTAssertEqual(target.database.contents(at: ["keep"]), Array(#"{"me":1}"#.utf8))
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: tmp.url.path), ["dump.json"], "the journal is removed at the end")
    }

    func testDryRunPrintsThePlanAndSendsNothing() throws {
        let s = try server()
        let r = try dumpkit(
            s,
            [
                "import", try realDump("flashcard-angular__firebase-export.json").path, "https://demo-app.firebaseio.com/x", "--dry-run",
                "--chunk-size", "1024",
            ])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("chunk 0: "), r.stdout)
        XCTAssertTrue(r.stdout.contains("nothing was sent"), r.stdout)
        XCTAssertEqual(s.requests.count, 0)
    }

    func testRefusalsAreOneLineWithTheirExitCodes() throws {
        let tmp = try TemporaryDirectory()
        let s = try server(.init(namespace: "demo-app", deniedWritePaths: [["locked"]]))
        try s.database.load(json: Array(#"{"a":1}"#.utf8))
        let out = tmp.url.appendingPathComponent("o.json").path

        // A wrong namespace: exit 2, the URL named.
        var r = try dumpkit(s, ["export", "https://other-app.firebaseio.com", "-o", out])
        XCTAssertEqual(r.status, 2, r.stderr)
        XCTAssertTrue(r.stderr.hasPrefix("dumpkit: error: GET http://\(s.host)/.json?ns=other-app"), r.stderr)
        XCTAssertTrue(r.stderr.contains("404"), r.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: tmp.url.path), [], "a run that fetched nothing leaves nothing")

        // A forbidden key: exit 1, nothing sent.
        let bad = tmp.url.appendingPathComponent("bad.json").path
        try Data(#"{"ok":1,"bad":{"a/b":2}}"#.utf8).write(to: URL(fileURLWithPath: bad))
        let sentBefore = s.requests.count
        r = try dumpkit(s, ["import", bad, "https://demo-app.firebaseio.com"])
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertTrue(r.stderr.contains("/bad/a~1b"), r.stderr)
        XCTAssertEqual(s.requests.count, sentBefore)

        // Rules refuse a chunk: exit 2 (credentials and rules), its paths and the message named.
        let locked = tmp.url.appendingPathComponent("locked.json").path
        try Data(#"{"a":2,"locked":{"x":1},"z":3}"#.utf8).write(to: URL(fileURLWithPath: locked))
        r = try dumpkit(s, ["import", locked, "https://demo-app.firebaseio.com", "--jobs", "1", "--chunk-size", "1024"])
        XCTAssertEqual(r.status, 2, r.stderr)
        XCTAssertTrue(r.stderr.contains("/locked/x"), r.stderr)
        XCTAssertTrue(r.stderr.contains("Permission denied"), r.stderr)
        // Its journal stays for the run that resumes after the rules are fixed.
        XCTAssertTrue(
            try FileManager.default.contentsOfDirectory(atPath: tmp.url.path).contains { $0.hasPrefix(".locked.json.dumpkit-import-") })

        // --journal puts the journal elsewhere (here a folder of its own, gone with the run's end).
        let cards = tmp.url.appendingPathComponent("cards.json").path
        try FileManager.default.copyItem(atPath: try realDump("flashcard-angular__firebase-export.json").path, toPath: cards)
        let journals = tmp.url.appendingPathComponent("journals")
        try FileManager.default.createDirectory(at: journals, withIntermediateDirectories: true)
        r = try dumpkit(
            s, ["import", cards, "https://demo-app.firebaseio.com/cards", "--journal", journals.appendingPathComponent("j").path])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(s.database.contents(at: ["cards"]).isEmpty, false)
        XCTAssertFalse(try FileManager.default.contentsOfDirectory(atPath: tmp.url.path).contains { $0.hasPrefix(".cards.json") })

        // An output folder that does not exist is not made.
        r = try dumpkit(s, ["export", "https://demo-app.firebaseio.com", "-o", tmp.url.appendingPathComponent("no/such/o.json").path])
        XCTAssertEqual(r.status, 2, r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: tmp.url.appendingPathComponent("no").path))

        // Usage errors: exit 2.
        r = try dumpkit(s, ["export", "https://example.com/x", "-o", out])
        XCTAssertEqual(r.status, 2, r.stderr)
        XCTAssertTrue(r.stderr.contains("not a Realtime Database URL"), r.stderr)
        r = try dumpkit(s, ["import", "-", "https://demo-app.firebaseio.com"])
        XCTAssertEqual(r.status, 2, r.stderr)
    }

    func testHelpSaysAnExportIsNotASnapshot() throws {
        let r = try CLI.run(["export", "--help"])
        XCTAssertEqual(r.status, 0)
        XCTAssertTrue(r.stdout.contains("NOT A SNAPSHOT"), r.stdout)
        XCTAssertTrue(r.stdout.contains("Examples:"), r.stdout)
        let i = try CLI.run(["import", "--help"])
        XCTAssertTrue(i.stdout.contains("MERGED"), i.stdout)
    }
}
