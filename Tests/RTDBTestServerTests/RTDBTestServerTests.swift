import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import RTDBTestServer
import XCTest

/// The server over HTTP: loopback only, the query string as clients encode it, keep-alive, and the
/// injected faults.
final class RTDBTestServerTests: XCTestCase {
    private var server: RTDBTestServer!
    private var client: HTTPClient!

    override func setUpWithError() throws {
        client = HTTPClient(eventLoopGroupProvider: .singleton)
        server = try RTDBTestServer(configuration: .init(namespace: "ns1"))
        try server.database.load(json: Array(#"{"a":{"b":1,"c":"x"}}"#.utf8))
    }

    override func tearDown() async throws {
        try await client.shutdown()
        try server.stop()
    }

    private func send(_ method: HTTPMethod, _ target: String, _ body: String? = nil, timeout: TimeAmount = .seconds(10)) async throws -> (
        Int, String
    ) {
        var request = HTTPClientRequest(url: "http://\(server.host)\(target)")
        request.method = method
        if let body { request.body = .bytes(ByteBuffer(string: body)) }
        let response = try await client.execute(request, timeout: timeout)
        let bytes = try await response.body.collect(upTo: 1 << 20)
        return (Int(response.status.code), String(buffer: bytes))
    }

    func testListensOnLoopbackAndServesRequests() async throws {
        XCTAssertGreaterThan(server.port, 0)
        var (status, body) = try await send(.GET, "/a.json?ns=ns1&orderBy=%22%24key%22&startAt=%22c%22")
        XCTAssertEqual(status, 200)
        XCTAssertEqual(body, #"{"c":"x"}"#)
        (status, body) = try await send(.PATCH, "/a.json?ns=ns1&print=silent", #"{"d/e":true}"#)
        XCTAssertEqual(status, 204)
        XCTAssertEqual(body, "")
        (_, body) = try await send(.GET, "/.json")
        XCTAssertEqual(body, #"{"a":{"b":1,"c":"x","d":{"e":true}}}"#)
        XCTAssertEqual(server.requests.map(\.method), ["GET", "PATCH", "GET"])
        XCTAssertEqual(server.requests[1].path, ["a"])
        XCTAssertEqual(server.requests[1].query["print"], "silent")
        (status, _) = try await send(.GET, "/a")
        XCTAssertEqual(status, 404)
    }

    func testServiceUnavailableIsServedOnceAndChangesNothing() async throws {
        server.injectFaults([.serviceUnavailable], method: "PUT")
        var (status, _) = try await send(.GET, "/a/b.json")
        XCTAssertEqual(status, 200)
        (status, _) = try await send(.PUT, "/a/b.json", "2")
        XCTAssertEqual(status, 503)
        server.injectFaults([.serviceUnavailable], skipping: 1)
        (status, _) = try await send(.GET, "/a/b.json")
        XCTAssertEqual(status, 200)
        (status, _) = try await send(.GET, "/a/b.json")
        XCTAssertEqual(status, 503)
        XCTAssertEqual(server.database.contents(at: ["a", "b"]), Array("1".utf8))
        (status, _) = try await send(.PUT, "/a/b.json", "2")
        XCTAssertEqual(status, 200)
        XCTAssertEqual(server.database.contents(at: ["a", "b"]), Array("2".utf8))
    }

    func testDroppedConnectionsBeforeAndAfterApplying() async throws {
        server.injectFaults([.dropConnection, .dropConnectionAfterApplying])
        do {
            _ = try await send(.PUT, "/a/b.json", "2")
            XCTFail("a dropped connection must fail the request")
        } catch {}
        XCTAssertEqual(server.database.contents(at: ["a", "b"]), Array("1".utf8))
        do {
            _ = try await send(.PUT, "/a/b.json", "3")
            XCTFail("a dropped connection must fail the request")
        } catch {}
        XCTAssertEqual(server.database.contents(at: ["a", "b"]), Array("3".utf8))
        XCTAssertEqual(server.requests.map(\.status), [nil, nil])
        let (status, _) = try await send(.GET, "/a/b.json")
        XCTAssertEqual(status, 200)
    }

    func testStallHoldsTheAnswerPastAClientTimeout() async throws {
        server.injectFaults([.stall(milliseconds: 3_000)])
        do {
            _ = try await send(.PUT, "/a/b.json", "5", timeout: .milliseconds(200))
            XCTFail("the stalled answer must time out")
        } catch {}
        // The stalled write was applied; only its answer was late.
        XCTAssertEqual(server.database.contents(at: ["a", "b"]), Array("5".utf8))
    }
}
