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
/// Small appends are gathered in memory and written in large blocks.
final class SpillFile {
    private let fd: Int32
    /// Bytes appended so far; those past `written` are still in `pending`.
    private(set) var size: Int64 = 0
    private var written: Int64 = 0
    private let pending = ByteBuffer(capacity: SpillFile.blockSize)
    private static let blockSize = 1 << 18

    /// Creates the file in `directory` (default: `$TMPDIR` or `/tmp`).
    init(directory: String?) throws {
        guard let fd = UniqueFile.anonymous(in: directory) else {
            throw SpillError(
                "cannot create a temporary file in \(directory ?? UniqueFile.temporaryDirectory): \(String(cString: strerror(errno)))")
        }
        self.fd = fd
    }

    deinit { close(fd) }

    /// Appends bytes and returns the offset they were written at.
    @discardableResult
    func append(_ bytes: UnsafeRawBufferPointer) throws -> Int64 {
        let at = size
        if pending.count + bytes.count > Self.blockSize { try writePending() }
        if bytes.count >= Self.blockSize {
            try write(bytes, at: at)
            written += Int64(bytes.count)
        } else {
            pending.append(bytes)
        }
        size += Int64(bytes.count)
        return at
    }

    private func writePending() throws {
        guard pending.count > 0 else { return }
        try write(pending.bytes(0, pending.count), at: written)
        written += Int64(pending.count)
        pending.count = 0
    }

    /// Writes `bytes` at `at`, at most a block per call (one huge write stalls much longer in the
    /// kernel's dirty-page throttling than the same bytes in blocks).
    private func write(_ bytes: UnsafeRawBufferPointer, at: Int64) throws {
        var done = 0
        while done < bytes.count {
            let n = pwrite(fd, bytes.baseAddress! + done, min(bytes.count - done, Self.blockSize), off_t(at) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                throw SpillError("cannot write a temporary file: \(String(cString: strerror(errno)))")
            }
            done += n
        }
    }

    /// Reads exactly `buffer.count` bytes at `offset`.
    func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws {
        if offset + Int64(buffer.count) > written { try writePending() }
        var done = 0
        while done < buffer.count {
            let n = pread(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                throw SpillError("cannot read a temporary file: \(n < 0 ? String(cString: strerror(errno)) : "short read")")
            }
            done += n
        }
    }
}

/// A failure of temporary storage (disk full, unwritable directory).
public struct SpillError: Error, CustomStringConvertible, Sendable {
    public let description: String
    init(_ message: String) { description = message }
}
