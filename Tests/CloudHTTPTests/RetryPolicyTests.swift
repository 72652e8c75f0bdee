import AsyncHTTPClient
import CloudHTTP
import NIOHTTP1
import XCTest

final class RetryPolicyTests: XCTestCase {
    struct Refused: Error {}

    func testClassifiesStatusesCodesAndTransportErrors() {
        let policy = RetryPolicy.standard
        for status in [500, 502, 503, 504] { XCTAssertTrue(policy.isRetryable(status: status, code: nil), "\(status)") }
        XCTAssertTrue(policy.isRetryable(status: 400, code: "RequestTimeout"))
        XCTAssertTrue(policy.isRetryable(status: 503, code: "SlowDown"))
        XCTAssertFalse(policy.isRetryable(status: 403, code: "SignatureDoesNotMatch"))
        XCTAssertFalse(policy.isRetryable(status: 404, code: "NoSuchBucket"))
        XCTAssertFalse(policy.isRetryable(status: 412, code: "PreconditionFailed"))
        XCTAssertTrue(policy.isRetryable(HTTPClientError.remoteConnectionClosed))
        XCTAssertTrue(policy.isRetryable(HTTPClientError.readTimeout))
        XCTAssertTrue(policy.isRetryable(HTTPClientError.deadlineExceeded))
        XCTAssertTrue(policy.isRetryable(HTTPParserError.invalidEOFState), "a response cut short")
        XCTAssertFalse(policy.isRetryable(HTTPClientError.invalidURL))
        XCTAssertFalse(policy.isRetryable(Refused()))
        XCTAssertTrue(policy.isRetryable(HTTPServiceError(status: 503, code: "SlowDown", message: "slow", request: "PUT x")))
    }

    func testDelaysAreJitteredBelowADoublingCeiling() {
        let policy = RetryPolicy(maxAttempts: 10, baseDelay: .milliseconds(100), maxDelay: .seconds(1))
        for retry in 1...12 {
            let ceiling = min(Duration.seconds(1), .milliseconds(100) * (1 << (retry - 1)))
            for _ in 0..<50 {
                let d = policy.delay(beforeRetry: retry)
                XCTAssertGreaterThanOrEqual(d, .zero)
                XCTAssertLessThanOrEqual(d, ceiling)
            }
        }
        let spread = Set((0..<50).map { _ in policy.delay(beforeRetry: 4) })
        XCTAssertGreaterThan(spread.count, 1, "waits are random, not one fixed value")
    }

    func testRetriesUntilSuccessAndGivesUpAfterMaxAttempts() async throws {
        let policy = RetryPolicy(maxAttempts: 4, baseDelay: .zero, maxDelay: .zero)
        var attempts: [Int] = []
        let value = try await policy.run { attempt in
            attempts.append(attempt)
            if attempt < 3 { throw HTTPServiceError(status: 503, code: "SlowDown", message: "slow", request: "PUT x") }
            return "ok"
        }
        XCTAssertEqual(value, "ok")
        XCTAssertEqual(attempts, [1, 2, 3])

        var tries = 0
        do {
            _ = try await policy.run { _ -> Int in
                tries += 1
                throw HTTPClientError.remoteConnectionClosed
            }
            XCTFail("must give up")
        } catch {
            XCTAssertEqual(error as? HTTPClientError, .remoteConnectionClosed)
        }
        XCTAssertEqual(tries, 4)

        tries = 0
        do {
            _ = try await policy.run { _ -> Int in
                tries += 1
                throw HTTPServiceError(status: 403, code: "AccessDenied", message: "no", request: "GET x")
            }
        } catch {}
        XCTAssertEqual(tries, 1, "a 403 is not retried")
    }

    func testRunBlockingReturnsAndThrows() throws {
        XCTAssertEqual(try runBlocking { 42 }, 42)
        XCTAssertThrowsError(try runBlocking { () async throws -> Int in throw Refused() }) { XCTAssertTrue($0 is Refused) }
    }
}
