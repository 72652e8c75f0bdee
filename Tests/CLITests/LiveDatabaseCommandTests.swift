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

    /// Starts dumpkit with the emulator host set to `server`, its output collected in pipes.
    private func start(_ server: RTDBTestServer, _ arguments: [String]) throws -> (Process, stdout: Pipe, stderr: Pipe) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["FIREBASE_DATABASE_EMULATOR_HOST=\(server.host)", CLI.binary.path] + arguments
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        return (p, out, err)
    }

    /// Waits until the server has seen `requests` requests of `method` or `p` has ended.
    private func wait(_ server: RTDBTestServer, for requests: Int, method: String, while p: Process) {
        let deadline = Date().addingTimeInterval(60)
        while server.requests.filter({ $0.method == method }).count < requests, p.isRunning, Date() < deadline {
            usleep(10_000)
        }
    }

    /// Starts dumpkit, waits until the server has seen `requests` requests of `method` (the last of
    /// them stalled by the caller's fault), lets it run `microseconds` more (the other requests in
    /// flight go on), and kills it with SIGKILL.
    private func killDumpkit(_ server: RTDBTestServer, _ arguments: [String], after requests: Int, method: String, microseconds: UInt64 = 0)
        throws
    {
        let (p, _, _) = try start(server, arguments)
        wait(server, for: requests, method: method, while: p)
        usleep(useconds_t(microseconds))
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

    /// Kill -9 at seeded random moments (a random request stalled, then a random few milliseconds
    /// more while the other requests in flight go on), then the same command again: the same bytes as
    /// an uninterrupted run, and fewer requests than it (the saved answers are used).
    func testAnExportKilledAtRandomMomentsResumesAndWritesTheSameBytes() throws {
        let tmp = try TemporaryDirectory()
        let source = try server(.init(namespace: "demo-app", maxResponseBytes: 2048))
        try source.database.load(json: try contents(try realDump("HooHacks19__firebase-export.json").path))
        let options = ["--jobs", "2", "--page-size", "20", "-q"]
        let whole = tmp.path("whole.json")
        var before = source.requests.count
        XCTAssertEqual(try dumpkit(source, ["export", "https://demo-app.firebaseio.com", "-o", whole] + options).status, 0)
        let wholeRequests = source.requests.count - before
        XCTAssertTrue(try contents(whole) == source.database.contents(), "the export is not what one GET returns")
        XCTAssertGreaterThan(wholeRequests, 40, "too few ranges to kill in between")
        // Resumed runs then also replay locations too large to list.
        XCTAssertTrue(source.requests.contains { $0.query["shallow"] == "true" && $0.status == 400 })

        var random = SplitMix64(seed: 23)
        for iteration in 0..<3 {
            let out = tmp.path("out\(iteration).json")
            let arguments = ["export", "https://demo-app.firebaseio.com", "-o", out] + options
            let stalled = 5 + Int(random.next() % UInt64(wholeRequests - 10))
            let gets = source.requests.filter { $0.method == "GET" }.count
            source.injectFaults([.stall(milliseconds: 60_000)], method: "GET", skipping: stalled)
            try killDumpkit(source, arguments, after: gets + stalled + 1, method: "GET", microseconds: random.next() % 50_000)
            XCTAssertFalse(FileManager.default.fileExists(atPath: out), "iteration \(iteration): an output after a kill")

            before = source.requests.count
            let r = try dumpkit(source, arguments + ["--json"])
            XCTAssertEqual(r.status, 0, r.stderr)
            let resumedRun = source.requests.count - before
            XCTAssertTrue(try contents(out) == contents(whole), "iteration \(iteration): the resumed export differs from a whole run")
            XCTAssertLessThan(resumedRun, wholeRequests, "iteration \(iteration) (killed after request \(stalled + 1))")
            let summary = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
            XCTAssertEqual(
                (summary["resumed"] as? Int).map { $0 + resumedRun }, wholeRequests, "saved ranges and new requests make a whole run")
        }
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: tmp.url.path).sorted(),
            ["out0.json", "out1.json", "out2.json", "whole.json"])
    }

    /// Kill -9 of an import at seeded random moments, then the same command again: the database ends
    /// as an uninterrupted import leaves it (chunks sent twice are the same PATCH), with fewer chunks
    /// sent than a whole run (the journal is used).
    func testAnImportKilledAtRandomMomentsResumesWithTheSameContent() throws {
        let tmp = try TemporaryDirectory()
        let dump = tmp.path("dump.json")
        try FileManager.default.copyItem(atPath: try realDump("HooHacks19__firebase-export.json").path, toPath: dump)
        let arguments = ["import", dump, "https://demo-app.firebaseio.com/copy", "--chunk-size", "4096", "--jobs", "2", "-q"]
        let reference = try server()
        try reference.database.load(json: Array(#"{"keep":{"me":1}}"#.utf8))
        XCTAssertEqual(try dumpkit(reference, arguments).status, 0)
        let wholePatches = reference.requests.filter { $0.method == "PATCH" }.count
        XCTAssertGreaterThan(wholePatches, 30, "too few chunks to kill in between")

        var random = SplitMix64(seed: 2323)
        for iteration in 0..<3 {
            let target = try server()
            try target.database.load(json: Array(#"{"keep":{"me":1}}"#.utf8))
            let stalled = 3 + Int(random.next() % UInt64(wholePatches - 6))
            target.injectFaults([.stall(milliseconds: 60_000)], method: "PATCH", skipping: stalled)
            try killDumpkit(target, arguments, after: stalled + 1, method: "PATCH", microseconds: random.next() % 50_000)
            let journals = try FileManager.default.contentsOfDirectory(atPath: tmp.url.path).filter { $0.hasSuffix(".journal") }
            XCTAssertEqual(journals.count, 1, "iteration \(iteration): the journal stays beside the dump")

            let before = target.requests.filter { $0.method == "PATCH" }.count
            let r = try dumpkit(target, arguments + ["--json"])
            XCTAssertEqual(r.status, 0, r.stderr)
            let sent = target.requests.filter { $0.method == "PATCH" }.count - before
            XCTAssertLessThan(sent, wholePatches, "iteration \(iteration) (killed after chunk \(stalled + 1))")
            let summary = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
            XCTAssertGreaterThan(summary["resumedChunks"] as? Int ?? 0, 0)
            XCTAssertTrue(target.database.contents() == reference.database.contents(), "iteration \(iteration): the content differs")
            XCTAssertEqual(
                try FileManager.default.contentsOfDirectory(atPath: tmp.url.path), ["dump.json"], "the journal is removed at the end")
        }
    }

    func testVerifyComparesTheDatabaseWithTheDump() throws {
        let tmp = try TemporaryDirectory()
        let s = try server(.init(namespace: "demo-app", maxResponseBytes: 4096, maxWriteBytes: 4096))
        let dump = tmp.path("budget.json")
        try FileManager.default.copyItem(atPath: try realDump("budgetparty__firebase-export.sanitized.json").path, toPath: dump)
        // A real dump, every answer and write split: verified, merged and replaced.
        for (flags, compared) in [([String](), "dump contained"), (["--replace"], "top-level children equal")] {
            let r = try dumpkit(
                s, ["import", dump, "https://demo-app.firebaseio.com/copy", "--chunk-size", "4096", "--verify", "--json"] + flags)
            XCTAssertEqual(r.status, 0, r.stderr)
            let summary = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
            let verification = try XCTUnwrap(summary["verification"] as? [String: Any], r.stdout)
            XCTAssertEqual(verification["differences"] as? Int, 0)
            XCTAssertEqual(verification["compared"] as? String, compared)
            XCTAssertGreaterThan(verification["requests"] as? Int ?? 0, 1)
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: tmp.url.path), ["budget.json"], "the export is removed")

        // Another writer changes a value while the verification reads (its listing is held back
        // meanwhile): exit 1, the pointer and both values named. An added key is no difference to a merge.
        let small = tmp.path("small.json")
        try Data(#"{"users":{"a":{"name":"Ann","age":31},"b":{"name":"Bob"}},"list":[1,2,3]}"#.utf8).write(to: URL(fileURLWithPath: small))
        let t = try server()
        t.injectFaults([.stall(milliseconds: 3000)], method: "GET", skipping: 1)
        let (p, out, err) = try start(t, ["import", small, "https://demo-app.firebaseio.com/copy", "--verify", "--json"])
        wait(t, for: 2, method: "GET", while: p)
        XCTAssertTrue(p.isRunning)
        try t.database.load(json: Array(#""Eve""#.utf8), at: ["copy", "users", "a", "name"])
        try t.database.load(json: Array("7".utf8), at: ["copy", "users", "c"])
        let stdout = out.fileHandleForReading.readDataToEndOfFile(),
            stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 1, stderr)
        XCTAssertTrue(stderr.contains("verification failed"), stderr)
        XCTAssertTrue(stderr.contains(#"/users/a/name: the dump has "Ann", the database "Eve""#), stderr)
        let summary = try XCTUnwrap(try JSONSerialization.jsonObject(with: stdout) as? [String: Any])
        let verification = try XCTUnwrap(summary["verification"] as? [String: Any])
        XCTAssertEqual(verification["differences"] as? Int, 1)
        XCTAssertEqual((verification["firstDifferences"] as? [[String: Any]])?.first?["pointer"] as? String, "/users/a/name")

        // NDJSON records and a dry run are not verified: usage errors.
        XCTAssertEqual(try dumpkit(t, ["import", tmp.path("x.ndjson"), "https://demo-app.firebaseio.com", "--verify"]).status, 2)
        XCTAssertEqual(try dumpkit(t, ["import", small, "https://demo-app.firebaseio.com", "--verify", "--dry-run"]).status, 2)
    }

    func testRestoreImportsTheBackupsDumpAndWritesRulesOnlyWhenAsked() throws {
        let tmp = try TemporaryDirectory()
        let limits = RTDBDatabase.Configuration(namespace: "demo-app", maxResponseBytes: 4096, maxWriteBytes: 4096)
        let source = try server(limits)
        try source.database.load(json: try contents(try realDump("budgetparty__firebase-export.sanitized.json").path), at: ["app"])
        let dump = tmp.path("backup.json.zst"), rules = tmp.path("rules.json"), archive = tmp.path("backup.tar.zst")
        XCTAssertEqual(try dumpkit(source, ["export", "https://demo-app.firebaseio.com/app", "-o", dump, "-q"]).status, 0)
        let rulesText = "// restored by dumpkit\n{\"rules\": {\".read\": \"auth != null\", \".write\": false}}\n"
        try Data(rulesText.utf8).write(to: URL(fileURLWithPath: rules))
        XCTAssertEqual(try CLI.run(["backup", "--dump", dump, "--rules", rules, "-o", archive, "-q"]).status, 0)

        let target = try server(limits)
        try target.database.load(json: Array(#"{"keep":{"me":1}}"#.utf8))
        let url = "https://demo-app.firebaseio.com/restored"
        // A dry run prints the chunk plan and writes nothing.
        var r = try dumpkit(target, ["restore", archive, "--database", url, "--chunk-size", "4096", "--dry-run"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("chunk 0: "), r.stdout)
        XCTAssertTrue(r.stdout.contains("nothing was sent"), r.stdout)
        XCTAssertEqual(target.requests.filter { $0.method != "GET" }.count, 0)

        // Merged as import merges; the rules are not touched without --rules.
        r = try dumpkit(target, ["restore", archive, "--database", url, "--chunk-size", "4096", "--json"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(target.database.contents(at: ["restored"]) == source.database.contents(at: ["app"]), "the restored data differs")
        XCTAssertEqual(target.database.contents(at: ["keep"]), Array(#"{"me":1}"#.utf8))
        XCTAssertEqual(target.database.rules, RTDBDatabase.Configuration().rules)
        XCTAssertFalse(target.requests.contains { $0.path.first == ".settings" })
        let summary = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        XCTAssertGreaterThan((summary["database"] as? [String: Any])?["chunks"] as? Int ?? 0, 1, r.stdout)

        // --rules --dry-run shows what changes and writes nothing; --rules writes them as archived.
        r = try dumpkit(target, ["restore", archive, "--database", url, "--rules", "--dry-run"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("+1: // restored by dumpkit"), r.stdout)
        XCTAssertTrue(r.stdout.contains(#"-3:     ".read": false,"#), r.stdout)
        XCTAssertEqual(target.requests.filter { $0.method == "PUT" }.count, 0)
        r = try dumpkit(target, ["restore", archive, "--database", url, "--rules", "--json"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("+1: // restored by dumpkit"), r.stderr)
        XCTAssertEqual(String(decoding: target.database.rules ?? [], as: UTF8.self), rulesText)
        XCTAssertEqual(target.requests.filter { $0.method == "PUT" }.map(\.path), [[".settings", "rules"]])
        let rulesSummary = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(((rulesSummary["database"] as? [String: Any])?["rules"] as? [String: Any])?["written"] as? Bool, true)
        r = try dumpkit(target, ["restore", archive, "--database", url, "--rules"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("the same: not written"), r.stdout)
        XCTAssertEqual(target.requests.filter { $0.method == "PUT" }.count, 1)
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: tmp.url.path).sorted(),
            ["backup.json.zst", "backup.tar.zst", "rules.json"],
            "the dump read out of the archive is removed")

        // A dump and a rules file of the same name stay apart.
        let same = tmp.url.appendingPathComponent("same")
        for folder in ["d", "r"] {
            try FileManager.default.createDirectory(at: same.appendingPathComponent(folder), withIntermediateDirectories: true)
        }
        try Data(#"{"n":1}"#.utf8).write(to: same.appendingPathComponent("d/x.json"))
        try Data(rulesText.utf8).write(to: same.appendingPathComponent("r/x.json"))
        let sameArchive = same.appendingPathComponent("same.tar").path
        let sameFiles = ["--dump", same.appendingPathComponent("d/x.json").path, "--rules", same.appendingPathComponent("r/x.json").path]
        XCTAssertEqual(try CLI.run(["backup"] + sameFiles + ["-o", sameArchive, "-q"]).status, 0)
        let other = try server()
        r = try dumpkit(other, ["restore", sameArchive, "--database", "https://demo-app.firebaseio.com/s", "--rules"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(other.database.contents(at: ["s"]), Array(#"{"n":1}"#.utf8))
        XCTAssertEqual(String(decoding: other.database.rules ?? [], as: UTF8.self), rulesText)

        // Usage: nothing to restore into, --rules without a database.
        XCTAssertEqual(try dumpkit(target, ["restore", archive]).status, 2)
        XCTAssertEqual(try dumpkit(target, ["restore", archive, tmp.path("out"), "--rules"]).status, 2)
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

    /// An answer is streamed to its file, not held: one page of about 100 MB (eleven 9 MB strings
    /// under one key, within the database's 256 MB read limit) exported in well under twice its
    /// size. Before, the answer was collected and then copied (over 200 MB at the peak).
    func testExportMemoryDoesNotGrowWithTheAnswer() throws {
        let tmp = try TemporaryDirectory()
        let s = try server()
        let text = String(repeating: "0123456789abcdef", count: 9_000_000 / 16)
        let strings = (0..<11).map { "\"s\($0)\":\"\(text)\"" }
        let data = Array("{\"big\":{\(strings.joined(separator: ","))},\"small\":1}".utf8)
        try s.database.load(json: data)
        let output = tmp.path("big.json")
        var environment = ProcessInfo.processInfo.environment
        environment["FIREBASE_DATABASE_EMULATOR_HOST"] = s.host
        let (r, peak) = try CLI.runMeasuringMemory(
            ["export", "https://demo-app.firebaseio.com", "-o", output, "-q"], environment: environment)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(try contents(output) == s.database.contents(at: []), "the export is not what one GET returns")
        XCTAssertLessThan(peak, data.count * 3 / 2, "\(peak >> 20) MiB for an answer of \(data.count >> 20) MiB")
    }

    /// `export -o s3://...` sends its output while it assembles it (several parts), the same bytes as a
    /// local export; its folder of saved answers goes to TMPDIR (beside a URL there is no folder: it
    /// failed with "cannot make the folder of fetched pages").
    func testExportToABucketStreamsTheSameBytes() throws {
        let tmp = try TemporaryDirectory()
        let s = try server()
        let text = String(repeating: "0123456789abcdef", count: 64)
        let records = (0..<24_000).map { "\"k\($0)\":{\"t\":\"\(text)\",\"n\":\($0)}" }
        try s.database.load(json: Array("{\"items\":{\(records.joined(separator: ","))}}".utf8))
        let s3 = try SeaweedServer()
        defer { s3.stop() }
        let bucket = try s3.makeBucket()
        let local = tmp.path("local.json")
        XCTAssertEqual(try dumpkit(s, ["export", "https://demo-app.firebaseio.com", "-o", local, "-q"]).status, 0)
        XCTAssertGreaterThan(try contents(local).count, 2 * (8 << 20), "three parts or more")
        let environment = s3.clientEnvironment.map { "\($0.key)=\($0.value)" }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments =
            ["FIREBASE_DATABASE_EMULATOR_HOST=\(s.host)"] + environment
            + [CLI.binary.path, "export", "https://demo-app.firebaseio.com", "-o", "s3://\(bucket)/export.json", "-q"]
        try p.run()
        let deadline = Date().addingTimeInterval(120)
        while p.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
        if p.isRunning {
            p.terminate()
            XCTFail("export into a bucket did not finish in 120 s")
        }
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0)
        let down = tmp.path("down.json")
        _ = try s3.aws(["s3", "cp", "s3://\(bucket)/export.json", down])
        XCTAssertTrue(try contents(down) == contents(local), "the bucket's export differs from the local one")
    }

    /// `restore --verify-database` compares the database with the backup's dump after the import, as
    /// `import --verify` does; a value changed meanwhile by another writer is a difference (exit 1).
    func testRestoreVerifyDatabaseComparesTheDatabaseWithTheBackupsDump() throws {
        let tmp = try TemporaryDirectory()
        let dump = tmp.path("small.json"), archive = tmp.path("backup.tar")
        try Data(#"{"users":{"a":{"name":"Ann","age":31},"b":{"name":"Bob"}},"list":[1,2,3]}"#.utf8).write(to: URL(fileURLWithPath: dump))
        XCTAssertEqual(try CLI.run(["backup", "--dump", dump, "-o", archive, "-q"]).status, 0)
        let url = "https://demo-app.firebaseio.com/restored"

        let s = try server(.init(namespace: "demo-app", maxResponseBytes: 64, maxWriteBytes: 64))
        var r = try dumpkit(s, ["restore", archive, "--database", url, "--chunk-size", "1024", "--verify-database", "--json"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let summary = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any], r.stdout)
        let verification = try XCTUnwrap((summary["database"] as? [String: Any])?["verification"] as? [String: Any], r.stdout)
        XCTAssertEqual(verification["differences"] as? Int, 0)
        XCTAssertEqual(verification["compared"] as? String, "dump contained")
        XCTAssertGreaterThan(verification["requests"] as? Int ?? 0, 1, "every answer split")
        r = try dumpkit(s, ["restore", archive, "--database", url, "--verify-database"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("verified \(url) against the dump of \(archive)"), r.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: tmp.url.path).sorted(), ["backup.tar", "small.json"])

        // Without it, no comparison.
        r = try dumpkit(try server(), ["restore", archive, "--database", url, "--json"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertFalse(r.stdout.contains("verification"), r.stdout)

        // Another writer changes a value while the comparison reads (its listing held back): exit 1
        // after the summary, with the pointer and both values.
        let t = try server()
        t.injectFaults([.stall(milliseconds: 3000)], method: "GET", skipping: 1)
        let (p, out, err) = try start(t, ["restore", archive, "--database", url, "--verify-database", "--json"])
        wait(t, for: 2, method: "GET", while: p)
        XCTAssertTrue(p.isRunning)
        try t.database.load(json: Array(#""Eve""#.utf8), at: ["restored", "users", "a", "name"])
        let stdout = out.fileHandleForReading.readDataToEndOfFile(),
            stderrText = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 1, stderrText)
        XCTAssertTrue(stderrText.contains("verification failed"), stderrText)
        XCTAssertTrue(stderrText.contains(#"/users/a/name: the dump has "Ann", the database "Eve""#), stderrText)
        let failed = try XCTUnwrap(try JSONSerialization.jsonObject(with: stdout) as? [String: Any])
        let differences = ((failed["database"] as? [String: Any])?["verification"] as? [String: Any])?["differences"] as? Int
        XCTAssertEqual(differences, 1)

        // Usage: without --database, with --dry-run.
        XCTAssertEqual(try dumpkit(t, ["restore", archive, tmp.path("out"), "--verify-database"]).status, 2)
        XCTAssertEqual(try dumpkit(t, ["restore", archive, "--database", url, "--verify-database", "--dry-run"]).status, 2)
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
