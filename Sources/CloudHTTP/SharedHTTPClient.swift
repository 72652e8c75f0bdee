import AsyncHTTPClient
import NIOCore

/// The one `HTTPClient` every cloud client of the process shares, so connections to a store are pooled
/// across commands, stores and threads, and nobody has to shut a client down before the process ends.
public enum SharedHTTPClient {
    /// Connections kept per host: enough for `--jobs 64` plus the listing and multipart requests beside it.
    public static let connectionsPerHost = 128

    /// The client: HTTP/1.1 and HTTP/2, no redirects (a store's redirect is an error to report, never a
    /// request to repeat elsewhere), no transparent decompression (objects are stored bytes, and their
    /// `Content-Encoding` is metadata), connect and read timeouts that `RetryPolicy` turns into retries.
    public static let client: HTTPClient = {
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(connect: .seconds(10), read: .seconds(60)),
            connectionPool: .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: connectionsPerHost),
            decompression: .disabled
        )
        // Reconnecting is `RetryPolicy`'s job: a refused connection fails at once instead of waiting out the connect timeout.
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()
}
