import CArchive

/// A libarchive failure: the C call that failed, its status, errno and libarchive's message.
public struct ArchiveError: Error, CustomStringConvertible, Sendable {
    public let call: String
    public let status: Int32
    public let errno: Int32
    public let message: String

    public init(call: String, status: Int32, errno: Int32, message: String) {
        self.call = call
        self.status = status
        self.errno = errno
        self.message = message
    }

    /// Reads the error of `archive` right after `call` returned `status` (the message is sticky, so
    /// it is only read after a failure).
    init(_ archive: OpaquePointer?, call: String, status: Int32) {
        self.call = call
        self.status = status
        self.errno = archive.map { archive_errno($0) } ?? 0
        self.message = archive.flatMap { archive_error_string($0).map { String(cString: $0) } } ?? "unknown libarchive error"
    }

    public var description: String { message }
}
