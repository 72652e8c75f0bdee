import Foundation

/// The credentials an S3 client signs with, renewed before they expire when they came with an
/// expiration and a way to get new ones (a profile's `credential_process`), as AWS's SDKs do: within
/// five minutes of the expiration new ones are fetched (at most every 30 s, so credentials that keep
/// coming short-lived do not cost a process per request), and always within the last minute.
final class AWSCredentialSource: @unchecked Sendable {
    private let lock = NSLock()
    private var credentials: AWSCredentials
    private var fetched: Date
    private let refresh: (@Sendable () throws -> AWSCredentials)?

    /// `credentials` were got at `fetched`.
    init(_ credentials: AWSCredentials, fetched: Date = Date(), refresh: (@Sendable () throws -> AWSCredentials)?) {
        self.credentials = credentials
        self.fetched = fetched
        self.refresh = refresh
    }

    /// The credentials to sign a request with now; throws when new ones were due and could not be had.
    func current(now: Date = Date()) throws -> AWSCredentials {
        lock.lock()
        defer { lock.unlock() }
        guard let refresh, let expiration = credentials.expiration else { return credentials }
        let remaining = expiration.timeIntervalSince(now)
        if remaining < 60 || (remaining < 300 && now.timeIntervalSince(fetched) >= 30) {
            credentials = try refresh()
            fetched = now
        }
        return credentials
    }
}
