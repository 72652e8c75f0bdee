import JSONStream

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// An anonymous temporary file: written first, then read back from the start; unlinked on creation,
/// so it disappears with the process whatever happens.
final class TemporaryFile: JSONByteSink, JSONByteSource, PositionalByteSource {
    private let fd: Int32
    private var readOffset: Int64 = 0
    private(set) var size: Int64 = 0

    init(directory: String? = nil) throws {
        guard let d = UniqueFile.anonymous(in: directory) else {
            throw OutputError(
                file: directory ?? UniqueFile.temporaryDirectory,
                message: "cannot create a temporary file: \(String(cString: strerror(errno)))")
        }
        fd = d
    }

    deinit { close(fd) }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        var done = 0
        while done < bytes.count {
            let n = pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(size))
            if n < 0 {
                if errno == EINTR { continue }
                throw OutputError(file: "temporary file", message: "cannot write: \(String(cString: strerror(errno)))")
            }
            done += n
            size += Int64(n)
        }
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let n = try read(at: readOffset, into: buffer)
        readOffset += Int64(n)
        return n
    }

    func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        try Self.readRetrying(fd, at: offset, into: buffer, name: "temporary file")
    }

    /// A copy of what `file` reads (decompressed, unless it was opened otherwise), to be read again
    /// or at any offset.
    static func spool(_ file: InputFile) throws -> TemporaryFile {
        let copy = try TemporaryFile()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let n = try file.read(into: buffer)
            if n == 0 { return copy }
            try copy.write(UnsafeRawBufferPointer(rebasing: buffer[..<n]))
        }
    }
}
