import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import NIOPosix

/// When and how often a cloud request is tried again: bounded attempts with jittered exponential
/// backoff ("full jitter": a random wait between zero and the exponential ceiling, so that many
/// workers throttled at once do not come back at once).
///
/// Retried: HTTP 500, 502, 503, 504 (whatever the body), S3's `SlowDown`, `RequestTimeout` and
/// `InternalError` codes, and transport failures (a connection refused, reset or dropped mid-body,
/// a response cut short, connect and read timeouts, a request deadline passed). Everything else (a 4xx, a bad signature, a missing bucket) fails at once.
public struct RetryPolicy: Sendable {
    /// Attempts in all, the first included (at least 1).
    public var maxAttempts: Int
    /// The ceiling of the first wait; it doubles with each retry.
    public var baseDelay: Duration
    /// The largest ceiling a wait can have.
    public var maxDelay: Duration

    public init(maxAttempts: Int = 6, baseDelay: Duration = .milliseconds(100), maxDelay: Duration = .seconds(8)) {
        precondition(maxAttempts >= 1, "a retry policy needs at least one attempt")
        self.maxAttempts = maxAttempts
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
    }

    /// Six attempts, waits up to 0.1, 0.2, 0.4, 0.8, 1.6 s: about 3 s at most before the error is reported.
    public static let standard = RetryPolicy()

    /// Service error codes that mean "try again" whatever the status.
    public static let retryableCodes: Set<String> = ["SlowDown", "RequestTimeout", "InternalError", "ServiceUnavailable", "Throttling"]

    /// Whether a response with this status and service error code is worth another attempt.
    public func isRetryable(status: Int, code: String?) -> Bool {
        if [500, 502, 503, 504].contains(status) { return true }
        if status == 429 { return true }
        if let code, Self.retryableCodes.contains(code) { return true }
        return false
    }

    /// Whether a thrown error is worth another attempt: an `HTTPServiceError` by its status and code, a
    /// transport failure (dropped or refused connection, timeout) always, anything else never.
    public func isRetryable(_ error: any Error) -> Bool {
        switch error {
        case let e as HTTPServiceError:
            return isRetryable(status: e.status, code: e.code)
        case let e as HTTPClientError:
            return [
                .remoteConnectionClosed, .readTimeout, .writeTimeout, .connectTimeout, .uncleanShutdown,
                .bodyLengthMismatch, .getConnectionFromPoolTimeout, .deadlineExceeded,
            ].contains(e)
        case is IOError, is NIOConnectionError, is ChannelError, is HTTPParserError:
            return true
        default:
            return false
        }
    }

    /// The wait before retry number `retry` (1 for the first retry): uniform in 0...min(maxDelay, baseDelay * 2^(retry-1)).
    public func delay(beforeRetry retry: Int) -> Duration {
        let ceiling = min(maxDelay, baseDelay * (1 << min(max(retry - 1, 0), 30)))
        let nanoseconds = ceiling.components.seconds * 1_000_000_000 + ceiling.components.attoseconds / 1_000_000_000
        return .nanoseconds(Int64.random(in: 0...max(nanoseconds, 0)))
    }

    /// Runs `operation` until it succeeds, throws an error that is not retryable, or has been tried
    /// `maxAttempts` times (then its last error is thrown). `operation` gets the attempt number (1...)
    /// and must build its request anew each time (a streamed body cannot be sent twice).
    public func run<T>(_ operation: (_ attempt: Int) async throws -> T) async throws -> T {
        var attempt = 1
        while true {
            do {
                return try await operation(attempt)
            } catch {
                guard attempt < maxAttempts, isRetryable(error) else { throw error }
                try await Task.sleep(for: delay(beforeRetry: attempt))
                attempt += 1
            }
        }
    }
}
