import DumpKit
import Foundation
import ObjectStores
import TestSupport
import XCTest

/// Runs through a TCP proxy between dumpkit and SeaweedFS that answers `503 SlowDown` on some
/// connections and drops others in the middle of a response: the retries must end with the same
/// objects and the same output as a run without faults.
final class FaultInjectionTests: XCTestCase {
    /// `fault_proxy.py LISTEN UPSTREAM PLAN LOG`: PLAN says what to do with each new connection in turn
    /// (`503`: read the request, answer 503 SlowDown and close; `drop`: relay, then close after 1,500
    /// bytes of responses; `pass`), connections past the plan pass. Each fault done is logged.
    static let proxy = #"""
        import asyncio, sys
        listen, upstream, plan, log = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3].split(","), sys.argv[4]
        count = 0
        def note(s):
            with open(log, "a") as f: f.write(s + "\n")
        async def pipe(r, w, limit=None):
            sent = 0
            try:
                while True:
                    data = await r.read(65536)
                    if not data: break
                    if limit is not None and sent + len(data) > limit:
                        w.write(data[:limit - sent]); await w.drain()
                        return True
                    w.write(data); await w.drain(); sent += len(data)
            except Exception:
                pass
            finally:
                try: w.close()
                except Exception: pass
            return False
        async def handle(reader, writer):
            global count
            mode = plan[count] if count < len(plan) else "pass"
            count += 1
            if mode == "503":
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"): length = int(line.split(b":")[1])
                if length: await reader.readexactly(length)
                body = b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>'
                writer.write(b"HTTP/1.1 503 Slow Down\r\nContent-Type: application/xml\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)
                await writer.drain(); writer.close()
                note("503")
                return
            ur, uw = await asyncio.open_connection("127.0.0.1", upstream)
            up = asyncio.create_task(pipe(reader, uw))
            dropped = await pipe(ur, writer, 1500 if mode == "drop" else None)
            if dropped:
                note("drop")
                uw.close()
            up.cancel()
        async def main():
            server = await asyncio.start_server(handle, "127.0.0.1", listen)
            async with server: await server.serve_forever()
        asyncio.run(main())
        """#

    /// Starts `fault_proxy.py` in front of `s3` with `plan`, logging the faults it makes to `log` in
    /// `directory`: the process and its endpoint.
    func startProxy(_ plan: String, log: String, s3: SeaweedServer, directory: URL) throws -> (ServerProcess, String) {
        let python = try RequiredTool.path("python3", package: "python3")
        let script = directory.appendingPathComponent("fault_proxy.py")
        if !FileManager.default.fileExists(atPath: script.path) { try Self.proxy.write(to: script, atomically: true, encoding: .utf8) }
        let port = try freePort()
        let p = try ServerProcess(
            python, [script.path, String(port), String(s3.s3Port), plan, directory.appendingPathComponent(log).path],
            logFile: directory.appendingPathComponent(log + ".out"))
        try p.waitUntilListening(port: port)
        return (p, "http://127.0.0.1:\(port)")
    }

    /// The faults the proxy logging to `log` in `directory` made, in order.
    func faults(_ log: String, in directory: URL) -> [String] {
        ((try? String(contentsOf: directory.appendingPathComponent(log), encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    func testRetriesThroughSlowDownsAndDroppedConnectionsGiveTheSameResult() throws {
        let s3 = try SeaweedServer()
        defer { s3.stop() }
        let directory = try temporaryDirectory(self)
        func proxy(_ plan: String, _ log: String) throws -> (ServerProcess, String) {
            try startProxy(plan, log: log, s3: s3, directory: directory)
        }
        func faults(_ log: String) -> [String] { self.faults(log, in: directory) }

        // A folder of 40 objects of 20 kB with metadata.
        let folder = directory.appendingPathComponent("blobs").path
        let source = try DirectoryBlobStore(directory: folder, writable: true)
        for i in 0..<40 {
            let bytes = SampleBytes.random(count: 20_000, seed: UInt64(i))
            _ = try bytes.withUnsafeBytes { try source.put($0, metadata: metadata("o/\(i).png", bytes, token: "t\(i)"), replacing: false) }
        }
        source.close()
        let bucket = try s3.makeBucket()

        // Upload: three SlowDowns, then a connection dropped after 1,500 bytes of responses.
        let (upProxy, upEndpoint) = try proxy("503,503,503,drop", "up.log")
        defer { upProxy.stop() }
        let up = try CLI.run(
            ["copy", folder, "s3://\(bucket)/c", "--endpoint", upEndpoint, "--jobs", "8", "--json"], environment: s3.clientEnvironment)
        XCTAssertEqual(up.status, 0, up.stderr)
        XCTAssertGreaterThanOrEqual(
            faults("up.log").filter { $0 == "503" }.count, 1, "a connection opened but given no request logs nothing")
        let s = try JSONSerialization.jsonObject(with: Data(up.stdout.utf8)) as! [String: Any]
        XCTAssertEqual(
            ((s["copied"] as? [String: Any])?["count"] as? Int ?? 0) + ((s["skipped"] as? [String: Any])?["count"] as? Int ?? 0), 40,
            up.stdout)

        // What the server holds, read without the proxy, is the folder.
        let direct = directory.appendingPathComponent("direct").path
        let check = try CLI.run(["copy", "s3://\(bucket)/c", direct, "-q"], environment: s3.clientEnvironment)
        XCTAssertEqual(check.status, 0, check.stderr)
        XCTAssertEqual(try tree(direct), try tree(folder))

        // Download through drops in the middle of response bodies.
        let (downProxy, downEndpoint) = try proxy("drop,drop,drop,503", "down.log")
        defer { downProxy.stop() }
        let back = directory.appendingPathComponent("back").path
        let down = try CLI.run(
            ["copy", "s3://\(bucket)/c", back, "--endpoint", downEndpoint, "--jobs", "8", "-q"], environment: s3.clientEnvironment)
        XCTAssertEqual(down.status, 0, down.stderr)
        XCTAssertGreaterThanOrEqual(faults("down.log").filter { $0 == "drop" }.count, 1, "a response was cut")
        XCTAssertEqual(try tree(back), try tree(folder))

        // With every connection failing, the bounded retries end in one clear line, exit 2.
        let (deadProxy, deadEndpoint) = try proxy(Array(repeating: "503", count: 200).joined(separator: ","), "dead.log")
        defer { deadProxy.stop() }
        let dead = try CLI.run(
            ["copy", folder, "s3://\(bucket)/d", "--endpoint", deadEndpoint, "--jobs", "2"], environment: s3.clientEnvironment)
        XCTAssertEqual(dead.status, 2, dead.stderr)
        XCTAssertEqual(dead.stderr.split(separator: "\n").count, 1, dead.stderr)
        XCTAssertTrue(
            dead.stderr.contains("SlowDown") && dead.stderr.contains(deadEndpoint) && dead.stderr.contains("s3://\(bucket)/d/"), dead.stderr
        )
    }

    func testADumpInputReadThroughDroppedConnectionsGivesTheSameOutput() throws {
        let s3 = try SeaweedServer()
        defer { s3.stop() }
        let directory = try temporaryDirectory(self)
        let bucket = try s3.makeBucket()
        // 10 MB of records: two ranged parts.
        let records = (0..<120_000).map { "\"k\($0)\":{\"t\":\"\(String(repeating: "x", count: 40 + $0 % 50))\",\"n\":\($0)}" }
        let dump = directory.appendingPathComponent("dump.json")
        try ("{" + records.joined(separator: ",") + "}").write(to: dump, atomically: true, encoding: .utf8)
        _ = try s3.aws(["s3", "cp", dump.path, "s3://\(bucket)/dump.json"])
        let reference = directory.appendingPathComponent("reference.json").path
        XCTAssertEqual(try CLI.run(["convert", dump.path, "-o", reference]).status, 0)

        // Responses cut after 1,500 bytes on the first connections, then a SlowDown.
        let (proxy, endpoint) = try startProxy("pass,drop,drop,drop,503", log: "input.log", s3: s3, directory: directory)
        defer { proxy.stop() }
        var environment = s3.clientEnvironment
        environment["AWS_ENDPOINT_URL"] = endpoint
        environment["AWS_ENDPOINT_URL_S3"] = endpoint
        let out = directory.appendingPathComponent("out.json").path
        let r = try CLI.run(["convert", "s3://\(bucket)/dump.json", "-o", out], environment: environment)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertGreaterThanOrEqual(faults("input.log", in: directory).filter { $0 == "drop" }.count, 1, "a response was cut")
        XCTAssertEqual(try contents(out), try contents(reference))
    }

    func testAnOutputSentThroughSlowDownsGivesTheSameObject() throws {
        let s3 = try SeaweedServer()
        defer { s3.stop() }
        let directory = try temporaryDirectory(self)
        let bucket = try s3.makeBucket()
        // About 20 MB of output: parts of 8 MiB sent while the dump is converted.
        let records = (0..<200_000).map { "\"k\($0)\":{\"t\":\"\(String(repeating: "x", count: 40 + $0 % 50))\",\"n\":\($0)}" }
        let dump = directory.appendingPathComponent("dump.json")
        try ("{" + records.joined(separator: ",") + "}").write(to: dump, atomically: true, encoding: .utf8)
        let reference = directory.appendingPathComponent("reference.json").path
        XCTAssertEqual(try CLI.run(["convert", dump.path, "-o", reference]).status, 0)

        // Part uploads and the multipart requests meet SlowDowns on several connections.
        let (proxy, endpoint) = try startProxy("pass,503,pass,503,503,pass,503", log: "output.log", s3: s3, directory: directory)
        defer { proxy.stop() }
        var environment = s3.clientEnvironment
        environment["AWS_ENDPOINT_URL"] = endpoint
        environment["AWS_ENDPOINT_URL_S3"] = endpoint
        let r = try CLI.run(["convert", dump.path, "-o", "s3://\(bucket)/out.json"], environment: environment)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertGreaterThanOrEqual(faults("output.log", in: directory).filter { $0 == "503" }.count, 1, "a request was refused")
        let down = directory.appendingPathComponent("down.json").path
        _ = try s3.aws(["s3", "cp", "s3://\(bucket)/out.json", down])
        XCTAssertEqual(try contents(down), try contents(reference))
        let uploads = try s3.aws(["s3api", "list-multipart-uploads", "--bucket", bucket])
        XCTAssertFalse(uploads.contains("UploadId"), uploads)
    }

    func testARestoreThroughFaultsGivesTheSameObjectsAndADeadStoreOneLine() throws {
        let s3 = try SeaweedServer()
        defer { s3.stop() }
        let directory = try temporaryDirectory(self)
        // An archive of 60 objects of 20 kB with metadata, put many at a time.
        let folder = directory.appendingPathComponent("blobs").path
        let source = try DirectoryBlobStore(directory: folder, writable: true)
        for i in 0..<60 {
            let bytes = SampleBytes.random(count: 20_000, seed: UInt64(100 + i))
            _ = try bytes.withUnsafeBytes { try source.put($0, metadata: metadata("r/\(i).png", bytes, token: "t\(i)"), replacing: false) }
        }
        source.close()
        let archive = directory.appendingPathComponent("blobs.tar.zst").path
        XCTAssertEqual(try CLI.run(["archive", folder, "-o", archive, "-q"]).status, 0)
        let bucket = try s3.makeBucket()

        let (proxy, endpoint) = try startProxy("503,drop,503,pass,drop,503", log: "restore.log", s3: s3, directory: directory)
        defer { proxy.stop() }
        let r = try CLI.run(
            ["restore", archive, "s3://\(bucket)/r", "--endpoint", endpoint, "--jobs", "16", "--verify", "--json"],
            environment: s3.clientEnvironment)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertGreaterThanOrEqual(faults("restore.log", in: directory).count, 2, "no fault was made")
        let summary = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any]
        // A PUT whose answer was cut is found there on its retry (counted as unchanged).
        XCTAssertEqual((summary["written"] as? Int ?? 0) + (summary["unchanged"] as? Int ?? 0), 60, r.stdout)
        XCTAssertEqual((summary["problems"] as? [Any])?.count, 0, r.stdout)
        let back = directory.appendingPathComponent("back").path
        let check = try CLI.run(["copy", "s3://\(bucket)/r", back, "-q"], environment: s3.clientEnvironment)
        XCTAssertEqual(check.status, 0, check.stderr)
        XCTAssertEqual(try tree(back), try tree(folder))

        // A store that never recovers: the puts in flight end, the rest are not tried, one line, exit 2.
        let (deadProxy, deadEndpoint) = try startProxy(
            Array(repeating: "503", count: 300).joined(separator: ","), log: "dead.log", s3: s3, directory: directory)
        defer { deadProxy.stop() }
        let dead = try CLI.run(
            ["restore", archive, "s3://\(bucket)/d", "--endpoint", deadEndpoint, "--jobs", "4"], environment: s3.clientEnvironment)
        XCTAssertEqual(dead.status, 2, dead.stderr)
        XCTAssertEqual(dead.stderr.split(separator: "\n").count, 1, dead.stderr)
        XCTAssertTrue(dead.stderr.contains("SlowDown") && dead.stderr.contains(deadEndpoint), dead.stderr)
        let left = try s3.aws(["s3api", "list-objects-v2", "--bucket", bucket, "--prefix", "d/"])
        XCTAssertFalse(left.contains("\"Key\""), left)
    }

    /// Every object of a directory store and its metadata as the store reports them (times left out).
    func tree(_ path: String) throws -> [String: String] {
        let store = try DirectoryBlobStore(directory: path, writable: false)
        defer { store.close() }
        var out: [String: String] = [:]
        try store.list { name in
            let bytes = try store.get(name)
            var m = try store.metadata(name)!
            m.updated = nil
            out[name] = "\(bytes.count) \(m)"
        }
        return out
    }
}
