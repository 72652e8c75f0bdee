import Foundation
import ObjectStores
import XCTest

/// Signature V4 against the worked examples of the S3 documentation ("Signature Calculations for the
/// Authorization Header: Transferring Payload in a Single Chunk"), and the parsing of store URLs and
/// AWS configuration.
final class SignatureV4Tests: XCTestCase {
    let signer = SignatureV4(
        credentials: AWSCredentials(accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
        region: "us-east-1")
    let date = Date(timeIntervalSince1970: 1_369_353_600)  // 2013-05-24T00:00:00Z

    func authorization(_ headers: [(String, String)]) -> String? { headers.first { $0.0 == "Authorization" }?.1 }

    func testGetObjectExample() {
        let signed = signer.sign(
            method: "GET", path: "/test.txt", query: [], headers: [("Host", "examplebucket.s3.amazonaws.com"), ("Range", "bytes=0-9")],
            payloadHash: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", date: date)
        XCTAssertEqual(
            authorization(signed),
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
                + "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"
        )
    }

    func testListObjectsExampleWithAQuery() {
        let signed = signer.sign(
            method: "GET", path: "/", query: [("max-keys", "2"), ("prefix", "J")], headers: [("Host", "examplebucket.s3.amazonaws.com")],
            payloadHash: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", date: date)
        XCTAssertEqual(
            authorization(signed),
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
                + "SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7"
        )
    }

    func testURIEncoding() {
        XCTAssertEqual(SignatureV4.uriEncode("/a b/ü+*~.txt", slash: false), "/a%20b/%C3%BC%2B%2A~.txt")
        XCTAssertEqual(SignatureV4.uriEncode("a/b=", slash: true), "a%2Fb%3D")
    }

    func testStoreURLs() throws {
        let s3 = try XCTUnwrap(try ObjectStoreURL("s3://backups/my-app"))
        XCTAssertEqual(s3.scheme, .s3)
        XCTAssertEqual(s3.bucket, "backups")
        XCTAssertEqual(s3.prefix, "my-app/")
        XCTAssertEqual(s3.key("a.png"), "my-app/a.png")
        XCTAssertEqual(s3.name(ofKey: "my-app/x/y"), "x/y")
        XCTAssertNil(s3.name(ofKey: "other/x"))
        let gs = try XCTUnwrap(try ObjectStoreURL("gs://my-app.appspot.com"))
        XCTAssertEqual(gs.prefix, "")
        XCTAssertEqual(gs.description, "gs://my-app.appspot.com/")
        XCTAssertNil(try ObjectStoreURL("blobs/"))
        XCTAssertThrowsError(try ObjectStoreURL("s3://Ab/x")) { XCTAssertTrue("\($0)".contains("s3://Ab/x"), "\($0)") }
        XCTAssertThrowsError(try ObjectStoreURL("gs://bucket/a/../b"))
    }

    func testConfigurationFromEnvironmentAndProfiles() throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("aws-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: home.appendingPathComponent(".aws"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: home) }
        try
            "[default]\naws_access_key_id = D\naws_secret_access_key = DS\n\n[work]\naws_access_key_id=W\naws_secret_access_key=WS\naws_session_token=T\n"
            .write(to: home.appendingPathComponent(".aws/credentials"), atomically: true, encoding: .utf8)
        try "[default]\nregion = eu-west-1\n[profile work]\nregion = eu-central-1\nendpoint_url = http://127.0.0.1:9000\n"
            .write(to: home.appendingPathComponent(".aws/config"), atomically: true, encoding: .utf8)
        let base = ["HOME": home.path]

        let d = try AWSConfiguration.resolve(store: "s3://b/", environment: base)
        XCTAssertEqual(d.credentials.accessKeyID, "D")
        XCTAssertEqual(d.region, "eu-west-1")
        XCTAssertNil(d.endpoint)

        let w = try AWSConfiguration.resolve(store: "s3://b/", environment: base.merging(["AWS_PROFILE": "work"]) { $1 })
        XCTAssertEqual(w.credentials.accessKeyID, "W")
        XCTAssertEqual(w.credentials.sessionToken, "T")
        XCTAssertEqual(w.region, "eu-central-1")
        XCTAssertEqual(w.endpoint, "http://127.0.0.1:9000")

        let e = try AWSConfiguration.resolve(
            store: "s3://b/", endpoint: "http://127.0.0.1:1/",
            environment: base.merging([
                "AWS_ACCESS_KEY_ID": "E", "AWS_SECRET_ACCESS_KEY": "ES", "AWS_DEFAULT_REGION": "ap-south-1",
                "AWS_ENDPOINT_URL": "http://x:2", "AWS_ENDPOINT_URL_S3": "http://x:3",
            ]) { $1 })
        XCTAssertEqual(e.credentials.accessKeyID, "E")
        XCTAssertEqual(e.region, "ap-south-1")
        XCTAssertEqual(e.endpoint, "http://127.0.0.1:1", "--endpoint wins")
        let s = try AWSConfiguration.resolve(
            store: "s3://b/",
            environment: [
                "AWS_ACCESS_KEY_ID": "E", "AWS_SECRET_ACCESS_KEY": "ES", "AWS_ENDPOINT_URL": "http://x:2",
                "AWS_ENDPOINT_URL_S3": "http://x:3", "HOME": home.path,
            ])
        XCTAssertEqual(s.endpoint, "http://x:3", "AWS_ENDPOINT_URL_S3 before AWS_ENDPOINT_URL")

        XCTAssertThrowsError(try AWSConfiguration.resolve(store: "s3://b/p/", environment: ["HOME": "/nonexistent"])) {
            XCTAssertTrue("\($0)".contains("s3://b/p/") && "\($0)".contains("AWS_ACCESS_KEY_ID"), "\($0)")
        }
    }

    /// `credential_process` in a profile, as AWS's tools run it (and what bridges an SSO profile).
    func testCredentialsFromAProfilesCredentialProcess() throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("aws-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: home.appendingPathComponent(".aws"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: home) }
        let script = home.appendingPathComponent("creds.sh").path
        try
            "#!/bin/sh\necho '{\"Version\": 1, \"AccessKeyId\": \"P\", \"SecretAccessKey\": \"PS\", \"SessionToken\": \"PT\", \"Expiration\": \"2999-01-01T00:00:00Z\"}'\n"
            .write(toFile: script, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script)
        try """
        [profile tool]
        credential_process = \(script) --profile tool
        region = eu-north-1
        [profile broken]
        credential_process = sh -c 'echo no such role >&2; exit 3'
        [profile garbled]
        credential_process = echo '{"Version": 2}'
        [profile old]
        credential_process = echo '{"Version": 1, "AccessKeyId": "O", "SecretAccessKey": "OS", "Expiration": "2001-01-01T00:00:00Z"}'
        [profile sso]
        sso_session = corp
        sso_account_id = 123456789012
        """.write(to: home.appendingPathComponent(".aws/config"), atomically: true, encoding: .utf8)
        func env(_ profile: String) -> [String: String] { ["HOME": home.path, "AWS_PROFILE": profile, "PATH": "/usr/bin:/bin"] }

        let tool = try AWSConfiguration.resolve(store: "s3://b/", environment: env("tool"))
        XCTAssertEqual(tool.credentials.accessKeyID, "P")
        XCTAssertEqual(tool.credentials.secretAccessKey, "PS")
        XCTAssertEqual(tool.credentials.sessionToken, "PT")
        XCTAssertEqual(tool.region, "eu-north-1")
        for (profile, message) in [
            ("broken", "exited with status 3: no such role"), ("garbled", "did not print {\"Version\": 1"),
            ("old", "expired at 2001-01-01T00:00:00Z"), ("sso", "aws configure export-credentials --profile sso --format process"),
        ] {
            XCTAssertThrowsError(try AWSConfiguration.resolve(store: "s3://b/", environment: env(profile))) {
                XCTAssertTrue("\($0)".contains("s3://b/") && "\($0)".contains(message), "\(profile): \($0)")
            }
        }
    }
}
