/// How often a request is tried again and how long to wait between tries: bounded attempts with
/// "full jitter" exponential backoff (a random wait up to a doubling ceiling), so that many
/// requests refused at once do not come back at once. Only transient failures are retried.
public struct RequestRetry: Sendable {
    /// Attempts in all, the first included.
    public var maxAttempts: Int
    /// The ceiling of the first wait; it doubles with each retry up to `maxDelay`.
    public var baseDelay: Duration
    public var maxDelay: Duration

    public init(maxAttempts: Int = 8, baseDelay: Duration = .milliseconds(100), maxDelay: Duration = .seconds(10)) {
        self.maxAttempts = max(1, maxAttempts)
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
    }

    /// Eight attempts with waits up to 0.1, 0.2, ... 6.4 s.
    public static let standard = RequestRetry()

    /// The wait before retry number `retry` (1 for the first).
    func delay(beforeRetry retry: Int) -> Duration {
        let ceiling = min(maxDelay, baseDelay * (1 << min(max(retry - 1, 0), 30)))
        let ns = ceiling.components.seconds * 1_000_000_000 + ceiling.components.attoseconds / 1_000_000_000
        return .nanoseconds(Int64.random(in: 0...max(ns, 0)))
    }

    /// Runs `operation` until it succeeds, fails for good, or has had `maxAttempts` tries.
    public func run<T>(_ operation: (_ attempt: Int) async throws -> T) async throws -> T {
        var attempt = 1
        while true {
            do {
                return try await operation(attempt)
            } catch let error as DatabaseRequestError where error.isTransient && attempt < maxAttempts {
                try await Task.sleep(for: delay(beforeRetry: attempt))
                attempt += 1
            }
        }
    }
}
