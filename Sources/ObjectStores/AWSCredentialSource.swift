import CloudHTTP
import Foundation

/// The credentials an S3 client signs with, renewed before they expire when they came with an
/// expiration and a way to get new ones (a profile's `credential_process`), as AWS's SDKs do: within
/// five minutes of the expiration new ones are fetched, at most every 30 s, and always in the last
/// 30 s. A renewal runs on a thread of its own, once for all the requests that need it; one that
/// fails while the credentials still have 30 s or more keeps them (the next try 30 s later), else its
/// error is the request's.
final class AWSCredentialSource: @unchecked Sendable {
    private let lock = NSLock()
    private var credentials: AWSCredentials
    private var fetched: Date
    private var renewal: Task<AWSCredentials, any Error>?
    private let refresh: (@Sendable () throws -> AWSCredentials)?

    /// `credentials` were got at `fetched`.
    init(_ credentials: AWSCredentials, fetched: Date = Date(), refresh: (@Sendable () throws -> AWSCredentials)?) {
        self.credentials = credentials
        self.fetched = fetched
        self.refresh = refresh
    }

    /// The credentials to sign a request with at `now`.
    func current(now: Date = Date()) async throws -> AWSCredentials {
        let (held, task): (AWSCredentials, Task<AWSCredentials, any Error>?) = lock.withLock {
            guard let refresh, let expiration = credentials.expiration else { return (credentials, nil) }
            let remaining = expiration.timeIntervalSince(now)
            guard remaining < 30 || (remaining < 300 && now.timeIntervalSince(fetched) >= 30) else { return (credentials, nil) }
            if renewal == nil { renewal = Task { try await onOwnThread(refresh) } }
            return (credentials, renewal)
        }
        guard let task else { return held }
        do {
            let renewed = try await task.value
            lock.withLock {
                if renewal == task {
                    credentials = renewed
                    fetched = now
                    renewal = nil
                }
            }
            return renewed
        } catch {
            let keep: Bool = lock.withLock {
                if renewal == task {
                    fetched = now
                    renewal = nil
                }
                return (held.expiration?.timeIntervalSince(now) ?? 0) >= 30
            }
            if keep { return held }
            throw error
        }
    }
}
