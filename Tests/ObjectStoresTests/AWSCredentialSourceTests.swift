import DumpKit
import Foundation
import TestSupport
import XCTest

@testable import ObjectStores

/// Temporary credentials renewed before they expire: the rule on its own, and a `credential_process`
/// run again during a copy into SeaweedFS.
final class AWSCredentialSourceTests: XCTestCase {
    /// A source whose refresh gives credentials expiring `lifetime` after `clock`, counting its calls.
    private final class Refresher: @unchecked Sendable {
        var calls = 0
        var clock = Date(timeIntervalSince1970: 1_000_000)
        var lifetime: TimeInterval = 3600
        func credentials() -> AWSCredentials {
            AWSCredentials(accessKeyID: "K\(calls)", secretAccessKey: "S", expiration: clock.addingTimeInterval(lifetime))
        }
    }

    func testCredentialsAreRenewedBeforeTheyExpireAndNoMoreOften() async throws {
        let r = Refresher()
        let source = AWSCredentialSource(r.credentials(), fetched: r.clock) {
            r.calls += 1
            return r.credentials()
        }
        // An hour left: kept.
        var key = try await source.current(now: r.clock).accessKeyID
        XCTAssertEqual(key, "K0")
        r.clock += 3310  // under 5 minutes left: renewed, for another 4 minutes.
        r.lifetime = 240
        key = try await source.current(now: r.clock).accessKeyID
        XCTAssertEqual(key, "K1")
        XCTAssertEqual(r.calls, 1)
        r.clock += 20  // still within 5 minutes, but renewed 20 s ago: kept.
        key = try await source.current(now: r.clock).accessKeyID
        XCTAssertEqual(key, "K1")
        r.clock += 15  // 35 s since: renewed, by credentials that come with 20 s left.
        r.lifetime = 20
        key = try await source.current(now: r.clock).accessKeyID
        XCTAssertEqual(key, "K2")
        // In the last 30 s: renewed on every request, however recently.
        key = try await source.current(now: r.clock).accessKeyID
        XCTAssertEqual(key, "K3")
        XCTAssertEqual(r.calls, 3)

        // Credentials without an expiration, or without a way to renew them, are kept as they are.
        let fixed = AWSCredentialSource(AWSCredentials(accessKeyID: "F", secretAccessKey: "S"), refresh: nil)
        key = try await fixed.current(now: .distantFuture).accessKeyID
        XCTAssertEqual(key, "F")
        // A renewal that fails keeps credentials that still have 30 s or more (and is tried again 30 s
        // later), and is the request's error after that.
        let failures = Refresher()
        let failing = AWSCredentialSource(
            AWSCredentials(accessKeyID: "E", secretAccessKey: "S", expiration: r.clock + 200), fetched: r.clock - 100
        ) {
            failures.calls += 1
            throw ObjectStoreError(store: "s3://b/", endpoint: "AWS", message: "the profile \"p\": refused")
        }
        key = try await failing.current(now: r.clock).accessKeyID
        XCTAssertEqual(key, "E")
        key = try await failing.current(now: r.clock + 10).accessKeyID
        XCTAssertEqual(key, "E")
        XCTAssertEqual(failures.calls, 1)
        do {
            _ = try await failing.current(now: r.clock + 180)
            XCTFail("expired credentials were used")
        } catch {
            XCTAssertTrue("\(error)".contains("refused"), "\(error)")
        }
        XCTAssertEqual(failures.calls, 2)
    }

    func testACredentialProcessIsRunAgainDuringACopyWhenItsCredentialsExpire() throws {
        let s3 = try SeaweedServer()
        defer { s3.stop() }
        let directory = try temporaryDirectory(self)
        let home = directory.appendingPathComponent("home")
        try FileManager.default.createDirectory(at: home.appendingPathComponent(".aws"), withIntermediateDirectories: true)
        // Credentials that expire 20 s after they are given (so each request renews them), counted.
        let script = home.appendingPathComponent("creds.sh").path
        let count = home.appendingPathComponent("count").path
        try """
        #!/bin/sh
        echo run >> \(count)
        printf '{"Version": 1, "AccessKeyId": "%s", "SecretAccessKey": "%s", "Expiration": "%s"}' \
          \(SeaweedServer.accessKey) \(SeaweedServer.secretKey) "$(date -u -d '+20 seconds' +%Y-%m-%dT%H:%M:%SZ)"
        """.write(toFile: script, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script)
        try "[profile short]\ncredential_process = \(script)\n".write(
            to: home.appendingPathComponent(".aws/config"), atomically: true, encoding: .utf8)

        let folder = directory.appendingPathComponent("blobs").path
        let source = try DirectoryBlobStore(directory: folder, writable: true)
        for i in 0..<5 {
            let bytes = SampleBytes.random(count: 1_000, seed: UInt64(i))
            _ = try bytes.withUnsafeBytes { try source.put($0, metadata: metadata("o/\(i).png", bytes), replacing: false) }
        }
        source.close()
        let bucket = try s3.makeBucket()
        var environment = s3.clientEnvironment
        environment["AWS_ACCESS_KEY_ID"] = nil
        environment["AWS_SECRET_ACCESS_KEY"] = nil
        environment["AWS_PROFILE"] = "short"
        environment["HOME"] = home.path
        let r = try CLI.run(["copy", folder, "s3://\(bucket)/c", "--jobs", "1", "-q"], environment: environment)
        XCTAssertEqual(r.status, 0, r.stderr)
        let runs = try String(contentsOfFile: count, encoding: .utf8).split(separator: "\n").count
        XCTAssertGreaterThanOrEqual(runs, 6, "the process ran when the store was opened and again for the requests")
        XCTAssertTrue(try s3.aws(["s3", "ls", "s3://\(bucket)/c/o/"]).contains("4.png"))
    }
}
