/// A response a cloud service answered with an error status, with the service's own error code and
/// message (S3's `<Code>`/`<Message>`, Google's `error.status`/`error.message`), for one-line reports.
public struct HTTPServiceError: Error, CustomStringConvertible, Sendable {
    /// The HTTP status (403, 404, 503...).
    public let status: Int
    /// The service's error code (`SignatureDoesNotMatch`, `SlowDown`, `NoSuchBucket`), or `nil` when the
    /// body had none.
    public let code: String?
    /// The service's message, or the status's reason phrase.
    public let message: String
    /// The request's method and URL without its query (which may hold a signature or a token).
    public let request: String

    public init(status: Int, code: String?, message: String, request: String) {
        self.status = status
        self.code = code
        self.message = message
        self.request = request
    }

    public var description: String {
        "\(request): HTTP \(status)\(code.map { " \($0)" } ?? ""): \(message)"
    }
}
