import CloudHTTP
import DumpKit
import JSONStream
import LiveDatabase
import NIOCore
import RTDBTestServer
import TestSupport
import XCTest

/// Export and import against the project's REST test server: round trips of the real dumps (also
/// with limits so small that every answer and write must be split), faults, refusals.
final class ExportImportTests: XCTestCase {
    private var servers: [RTDBTestServer] = []
    private var clients: [DatabaseClient] = []

    override func tearDown() async throws {
        for c in clients { await c.shutdown() }
        for s in servers { try s.stop() }
    }

    private func server(_ configuration: RTDBDatabase.Configuration = .init(namespace: "test-db")) throws -> RTDBTestServer {
        let s = try RTDBTestServer(configuration: configuration)
        servers.append(s)
        return s
    }

    /// A client with quick retries; `timeout` is how long an answer may stall (short where a test stalls one).
    private func client(_ auth: DatabaseAuth = .none, timeout: TimeAmount = .seconds(30)) -> DatabaseClient {
        let c = DatabaseClient(
            auth: auth, retry: RetryPolicy(maxAttempts: 8, baseDelay: .milliseconds(5), maxDelay: .milliseconds(50)),
            requestTimeout: timeout)
        clients.append(c)
        return c
    }

    private func url(_ server: RTDBTestServer, _ path: String = "", namespace: String = "test-db") throws -> DatabaseURL {
        try DatabaseURL("https://\(namespace).firebaseio.com/\(path)", emulatorHost: server.host)
    }

    private func export(
        _ server: RTDBTestServer, _ path: String, to output: String, pageSize: Int = 1000, jobs: Int = 4,
        timeout: TimeAmount = .seconds(30)
    ) async throws -> ExportJob.Summary {
        var job = ExportJob(source: try url(server, path), output: output)
        job.pageSize = pageSize
        job.jobs = jobs
        return try await job.run(client: client(timeout: timeout))
    }

    private func importDump(
        _ input: String, into server: RTDBTestServer, _ path: String, chunkSize: Int = 1_000_000,
        mode: ImportChunker.Mode = .merge, jobs: Int = 4, auth: DatabaseAuth = .none,
        timeout: TimeAmount = .seconds(30)
    ) async throws -> ImportJob.Summary {
        var job = ImportJob(input: input, target: try url(server, path))
        job.chunkSize = chunkSize
        job.mode = mode
        job.jobs = jobs
        return try await job.run(client: client(auth, timeout: timeout))
    }

    func testRoundTripsOfRealDumps() async throws {
        let dir = try TestData.directory("real-dumps")
        let tmp = try TemporaryDirectory()
        for file in try TestData.files(in: dir, withExtension: "json") {
            let name = file.lastPathComponent
            let source = try server()
            try source.database.load(json: try contents(file.path), at: ["data"])
            let first = tmp.url.appendingPathComponent("\(name).1.json").path
            _ = try await export(source, "data", to: first, pageSize: 7)
            XCTAssertEqual(try contents(first), source.database.contents(at: ["data"]), "\(name): export differs from one GET")

            let target = try server()
            try target.database.load(json: Array(#"{"other":{"kept":true}}"#.utf8))
            let summary = try await importDump(first, into: target, "restored/copy")
            XCTAssertGreaterThan(summary.chunks, 0)
            XCTAssertTrue(summary.targetWasEmpty, "\(name): the location had no data")
            let second = tmp.url.appendingPathComponent("\(name).2.json").path
            _ = try await export(target, "restored/copy", to: second, pageSize: 3)
            XCTAssertEqual(try contents(second), try contents(first), "\(name): export -> import -> export differs")
            XCTAssertEqual(target.database.contents(at: ["other"]), Array(#"{"kept":true}"#.utf8))
            XCTAssertFalse(FileManager.default.fileExists(atPath: tmp.url.appendingPathComponent(".\(name).1.json.dumpkit-export.d").path))
        }
    }

    /// Array-like locations come out as arrays with `null` holes, in index order, however their
    /// pages were cut and split; integer keys that do not read as an array stay an object, in the
    /// database's order (integers numerically before other keys).
    func testArrayLikeLocationsPagedAndSplitComeOutInIndexOrder() async throws {
        var random = SplitMix64(seed: 7)
        var list: [String] = []
        for i in 0..<600 {
            let text = String(repeating: "x", count: Int(random.next() % 300))
            list.append(i % 7 == 3 ? "null" : (i % 5 == 0 ? #"{"t":"\#(text)","i":\#(i)}"# : "\(i)"))
        }
        let data = #"{"list":[\#(list.joined(separator: ","))],"sparse":{"0":1,"9":2,"-1":3,"a":4,"10":5}}"#
        let source = try server(.init(namespace: "test-db", maxResponseBytes: 1024, maxWriteBytes: 1024))
        try source.database.load(json: Array(data.utf8))
        let tmp = try TemporaryDirectory()
        for (pageSize, jobs) in [(1000, 1), (7, 4), (1, 8)] {
            let output = tmp.path("export-\(pageSize).json")
            let summary = try await export(source, "", to: output, pageSize: pageSize, jobs: jobs)
            XCTAssertEqual(try contents(output), source.database.contents(), "page size \(pageSize)")
            XCTAssertGreaterThan(summary.splits, 0)
        }
        XCTAssertEqual(source.database.contents(at: ["sparse"]), Array(#"{"-1":3,"0":1,"9":2,"10":5,"a":4}"#.utf8))
    }

    /// Locations whose listing is refused as too large are read page after page (`limitToFirst`,
    /// each page from the key after the last one), and a child too large for one answer among them is
    /// found by bisecting the key space: integer keys, ASCII, other scalars, keys that are prefixes
    /// of others; an array-like one still comes out as an array.
    func testLocationsTooLargeToListArePagedByKeyAndTheirLargeChildrenFound() async throws {
        let big = String(repeating: "b", count: 700)
        var members: [String] = []
        for (i, key) in ["-7", "3", "12", "2147483647", "007", "a", "ab", "ab ", "a~", "z!", "é", "日本", "🙂", "k\u{10FFFF}"].enumerated() {
            let value = i % 3 == 0 ? #"{"x":"\#(big)","y":{"z":"\#(big)"}}"# : "\(i)"
            members.append(#""\#(key)":\#(value)"#)
        }
        for i in 0..<150 { members.append(#""m\#(i)":\#(i)"#) }
        let array = (0..<200).map { $0 == 40 ? #"{"v":"\#(big)"}"# : "\($0)" }.joined(separator: ",")
        let data = #"{"many":{\#(members.joined(separator: ","))},"list":[\#(array)]}"#
        let source = try server(.init(namespace: "test-db", maxResponseBytes: 1000))
        try source.database.load(json: Array(data.utf8))
        let tmp = try TemporaryDirectory()
        for (pageSize, jobs) in [(1000, 8), (3, 2)] {
            let output = tmp.path("export-\(pageSize).json")
            _ = try await export(source, "", to: output, pageSize: pageSize, jobs: jobs)
            XCTAssertEqual(
                String(decoding: try contents(output), as: UTF8.self), String(decoding: source.database.contents(), as: UTF8.self),
                "page size \(pageSize)")
        }
        // Stopped midway (a 503 with no retries), then run again: the same bytes, the saved pages and
        // probes not asked again.
        let whole = source.requests.count
        _ = try await export(source, "", to: tmp.path("whole.json"))
        let wholeRun = source.requests.count - whole
        for stop in [wholeRun / 3, 2 * wholeRun / 3] {
            let out = tmp.path("stopped-\(stop).json")
            source.injectFaults([.serviceUnavailable], skipping: stop)
            var job = ExportJob(source: try url(source, ""), output: out)
            let once = DatabaseClient(
                auth: .none, retry: RetryPolicy(maxAttempts: 1, baseDelay: .milliseconds(1), maxDelay: .milliseconds(1)))
            clients.append(once)
            job.jobs = 1
            do {
                _ = try await job.run(client: once)
                XCTFail("the 503 must stop the run")
            } catch {}
            let before = source.requests.count
            let summary = try await export(source, "", to: out)
            XCTAssertEqual(try contents(out), try contents(tmp.path("whole.json")), "stopped after \(stop)")
            XCTAssertEqual(summary.resumed, stop, "stopped after \(stop)")
            XCTAssertEqual(source.requests.count - before, wholeRun - stop)
        }

        let refusedListings = source.requests.filter { $0.query["shallow"] == "true" && $0.status == 400 }.map(\.path)
        XCTAssertTrue(refusedListings.contains(["many"]) && refusedListings.contains(["list"]))
        XCTAssertTrue(source.requests.contains { $0.path == ["many"] && $0.query["endAt"] != nil && $0.status == 400 })
        XCTAssertTrue(String(decoding: try contents(tmp.path("export-3.json")), as: UTF8.self).hasPrefix(#"{"list":[0,1,"#))

        // A leaf no answer can hold (not possible under the real limits) ends the export, after a
        // bounded search, as data that changed would, and leaves no folder to resume from.
        let leaf = try server(.init(namespace: "test-db", maxResponseBytes: 1000))
        try leaf.database.load(
            json: Array(#"{"many":{\#((0..<150).map { #""m\#($0)":\#($0)"# }.joined(separator: ",")),"n":"\#(big)\#(big)"}}"#.utf8))
        do {
            _ = try await export(leaf, "", to: tmp.path("leaf.json"))
            XCTFail("a leaf over the limit cannot be exported")
        } catch let error as ExportChanged {
            XCTAssertTrue(error.detail.contains("no child at this key"), error.description)
        }
        XCTAssertLessThan(leaf.requests.count, 200)
        XCTAssertFalse(FileManager.default.fileExists(atPath: tmp.path("leaf.json")))
        XCTAssertFalse(FileManager.default.fileExists(atPath: tmp.path(".leaf.json.dumpkit-export.d")))
    }

    /// A location too large to list is cut into `--jobs` chains between its first and last key (read
    /// with `limitToFirst=1` and `limitToLast=1`), each read page after page from its own `startAt` to
    /// its `endAt`; the export is the same as from one chain.
    func testALocationTooLargeToListIsReadInChainsBetweenItsFirstAndLastKey() async throws {
        var random = SplitMix64(seed: 11)
        let alphabet = Array("-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz")
        var members: [String] = []
        for i in 0..<400 {
            // Push IDs: a time part that grows, then random characters.
            let time = String(format: "-N%05d", 3 * i)
            let tail = String((0..<12).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] })
            members.append(#""\#(time)\#(tail)":{"n":\#(i),"t":"\#(String(repeating: "x", count: Int(random.next() % 200)))"}"#)
        }
        let source = try server(.init(namespace: "test-db", maxResponseBytes: 4096))
        try source.database.load(json: Array(#"{"messages":{\#(members.joined(separator: ","))}}"#.utf8))
        let tmp = try TemporaryDirectory()
        for jobs in [1, 6] {
            let before = source.requests.count
            let output = tmp.path("export-\(jobs).json")
            _ = try await export(source, "messages", to: output, pageSize: 50, jobs: jobs)
            XCTAssertEqual(try contents(output), source.database.contents(at: ["messages"]), "jobs \(jobs)")
            let run = source.requests[before...]
            let chains = Set(run.filter { $0.query["limitToFirst"] != "1" && $0.query["orderBy"] != nil }.map { $0.query["endAt"] ?? "" })
            XCTAssertEqual(chains.count, jobs, "jobs \(jobs): one chain per job, each to its own endAt")
            XCTAssertEqual(run.contains { $0.query["limitToLast"] == "1" }, jobs > 1)
        }

        let bounds = ExportJob.chainBounds(first: "-N00000abc", last: "-N01197xyz", count: 8)
        XCTAssertEqual(bounds.count, 7)
        XCTAssertEqual(bounds, bounds.sorted())
        XCTAssertTrue(bounds.allSatisfy { $0 > "-N00000abc" && $0 < "-N01197xyz" && $0.hasPrefix("-N0") })
        XCTAssertEqual(ExportJob.chainBounds(first: "1", last: "zz", count: 8), [], "integer keys are not cut")
        XCTAssertEqual(ExportJob.chainBounds(first: "a", last: "a", count: 8), [])
        let wide = ExportJob.chainBounds(first: "é", last: "🙂", count: 4)
        XCTAssertTrue(wide.allSatisfy { "é".utf8.lexicographicallyPrecedes($0.utf8) && $0.utf8.lexicographicallyPrecedes("🙂".utf8) })
    }

    func testRoundTripsWithLimitsSoSmallThatEveryAnswerAndWriteIsSplit() async throws {
        let dir = try TestData.directory("real-dumps")
        let tmp = try TemporaryDirectory()
        let limits = RTDBDatabase.Configuration(namespace: "test-db", maxResponseBytes: 2048, maxWriteBytes: 2048)
        for file in try TestData.files(in: dir, withExtension: "json") {
            let name = file.lastPathComponent
            let source = try server(limits)
            try source.database.load(json: try contents(file.path))
            let whole = source.database.contents()
            let first = tmp.url.appendingPathComponent("\(name).1.json").path
            let exported = try await export(source, "", to: first, pageSize: 1000)
            XCTAssertEqual(try contents(first), whole, name)
            if whole.count > 2048 {
                XCTAssertGreaterThan(exported.splits, 0, "\(name): an answer over the limit must have been split")
            }
            for mode in [ImportChunker.Mode.merge, .replace] {
                // A value the dump does not name, so the target holds data and merge writes leaf by leaf.
                let target = try server(limits)
                try target.database.load(json: Array(#"{"r":{"zzz":1}}"#.utf8))
                let imported = try await importDump(first, into: target, "r", chunkSize: 8192, mode: mode)
                XCTAssertFalse(imported.targetWasEmpty)
                if whole.count > 4096 {
                    XCTAssertGreaterThan(imported.splits, 0, "\(name): a chunk over the write limit must have been split")
                }
                XCTAssertEqual(
                    target.database.contents(at: ["r", "zzz"]), Array("1".utf8), "\(name) \(mode) deleted what the dump does not name")
                try target.database.load(json: Array("null".utf8), at: ["r", "zzz"])
                let second = tmp.url.appendingPathComponent("\(name).\(mode).json").path
                _ = try await export(target, "r", to: second, pageSize: 1000)
                XCTAssertEqual(try contents(second), whole, "\(name) \(mode)")
                XCTAssertTrue(target.requests.allSatisfy { $0.method != "PATCH" || $0.bodyBytes <= 8192 })
            }
        }
    }

    func testMergeKeepsWhatTheDumpDoesNotNameAndReplaceReplacesOnlyItsTopLevelChildren() async throws {
        let tmp = try TemporaryDirectory()
        let dump = tmp.url.appendingPathComponent("dump.json").path
        try Data(#"{"users":{"u1":{"name":"A"}},"config":{"x":1}}"#.utf8).write(to: URL(fileURLWithPath: dump))
        let existing = #"{"users":{"u1":{"email":"a@x","name":"old"},"u2":{"name":"B"}},"config":{"y":2},"logs":{"l":1}}"#

        let merged = try server()
        try merged.database.load(json: Array(existing.utf8))
        _ = try await importDump(dump, into: merged, "")
        XCTAssertEqual(
            String(decoding: merged.database.contents(), as: UTF8.self),
            #"{"config":{"x":1,"y":2},"logs":{"l":1},"users":{"u1":{"email":"a@x","name":"A"},"u2":{"name":"B"}}}"#)

        let replaced = try server()
        try replaced.database.load(json: Array(existing.utf8))
        _ = try await importDump(dump, into: replaced, "", chunkSize: 40, mode: .replace)
        XCTAssertEqual(
            String(decoding: replaced.database.contents(), as: UTF8.self),
            #"{"config":{"x":1},"logs":{"l":1},"users":{"u1":{"name":"A"}}}"#)
    }

    func testFaultsAreRetriedAndTheResultIsTheSame() async throws {
        let dir = try TestData.directory("real-dumps")
        let file = dir.appendingPathComponent("budgetparty__firebase-export.sanitized.json")
        let tmp = try TemporaryDirectory()
        let limits = RTDBDatabase.Configuration(namespace: "test-db", maxResponseBytes: 4096, maxWriteBytes: 4096)
        let source = try server(limits)
        try source.database.load(json: try contents(file.path))
        source.injectFaults(
            [.serviceUnavailable, .dropConnection, .stall(milliseconds: 2_500), .serviceUnavailable, .dropConnection], method: "GET")
        let first = tmp.url.appendingPathComponent("e.json").path
        _ = try await export(source, "", to: first, timeout: .seconds(1))
        XCTAssertEqual(try contents(first), source.database.contents())
        XCTAssertGreaterThanOrEqual(source.requests.filter { $0.status == 503 }.count, 2)
        XCTAssertGreaterThanOrEqual(source.requests.filter { $0.status == nil }.count, 2)

        let target = try server(limits)
        target.injectFaults(
            [.serviceUnavailable, .dropConnection, .dropConnectionAfterApplying, .stall(milliseconds: 2_500), .serviceUnavailable],
            method: "PATCH")
        _ = try await importDump(first, into: target, "", chunkSize: 3000, timeout: .seconds(1))
        XCTAssertEqual(target.database.contents(), source.database.contents())
        XCTAssertGreaterThanOrEqual(target.requests.filter { $0.status == nil || $0.status == 503 }.count, 4)
    }

    func testWrongNamespaceAndWrongCredentialsAreClearErrors() async throws {
        let s = try server(.init(namespace: "test-db", requiredCredential: "right"))
        try s.database.load(json: Array(#"{"a":1}"#.utf8))
        let tmp = try TemporaryDirectory()
        let out = tmp.url.appendingPathComponent("o.json").path
        do {
            var job = ExportJob(source: try url(s, "", namespace: "other-db"), output: out)
            job.jobs = 1
            _ = try await job.run(client: client(.authParameter("right")))
            XCTFail("a wrong namespace must fail")
        } catch let error as DatabaseRequestError {
            XCTAssertEqual(error.kind, .notFound)
            XCTAssertTrue("\(error)".contains("ns=other-db"), "\(error)")
        }
        do {
            // Emulator URLs carry no credentials; against a server that wants them that is a 401.
            _ = try await export(s, "", to: out)
            XCTFail("missing credentials must fail")
        } catch let error as DatabaseRequestError {
            XCTAssertEqual(error.kind, .unauthorized)
            XCTAssertEqual(error.status, 401)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))
    }

    func testAForbiddenKeyStopsTheImportBeforeAnythingIsSent() async throws {
        let tmp = try TemporaryDirectory()
        let dump = tmp.url.appendingPathComponent("bad.json").path
        try Data(#"{"ok":{"a":1},"bad":{"x.y":2}}"#.utf8).write(to: URL(fileURLWithPath: dump))
        let s = try server()
        do {
            _ = try await importDump(dump, into: s, "")
            XCTFail("a forbidden key must fail")
        } catch let error as ImportJob.LimitsBroken {
            XCTAssertTrue("\(error)".contains("/bad/x.y"), "\(error)")
        }
        XCTAssertEqual(s.requests.count, 0)
    }

    func testARefusedChunkStopsTheImportAndNothingAfterItIsSent() async throws {
        let tmp = try TemporaryDirectory()
        let dump = tmp.url.appendingPathComponent("d.json").path
        // One value per chunk: each member is about 40 bytes and chunks are at least 64.
        let members = (0..<30).map { #""k\#(String(format: "%02d", $0))":{"v":"\#(String(repeating: "x", count: 30))"}"# }.joined(
            separator: ",")
        try Data("{\(members)}".utf8).write(to: URL(fileURLWithPath: dump))
        let s = try server(.init(namespace: "test-db", deniedWritePaths: [["k10"]]))
        do {
            _ = try await importDump(dump, into: s, "", chunkSize: 40, jobs: 1)
            XCTFail("a refused chunk must stop the import")
        } catch let error as ImportJob.ChunkRefused {
            XCTAssertEqual(error.underlying.status, 401)
            XCTAssertTrue("\(error)".contains("at /k10:"), "\(error)")
            XCTAssertTrue("\(error)".contains("Permission denied"), "\(error)")
        }
        let patches = s.requests.filter { $0.method == "PATCH" }
        XCTAssertEqual(patches.last?.status, 401, "nothing may be sent after the refused chunk")
        XCTAssertEqual(String(decoding: s.database.contents(at: ["k09"]), as: UTF8.self), #"{"v":"\#(String(repeating: "x", count: 30))"}"#)
        XCTAssertEqual(String(decoding: s.database.contents(at: ["k11"]), as: UTF8.self), "null")
    }

    func testExportFormatKeepsPrioritiesAndShallowKeepsOnlyTheKeys() async throws {
        let tmp = try TemporaryDirectory()
        let s = try server(.init(namespace: "test-db", maxResponseBytes: 120))
        try s.database.load(
            json: Array(
                #"{"a":{".priority":1,"x":{".value":"v",".priority":"p"},"y":[1,2]},"b":{"c":{"d":"\#(String(repeating: "0123456789", count: 10))","e":{".value":2,".priority":3}}}}"#
                    .utf8))
        let out = tmp.url.appendingPathComponent("export.json").path
        var job = ExportJob(source: try url(s, ""), output: out)
        job.exportFormat = true
        job.pageSize = 1
        let summary = try await job.run(client: client())
        XCTAssertGreaterThan(summary.splits, 0)
        XCTAssertEqual(
            String(decoding: try contents(out), as: UTF8.self),
            String(decoding: s.database.contents(export: true), as: UTF8.self))
        XCTAssertTrue(String(decoding: try contents(out), as: UTF8.self).contains(#""a":{".priority":1,"#))

        let keys = tmp.url.appendingPathComponent("keys.json").path
        var shallow = ExportJob(source: try url(s, ""), output: keys)
        shallow.shallow = true
        _ = try await shallow.run(client: client())
        XCTAssertEqual(String(decoding: try contents(keys), as: UTF8.self), #"{"a":true,"b":true}"#)
    }

    func testNDJSONRecordsImportAsTheDumpTheyCameFrom() async throws {
        let dir = try TestData.directory("real-dumps")
        let tmp = try TemporaryDirectory()
        for name in ["budgetparty__firebase-export.sanitized.json", "HooHacks19__firebase-export.json"] {
            let records = tmp.url.appendingPathComponent("\(name).ndjson").path
            var convert = ConvertJob(input: dir.appendingPathComponent(name).path, output: records)
            convert.records = [try PathPattern("/*/*")]
            _ = try convert.run(progress: nil)
            let expected = RTDBDatabase(configuration: .init())
            try expected.load(json: try contents(dir.appendingPathComponent(name).path))
            for mode in [ImportChunker.Mode.merge, .replace] {
                let target = try server(.init(namespace: "test-db", maxWriteBytes: 4096))
                let summary = try await importDump(records, into: target, "", chunkSize: 3000, mode: mode)
                XCTAssertGreaterThan(summary.chunks, 1)
                XCTAssertTrue(target.database.contents() == expected.contents(), "\(name) \(mode)")
            }
        }
    }

    func testNDJSONRecordsWithForbiddenKeysInTheirPathsSendNothing() async throws {
        let tmp = try TemporaryDirectory()
        let records = tmp.url.appendingPathComponent("r.ndjson").path
        try Data(#"{"path":"/ok/a","value":1}\#n{"path":"/bad.key/b","value":{"c":2}}\#n"#.utf8).write(to: URL(fileURLWithPath: records))
        let s = try server()
        do {
            _ = try await importDump(records, into: s, "")
            XCTFail("a forbidden key in a record's path must fail")
        } catch let error as ImportJob.LimitsBroken {
            XCTAssertTrue("\(error)".contains("r.ndjson:2 at /bad.key"), "\(error)")
        }
        XCTAssertEqual(s.requests.count, 0)
    }

    func testTheDepthLimitCountsTheTargetsOwnKeys() async throws {
        let tmp = try TemporaryDirectory()
        let dump = tmp.url.appendingPathComponent("deep.json").path
        // 30 levels: fine at the root, too deep three keys down.
        let deep = String(repeating: #"{"k":"#, count: 30) + "1" + String(repeating: "}", count: 30)
        try Data(deep.utf8).write(to: URL(fileURLWithPath: dump))
        let s = try server()
        _ = try await importDump(dump, into: s, "")
        do {
            _ = try await importDump(dump, into: s, "a/b/c")
            XCTFail("32 levels below the root must be refused before sending")
        } catch let error as ImportJob.LimitsBroken {
            XCTAssertTrue("\(error)".contains("under the target"), "\(error)")
        }
        XCTAssertEqual(s.requests.filter { $0.path.starts(with: ["a"]) }.count, 0)
    }

    func testAnExportWithPrioritiesImportsBackWithThem() async throws {
        let tmp = try TemporaryDirectory()
        let source = try server()
        try source.database.load(
            json: Array(
                #"{"a":{".priority":1,"x":{".value":"v",".priority":"p"},"y":[1,2]},"b":{"c":{"d":"text","e":{".value":2,".priority":3}}}}"#
                    .utf8))
        let out = tmp.url.appendingPathComponent("export.json").path
        var job = ExportJob(source: try url(source, ""), output: out)
        job.exportFormat = true
        _ = try await job.run(client: client())
        for mode in [ImportChunker.Mode.merge, .replace] {
            let target = try server()
            _ = try await importDump(out, into: target, "", chunkSize: 64, mode: mode)
            XCTAssertEqual(
                String(decoding: target.database.contents(export: true), as: UTF8.self),
                String(decoding: source.database.contents(export: true), as: UTF8.self), "\(mode)")
        }
    }
}
