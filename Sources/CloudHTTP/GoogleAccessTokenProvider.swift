import AsyncHTTPClient
import Foundation
import NIOCore

/// OAuth2 access tokens for Google APIs (Cloud Storage, the Realtime Database): either a fixed token
/// (`--access-token`, `GOOGLE_OAUTH_ACCESS_TOKEN`) or tokens got for a service-account key
/// (`GOOGLE_APPLICATION_CREDENTIALS`), cached and fetched anew five minutes before they expire (half
/// way through shorter lifetimes), one exchange at a time however many requests ask.
public actor GoogleAccessTokenProvider {
    /// The scope Cloud Storage's JSON API needs for reading, writing and patching metadata.
    public static let storageScope = "https://www.googleapis.com/auth/devstorage.full_control"

    private enum Source {
        case fixed(String)
        case serviceAccount(ServiceAccountKey, scopes: [String])
    }

    private let source: Source
    private let retryPolicy: RetryPolicy
    private var cached: (token: String, refreshAfter: Date)?
    private var exchange: Task<(String, Date), any Error>?

    /// A provider that always answers `token`.
    public init(fixedToken token: String) {
        source = .fixed(token)
        retryPolicy = .standard
    }

    /// A provider that exchanges JWTs signed with `key` for tokens with `scopes` at the key's `token_uri`.
    public init(serviceAccount key: ServiceAccountKey, scopes: [String], retryPolicy: RetryPolicy = .standard) {
        source = .serviceAccount(key, scopes: scopes)
        self.retryPolicy = retryPolicy
    }

    /// The provider the environment asks for: `accessToken` (an `--access-token` option) first, then
    /// `GOOGLE_OAUTH_ACCESS_TOKEN`, then the key file `GOOGLE_APPLICATION_CREDENTIALS` names; `nil` when
    /// none is set.
    public static func fromEnvironment(
        accessToken: String? = nil, scopes: [String],
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> GoogleAccessTokenProvider? {
        if let token = accessToken ?? environment["GOOGLE_OAUTH_ACCESS_TOKEN"], !token.isEmpty {
            return GoogleAccessTokenProvider(fixedToken: token)
        }
        if let path = environment["GOOGLE_APPLICATION_CREDENTIALS"], !path.isEmpty {
            return GoogleAccessTokenProvider(serviceAccount: try ServiceAccountKey(contentsOf: path), scopes: scopes)
        }
        return nil
    }

    /// A token that is not about to expire (a fixed one as it is).
    public func accessToken() async throws -> String {
        switch source {
        case .fixed(let token):
            return token
        case .serviceAccount(let key, let scopes):
            if let cached, cached.refreshAfter > Date() { return cached.token }
            if let exchange { return try await exchange.value.0 }
            let policy = retryPolicy
            let task = Task { try await Self.exchange(key: key, scopes: scopes, retryPolicy: policy) }
            exchange = task
            defer { exchange = nil }
            let (token, refreshAfter) = try await task.value
            cached = (token, refreshAfter)
            return token
        }
    }

    /// Forgets the cached token (after a service answered 401 to it), so the next call fetches another.
    public func invalidate() {
        cached = nil
    }

    /// Posts a signed assertion to the key's `token_uri` (the JWT bearer grant of RFC 7523).
    private static func exchange(key: ServiceAccountKey, scopes: [String], retryPolicy: RetryPolicy) async throws -> (String, Date) {
        try await retryPolicy.run { _ in
            let issued = Date()
            let assertion = try key.assertion(scopes: scopes, issuedAt: issued)
            var request = HTTPClientRequest(url: key.tokenURI)
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
            let form = "grant_type=" + formEncode("urn:ietf:params:oauth:grant-type:jwt-bearer") + "&assertion=" + formEncode(assertion)
            request.body = .bytes(ByteBuffer(string: form))
            let response = try await SharedHTTPClient.client.execute(request, timeout: .seconds(60))
            let body = try await response.body.collect(upTo: 1 << 20)
            struct Answer: Decodable {
                let access_token: String?
                let expires_in: Double?
                let error: String?
                let error_description: String?
            }
            let answer = try? JSONDecoder().decode(Answer.self, from: Data(body.readableBytesView))
            guard response.status == .ok, let token = answer?.access_token else {
                throw HTTPServiceError(
                    status: Int(response.status.code), code: answer?.error,
                    message: answer?.error_description ?? "token exchange for \(key.clientEmail) failed (\(response.status.reasonPhrase))",
                    request: "POST \(key.tokenURI)")
            }
            let lifetime = answer?.expires_in ?? 3600
            return (token, issued.addingTimeInterval(lifetime - min(300, lifetime / 2)))
        }
    }
}

/// `application/x-www-form-urlencoded` value encoding (unreserved characters kept, the rest %XX).
func formEncode(_ s: String) -> String {
    var allowed = CharacterSet.alphanumerics
    allowed.insert(charactersIn: "-._~")
    return s.addingPercentEncoding(withAllowedCharacters: allowed) ?? s
}
