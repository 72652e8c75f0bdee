#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Bytes that can be read at any offset: a plain file, a spooled copy of standard input.
package protocol PositionalByteSource: AnyObject {
    /// Fills up to `buffer.count` bytes from `offset` and returns how many; 0 past the end.
    func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int
}

extension PositionalByteSource {
    /// `pread` retried on `EINTR`; errors name the file.
    package static func readRetrying(_ fd: Int32, at offset: Int64, into buffer: UnsafeMutableRawBufferPointer, name: String) throws -> Int
    {
        while true {
            let n = pread(fd, buffer.baseAddress!, buffer.count, off_t(offset))
            if n >= 0 { return n }
            if errno != EINTR { throw InputError(file: name, message: "cannot read: \(String(cString: strerror(errno)))") }
        }
    }

    /// A sequential reader of the bytes from `offset` on (up to `end`, else to the end), for `JSONReader`.
    package func stream(from offset: Int64 = 0, to end: Int64 = .max) -> PositionalStream { PositionalStream(self, from: offset, to: end) }
}

/// A plain (uncompressed) regular file opened for reads at any offset.
package final class ReadOnlyFile: PositionalByteSource {
    package let path: String
    private let fd: Int32

    package init(path: String) throws {
        let d = open(path, O_RDONLY | O_CLOEXEC)
        guard d >= 0 else { throw InputError(file: path, message: "cannot open: \(String(cString: strerror(errno)))") }
        self.path = path
        fd = d
    }

    deinit { close(fd) }

    package func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        try Self.readRetrying(fd, at: offset, into: buffer, name: path)
    }
}

/// Reads a `PositionalByteSource` front to back from an offset, up to an end offset.
package final class PositionalStream: JSONByteSource {
    private let file: PositionalByteSource
    private var offset: Int64
    private let end: Int64

    package init(_ file: PositionalByteSource, from offset: Int64, to end: Int64 = .max) {
        self.file = file
        self.offset = offset
        self.end = end
    }

    package func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let room = Int(min(Int64(buffer.count), end - offset))
        guard room > 0 else { return 0 }
        let n = try file.read(at: offset, into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<room]))
        offset += Int64(n)
        return n
    }
}
