import AsyncHTTPClient
import Foundation
import JSONStream
import NIOCore
import NIOHTTP1

/// How requests prove who sends them (firebase.google.com/docs/database/rest/auth).
public enum DatabaseAuth: Sendable {
    /// Nothing (an emulator, or public data).
    case none
    /// `auth=SECRET`: a legacy database secret or a Firebase ID token (`--auth`).
    case authParameter(String)
    /// `Authorization: Bearer TOKEN`: an OAuth2 access token, got anew for each request (it may expire).
    case accessToken(@Sendable () async throws -> String)
}

/// A request the database refused or could not answer, with what was asked and what it said.
public struct DatabaseRequestError: Error, CustomStringConvertible, Sendable {
    public enum Kind: Sendable {
        /// 400 with the documented "Data requested exceeds the maximum size..." message.
        case readTooLarge
        /// 400 with the documented "Data to write exceeds the maximum size..." message.
        case writeTooLarge
        /// 401/403: credentials missing, wrong, or refused by the security rules.
        case unauthorized
        /// 404: no such database (a wrong namespace).
        case notFound
        /// Another 4xx: the request or the data was refused.
        case refused
        /// 5xx, a timeout or a dropped connection, still so after the retries.
        case unavailable
    }

    public let kind: Kind
    public let status: Int?
    /// The server's `error` message, or what went wrong on the way.
    public let message: String
    /// The method and the URL without credentials.
    public let request: String

    public var description: String {
        "\(request): \(status.map { "HTTP \($0): " } ?? "")\(message)"
    }

    /// Whether another attempt may succeed.
    var isTransient: Bool { kind == .unavailable }
}

/// The REST calls export and import need, with retries: 5xx answers, timeouts and dropped
/// connections are tried again with jittered backoff; every other answer is final.
public final class DatabaseClient: Sendable {
    public let auth: DatabaseAuth
    public let retry: RequestRetry
    /// The longest a request may take, answer included, before it is abandoned (and retried).
    public let requestTimeout: TimeAmount
    /// The largest response read (the database's own limit is 256 MB).
    public let maxResponseBytes: Int
    private let http: HTTPClient

    public init(auth: DatabaseAuth, retry: RequestRetry = .standard, requestTimeout: TimeAmount = .seconds(300),
                maxResponseBytes: Int = 300_000_000) {
        self.auth = auth
        self.retry = retry
        self.requestTimeout = requestTimeout
        self.maxResponseBytes = maxResponseBytes
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow, timeout: .init(connect: .seconds(10)))
        configuration.connectionPool.retryConnectionEstablishment = false
        http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// Closes the connections; call once when done.
    public func shutdown() async throws {
        try await http.shutdown()
    }

    /// `GET` of `location + relative` with `query` (JSON-encoded values where the API wants JSON): the body.
    public func get(_ location: DatabaseURL, _ relative: [String] = [], query: [(String, String)] = []) async throws -> [UInt8] {
        try await send(.GET, location, relative, query: query, body: nil)
    }

    /// A multi-path `PATCH` of `body` at `location` with `print=silent` (the answer would repeat the body).
    public func patch(_ location: DatabaseURL, body: [UInt8]) async throws {
        _ = try await send(.PATCH, location, [], query: [("print", "silent")], body: body)
    }

    private func send(_ method: HTTPMethod, _ location: DatabaseURL, _ relative: [String], query: [(String, String)], body: [UInt8]?) async throws -> [UInt8] {
        let shown = "\(method.rawValue) \(location.restURL(relative, query: query))"
        return try await retry.run { _ in
            var items = query
            var request = HTTPClientRequest(url: "")
            if location.sendsCredentials {
                switch auth {
                case .none: break
                case .authParameter(let secret): items.append(("auth", secret))
                case .accessToken(let token): request.headers.add(name: "Authorization", value: "Bearer \(try await token())")
                }
            }
            request.url = location.restURL(relative, query: items)
            request.method = method
            if let body {
                request.body = .bytes(ByteBuffer(bytes: body))
                request.headers.add(name: "Content-Type", value: "application/json")
            }
            let response: HTTPClientResponse
            let bytes: ByteBuffer
            do {
                response = try await http.execute(request, timeout: requestTimeout)
                bytes = try await response.body.collect(upTo: maxResponseBytes)
            } catch let error as DatabaseRequestError {
                throw error
            } catch {
                throw DatabaseRequestError(kind: .unavailable, status: nil, message: "\(error)", request: shown)
            }
            let status = Int(response.status.code)
            if (200..<300).contains(status) { return Array(buffer: bytes) }
            throw Self.error(status: status, body: Array(buffer: bytes), request: shown)
        }
    }

    /// The error for an answer that is not a success: the documented size messages, credentials, or else.
    static func error(status: Int, body: [UInt8], request: String) -> DatabaseRequestError {
        let message = (try? JSONReader(bytes: body).readValue().objectValue?["error"]?.stringValue) ?? nil
        let text = message ?? (String(validating: body.prefix(300), as: UTF8.self) ?? "HTTP \(status)")
        let kind: DatabaseRequestError.Kind
        switch status {
        case 400 where text.hasPrefix("Data requested exceeds the maximum size"): kind = .readTooLarge
        case 400 where text.hasPrefix("Data to write exceeds the maximum size"): kind = .writeTooLarge
        case 401, 403: kind = .unauthorized
        case 404: kind = .notFound
        case 429, 500...: kind = .unavailable
        default: kind = .refused
        }
        return DatabaseRequestError(kind: kind, status: status, message: text, request: request)
    }
}
