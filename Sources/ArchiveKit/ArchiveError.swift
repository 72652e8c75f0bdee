import CArchive

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A failure in the archive layer: the file it concerns, a message for people, and the call, status and errno behind it.
public struct ArchiveError: Error, CustomStringConvertible, Sendable {
    /// The file or stream the error concerns, as the caller named it; `nil` when there is none.
    public let name: String?
    /// The libarchive function or system call that failed.
    public let call: String
    /// The libarchive status the call returned (`ARCHIVE_FATAL`, ...).
    public let status: Int32
    /// The errno behind the failure; 0 or `ARCHIVE_ERRNO_MISC` when there is none.
    public let errno: Int32
    /// What went wrong, worded for people, without the name.
    public let message: String

    /// Creates an error from its parts.
    public init(name: String? = nil, call: String, status: Int32, errno: Int32, message: String) {
        self.name = name
        self.call = call
        self.status = status
        self.errno = errno
        self.message = message
    }

    /// Reads the error of `archive` right after `call` returned `status` (the message is sticky, so
    /// it is only read after a failure).
    init(_ archive: OpaquePointer, name: String?, call: String, status: Int32) {
        self.init(
            name: name, call: call, status: status, errno: archive_errno(archive),
            message: archive_error_string(archive).map { String(cString: $0) } ?? "unknown libarchive error")
    }

    /// A failed system call on the caller's descriptor: `action` is what failed ("cannot read"), errno says why.
    init(name: String, systemCall: String, errno: Int32, action: String) {
        self.init(
            name: name, call: systemCall, status: ARCHIVE_FATAL, errno: errno,
            message: "\(action): \(String(cString: strerror(errno)))")
    }

    /// The message, prefixed with the name when there is one: `input.json.gz: truncated gzip stream`.
    public var description: String { name.map { "\($0): \(message)" } ?? message }
}
