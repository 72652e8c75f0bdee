import CloudHTTP
import Crypto
import Foundation
import TestSupport
import XCTest
import _CryptoExtras

/// The service-account token exchange against a token endpoint of the test's own (a Python
/// http.server on 127.0.0.1 that records each assertion it gets and answers as Google's does), with a
/// key made by `openssl genrsa`; every JWT's signature is checked with the key's public half.
final class GoogleAccessTokenProviderTests: XCTestCase {
    /// Answers POST /token: records the form, then 200 with a numbered token and the `expires_in` of
    /// the file `expires`, or 400 `invalid_grant` when the file `refuse` exists.
    static let tokenServer = #"""
        import http.server, json, os, sys, urllib.parse
        directory = sys.argv[2]
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                form = urllib.parse.parse_qs(self.rfile.read(int(self.headers["Content-Length"])).decode())
                count = len(os.listdir(os.path.join(directory, "requests"))) + 1
                with open(os.path.join(directory, "requests", "%04d.json" % count), "w") as f:
                    json.dump({"path": self.path, "contentType": self.headers["Content-Type"], "form": form}, f)
                if os.path.exists(os.path.join(directory, "refuse")):
                    body, status = {"error": "invalid_grant", "error_description": "Invalid JWT Signature."}, 400
                else:
                    expires = int(open(os.path.join(directory, "expires")).read())
                    body, status = {"access_token": "token-%d" % count, "expires_in": expires, "token_type": "Bearer"}, 200
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            def log_message(self, *args):
                pass
        http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
        """#

    var directory: URL!
    var server: ServerProcess!
    var keyFile: URL!
    var publicKey: _RSA.Signing.PublicKey!
    var port = 0

    override func setUpWithError() throws {
        let python = try RequiredTool.path("python3", package: "python3")
        let openssl = try RequiredTool.path("openssl", package: "openssl")
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("token-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("requests"), withIntermediateDirectories: true)
        try "3600".write(to: directory.appendingPathComponent("expires"), atomically: true, encoding: .utf8)
        let script = directory.appendingPathComponent("token_server.py")
        try Self.tokenServer.write(to: script, atomically: true, encoding: .utf8)
        port = try freePort()
        server = try ServerProcess(
            python, [script.path, String(port), directory.path], logFile: directory.appendingPathComponent("server.log"))
        try server.waitUntilListening(port: port)

        let pem = try Shell.run(openssl, ["genrsa", "2048"])
        let privateKey = try _RSA.Signing.PrivateKey(pemRepresentation: pem)
        publicKey = privateKey.publicKey
        let key: [String: String] = [
            "type": "service_account", "project_id": "test", "private_key_id": "key-1", "private_key": pem,
            "client_email": "dumpkit@test.iam.gserviceaccount.com", "token_uri": "http://127.0.0.1:\(port)/token",
        ]
        keyFile = directory.appendingPathComponent("key.json")
        try JSONSerialization.data(withJSONObject: key).write(to: keyFile)
    }

    override func tearDown() {
        server?.stop()
        if let directory { try? FileManager.default.removeItem(at: directory) }
    }

    /// The requests the endpoint got, in order.
    func requests() throws -> [[String: Any]] {
        let folder = directory.appendingPathComponent("requests")
        return try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted().map {
            try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appendingPathComponent($0))) as! [String: Any]
        }
    }

    func decodeBase64URL(_ s: Substring) -> Data {
        var t = s.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while t.count % 4 != 0 { t += "=" }
        return Data(base64Encoded: t)!
    }

    func provider(environment extra: [String: String] = [:]) throws -> GoogleAccessTokenProvider {
        let environment = ["GOOGLE_APPLICATION_CREDENTIALS": keyFile.path].merging(extra) { $1 }
        return try XCTUnwrap(
            GoogleAccessTokenProvider.fromEnvironment(
                scopes: [GoogleAccessTokenProvider.storageScope, "https://www.googleapis.com/auth/userinfo.email"], environment: environment
            ))
    }

    func testExchangesASignedJWTAndCachesTheToken() async throws {
        let tokens = try provider()
        let first = try await tokens.accessToken()
        let second = try await tokens.accessToken()
        XCTAssertEqual(first, "token-1")
        XCTAssertEqual(second, "token-1", "a token valid for an hour is reused")

        let sent = try requests()
        XCTAssertEqual(sent.count, 1)
        XCTAssertEqual(sent[0]["path"] as? String, "/token")
        XCTAssertEqual(sent[0]["contentType"] as? String, "application/x-www-form-urlencoded")
        let form = try XCTUnwrap(sent[0]["form"] as? [String: [String]])
        XCTAssertEqual(form["grant_type"], ["urn:ietf:params:oauth:grant-type:jwt-bearer"])
        let jwt = try XCTUnwrap(form["assertion"]?.first)
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        XCTAssertEqual(parts.count, 3)
        let header = try JSONSerialization.jsonObject(with: decodeBase64URL(parts[0])) as! [String: Any]
        XCTAssertEqual(header["alg"] as? String, "RS256")
        XCTAssertEqual(header["kid"] as? String, "key-1")
        let claims = try JSONSerialization.jsonObject(with: decodeBase64URL(parts[1])) as! [String: Any]
        XCTAssertEqual(claims["iss"] as? String, "dumpkit@test.iam.gserviceaccount.com")
        XCTAssertEqual(claims["aud"] as? String, "http://127.0.0.1:\(port)/token")
        XCTAssertEqual(
            claims["scope"] as? String,
            "https://www.googleapis.com/auth/devstorage.full_control https://www.googleapis.com/auth/userinfo.email")
        let iat = try XCTUnwrap(claims["iat"] as? Int), exp = try XCTUnwrap(claims["exp"] as? Int)
        XCTAssertEqual(exp - iat, 3600)

        let signingInput = Data("\(parts[0]).\(parts[1])".utf8)
        let signature = _RSA.Signing.RSASignature(rawRepresentation: decodeBase64URL(parts[2]))
        XCTAssertTrue(publicKey.isValidSignature(signature, for: SHA256.hash(data: signingInput), padding: .insecurePKCS1v1_5))
        XCTAssertFalse(
            publicKey.isValidSignature(signature, for: SHA256.hash(data: signingInput + Data("x".utf8)), padding: .insecurePKCS1v1_5))
    }

    func testFetchesANewTokenWhenTheCachedOneIsAboutToExpire() async throws {
        try "0".write(to: directory.appendingPathComponent("expires"), atomically: true, encoding: .utf8)
        let tokens = try provider()
        let first = try await tokens.accessToken()
        let second = try await tokens.accessToken()
        XCTAssertEqual(first, "token-1")
        XCTAssertEqual(second, "token-2", "an expired token is replaced before it is used")
        await tokens.invalidate()
        try "3600".write(to: directory.appendingPathComponent("expires"), atomically: true, encoding: .utf8)
        let third = try await tokens.accessToken()
        XCTAssertEqual(third, "token-3")
    }

    func testConcurrentCallersShareOneExchange() async throws {
        let tokens = try provider()
        let got = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<16 { group.addTask { try await tokens.accessToken() } }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        XCTAssertEqual(got, ["token-1"])
        XCTAssertEqual(try requests().count, 1)
    }

    func testARefusedExchangeIsAServiceErrorWithGooglesCode() async throws {
        XCTAssertTrue(FileManager.default.createFile(atPath: directory.appendingPathComponent("refuse").path, contents: nil))
        let tokens = try provider()
        do {
            _ = try await tokens.accessToken()
            XCTFail("a refused exchange must throw")
        } catch let error as HTTPServiceError {
            XCTAssertEqual(error.status, 400)
            XCTAssertEqual(error.code, "invalid_grant")
            XCTAssertEqual(error.message, "Invalid JWT Signature.")
            XCTAssertTrue(error.description.contains("POST http://127.0.0.1:\(port)/token"), error.description)
        }
        XCTAssertEqual(try requests().count, 1, "a 400 is not retried")
    }

    func testAFixedTokenWinsOverTheKeyFile() async throws {
        let fromOption = try XCTUnwrap(
            GoogleAccessTokenProvider.fromEnvironment(
                accessToken: "opt", scopes: [],
                environment: ["GOOGLE_OAUTH_ACCESS_TOKEN": "env", "GOOGLE_APPLICATION_CREDENTIALS": keyFile.path]))
        let token1 = try await fromOption.accessToken()
        XCTAssertEqual(token1, "opt")
        let fromEnvironment = try XCTUnwrap(
            GoogleAccessTokenProvider.fromEnvironment(
                scopes: [], environment: ["GOOGLE_OAUTH_ACCESS_TOKEN": "env", "GOOGLE_APPLICATION_CREDENTIALS": keyFile.path]))
        let token2 = try await fromEnvironment.accessToken()
        XCTAssertEqual(token2, "env")
        XCTAssertNil(try GoogleAccessTokenProvider.fromEnvironment(scopes: [], environment: [:]))
        XCTAssertEqual(try requests().count, 0)
    }

    func testABadKeyFileIsNamedInTheError() throws {
        let bad = directory.appendingPathComponent("bad.json")
        try #"{"type": "authorized_user", "client_id": "x"}"#.write(to: bad, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(
            try GoogleAccessTokenProvider.fromEnvironment(scopes: [], environment: ["GOOGLE_APPLICATION_CREDENTIALS": bad.path])
        ) {
            XCTAssertTrue("\($0)".contains(bad.path) && "\($0)".contains("authorized_user"), "\($0)")
        }
        XCTAssertThrowsError(
            try GoogleAccessTokenProvider.fromEnvironment(
                scopes: [], environment: ["GOOGLE_APPLICATION_CREDENTIALS": directory.appendingPathComponent("none.json").path])
        ) {
            XCTAssertTrue("\($0)".contains("none.json"), "\($0)")
        }
    }
}
