#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An anonymous, append-only temporary file for data that does not fit the memory budget.
///
/// The file is unlinked as soon as it is created, so nothing is left behind if the process dies.
final class SpillFile {
    private let fd: Int32
    private(set) var size: Int64 = 0

    /// Creates the file in `directory` (default: `$TMPDIR` or `/tmp`).
    init(directory: String?) throws {
        let dir = directory ?? (getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp")
        var template = Array((dir + "/dumpkit-spill-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw SpillError("cannot create a temporary file in \(dir): \(String(cString: strerror(errno)))") }
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        self.fd = fd
    }

    deinit { close(fd) }

    /// Appends bytes and returns the offset they were written at.
    @discardableResult
    func append(_ bytes: UnsafeRawBufferPointer) throws -> Int64 {
        let at = size
        var done = 0
        while done < bytes.count {
            let n = pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(at) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                throw SpillError("cannot write a temporary file: \(String(cString: strerror(errno)))")
            }
            done += n
        }
        size += Int64(bytes.count)
        return at
    }

    /// Reads exactly `buffer.count` bytes at `offset`.
    func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws {
        var done = 0
        while done < buffer.count {
            let n = pread(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw SpillError("cannot read a temporary file: \(n < 0 ? String(cString: strerror(errno)) : "short read")") }
            done += n
        }
    }
}

/// A failure of temporary storage (disk full, unwritable directory).
public struct SpillError: Error, CustomStringConvertible, Sendable {
    public let description: String
    init(_ message: String) { description = message }
}
