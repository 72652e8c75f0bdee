import ArchiveKit
import AsyncHTTPClient
import CloudHTTP
import DumpKit
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

}

/// The REST calls export and import need, with CloudHTTP's shared retry policy: 5xx answers,
/// timeouts and dropped connections are tried again with jittered backoff; every other answer is final.
public final class DatabaseClient: Sendable {
    public let auth: DatabaseAuth
    public let retry: RetryPolicy
    /// How long a request may go without receiving a byte before it is abandoned (and retried): a
    /// stalled answer, not a large one that keeps coming.
    public let requestTimeout: TimeAmount
    /// The largest response read (the database's own limit is 256 MB).
    public let maxResponseBytes: Int
    private let http: HTTPClient

    public init(
        auth: DatabaseAuth, retry: RetryPolicy = .standard, requestTimeout: TimeAmount = .seconds(300),
        maxResponseBytes: Int = 300_000_000
    ) {
        self.auth = auth
        self.retry = retry
        self.requestTimeout = requestTimeout
        self.maxResponseBytes = maxResponseBytes
        // A client of its own (not CloudHTTP's shared one) for the read timeout the user chooses.
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(connect: .seconds(10), read: requestTimeout))
        configuration.connectionPool.retryConnectionEstablishment = false
        http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// Closes the connections; call once when done.
    public func shutdown() async {
        try? await http.shutdown()
    }

    /// Runs `body` with the client and shuts it down afterwards, whether `body` succeeds or throws.
    public func using<T: Sendable>(_ body: (DatabaseClient) async throws -> T) async throws -> T {
        let result: Result<T, any Error>
        do {
            result = .success(try await body(self))
        } catch {
            result = .failure(error)
        }
        await shutdown()
        return try result.get()
    }

    /// `GET` of `location + relative` with `query` (JSON-encoded values where the API wants JSON): the body.
    public func get(_ location: DatabaseURL, _ relative: [String] = [], query: [(String, String)] = []) async throws -> [UInt8] {
        try await send(.GET, location, relative, query: query, body: nil)
    }

    /// `GET` like `get`, its answer streamed into a new file at `path` as it arrives (replaced on each
    /// attempt), so that memory does not grow with the answer: the number of bytes saved.
    public func download(_ location: DatabaseURL, _ relative: [String] = [], query: [(String, String)] = [], to path: String)
        async throws -> Int
    {
        let limit = maxResponseBytes
        return try await send(.GET, location, relative, query: query, body: nil) { body in
            let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard fd >= 0 else { throw OutputError(file: path, message: "cannot save a fetched page: \(String(cString: strerror(errno)))") }
            defer { close(fd) }
            let file = DescriptorSink(fileDescriptor: fd, name: path)
            var saved = 0
            // The answer comes in pieces of a few KiB: written in 1 MiB blocks, not one write(2) a piece.
            var pending: [UInt8] = []
            pending.reserveCapacity(1 << 20)
            func flush() throws {
                do { try pending.withUnsafeBytes { try file.write($0) } } catch {
                    throw OutputError(file: path, message: "cannot save a fetched page: \(error)")
                }
                pending.removeAll(keepingCapacity: true)
            }
            for try await chunk in body {
                saved += chunk.readableBytes
                guard saved <= limit else { throw NIOTooManyBytesError(maxBytes: limit) }
                chunk.withUnsafeReadableBytes { pending.append(contentsOf: $0) }
                if pending.count >= 1 << 20 { try flush() }
            }
            try flush()
            return saved
        }
    }

    /// A multi-path `PATCH` of `body` at `location` with `print=silent` (the answer would repeat the body).
    public func patch(_ location: DatabaseURL, body: [UInt8]) async throws {
        _ = try await send(.PATCH, location, [], query: [("print", "silent")], body: body)
    }

    /// `PUT` of `body` at `location + relative` (the rules, `/.settings/rules.json`): the answer.
    public func put(_ location: DatabaseURL, _ relative: [String] = [], body: [UInt8]) async throws -> [UInt8] {
        try await send(.PUT, location, relative, query: [], body: body)
    }

    private func send(_ method: HTTPMethod, _ location: DatabaseURL, _ relative: [String], query: [(String, String)], body: [UInt8]?)
        async throws -> [UInt8]
    {
        let limit = maxResponseBytes
        return try await send(method, location, relative, query: query, body: body) { Array(buffer: try await $0.collect(upTo: limit)) }
    }

    /// The request, tried as the retry policy says, with `receive` reading a successful answer's body;
    /// a refusal is a `DatabaseRequestError` with the database's message.
    private func send<T>(
        _ method: HTTPMethod, _ location: DatabaseURL, _ relative: [String], query: [(String, String)], body: [UInt8]?,
        receive: (HTTPClientResponse.Body) async throws -> T
    ) async throws -> T {
        let shown = "\(method.rawValue) \(location.restURL(relative, query: query))"
        do {
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
                let response = try await http.execute(request, deadline: .distantFuture)
                let status = Int(response.status.code)
                if (200..<300).contains(status) { return try await receive(response.body) }
                // The REST API's errors are `{"error": "message"}`.
                let body = Array(buffer: try await response.body.collect(upTo: maxResponseBytes))
                let message = (try? JSONReader(bytes: body).readValue().objectValue?["error"]?.stringValue) ?? nil
                throw HTTPServiceError(
                    status: status, code: nil, message: message ?? (String(validating: body.prefix(300), as: UTF8.self) ?? ""),
                    request: shown)
            }
        } catch let error as HTTPServiceError {
            throw Self.error(status: error.status, message: error.message, request: shown)
        } catch let error as OutputError {
            throw error
        } catch {
            throw DatabaseRequestError(kind: .unavailable, status: nil, message: "\(error)", request: shown)
        }
    }

    /// The error for an answer that is not a success: the documented size messages, credentials, or else.
    static func error(status: Int, message text: String, request: String) -> DatabaseRequestError {
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
