import ArchiveKit
import JSONStream

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// An input path, `-` (standard input) or the URL of an object in a bucket (`RemoteInput`),
/// decompressed on the fly when its magic bytes say gzip, zstd, xz or bzip2.
public final class InputFile: JSONByteSource {
    /// The name used in messages (`-` is shown as `<stdin>`).
    public let name: String
    /// Size of the file on disk, when known (for progress and ETA).
    public let size: Int64?
    /// The compression that was detected.
    public let compression: CompressionFilter
    /// Whether it can be read again at any offset (`ReadOnlyFile`): a local file, not compressed.
    public let isSeekable: Bool
    private let fd: Int32
    private let ownsDescriptor: Bool
    /// Ends the transfer of a remote input (`RemoteInput.finish`), once.
    private var remoteFinish: (@Sendable () throws -> Void)?
    private var prefix: [UInt8]
    private var decompressor: Decompressor?
    private var plainBytesRead: Int64 = 0

    /// Opens `path` for reading; fails with a clear `InputError` for a missing file or a directory.
    /// `decompressing: false` reads the bytes as they are whatever their magic bytes say (a sharded
    /// archive's part is zstd frames to copy, not to read).
    public init(path: String, decompressing: Bool = true) throws {
        var local = false
        if path == "-" {
            name = "<stdin>"
            fd = STDIN_FILENO
            ownsDescriptor = false
            size = nil
        } else if let remote = try RemoteInput.open(path) {
            name = path
            fd = remote.descriptor
            ownsDescriptor = true
            size = remote.size
            remoteFinish = remote.finish
        } else {
            name = path
            var st = stat()
            guard stat(path, &st) == 0 else { throw InputError(file: path, message: "cannot open: \(String(cString: strerror(errno)))") }
            if (st.st_mode & S_IFMT) == S_IFDIR { throw InputError(file: path, message: "is a directory, expected a file") }
            let d = open(path, O_RDONLY | O_CLOEXEC)
            guard d >= 0 else { throw InputError(file: path, message: "cannot open: \(String(cString: strerror(errno)))") }
            fd = d
            ownsDescriptor = true
            size = (st.st_mode & S_IFMT) == S_IFREG ? Int64(st.st_size) : nil
            local = size != nil
        }
        // Sniff the magic bytes; they are served again before the rest.
        prefix = try Self.readUpTo(CompressionFilter.magicLength, from: fd, name: name)
        compression = decompressing ? prefix.withUnsafeBytes { CompressionFilter.detect(magic: $0) } : .none
        isSeekable = local && compression == .none
        if compression != .none {
            do {
                // gzip through zlib, which checks every member's CRC-32 and length; libarchive does not.
                if compression == .gzip {
                    decompressor = .gzip(try GzipReader(fileDescriptor: fd, prefix: prefix, name: name))
                } else {
                    decompressor = .libarchive(try DecompressingReader(fileDescriptor: fd, prefix: prefix, name: name))
                }
            } catch {
                try finishRemote()
                throw InputError(file: name, message: error.message)
            }
            prefix = []
        }
    }

    /// Reads up to `count` bytes (fewer only at the end of the input).
    private static func readUpTo(_ count: Int, from fd: Int32, name: String) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var got = 0
        while got < count {
            let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + got, count - got) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { throw InputError(file: name, message: "cannot read: \(String(cString: strerror(errno)))") }
            if n == 0 { break }
            got += n
        }
        return Array(bytes[0..<got])
    }

    deinit {
        if ownsDescriptor { close(fd) }
        // A remote input left before its end: the transfer stops at the closed descriptor.
        try? remoteFinish?()
    }

    /// Ends a remote input's transfer and throws what stopped it early, once; nothing for a file.
    private func finishRemote() throws {
        guard let finish = remoteFinish else { return }
        remoteFinish = nil
        do {
            try finish()
        } catch let error as InputError {
            throw error
        } catch {
            throw InputError(file: name, message: "\(error)")
        }
    }

    /// Bytes consumed from the file so far (compressed bytes for compressed input), for progress.
    public var bytesRead: Int64 { decompressor?.compressedBytesRead ?? plainBytesRead }

    /// Called after every read with `bytesRead`.
    public var onRead: ((Int64) -> Void)?

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let n = try readBytes(into: buffer)
        onRead?(bytesRead)
        return n
    }

    private func readBytes(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        if let decompressor {
            let n: Int
            do {
                n = try decompressor.read(into: buffer)
            } catch {
                // A transfer that ended early makes the stream look truncated: say why it ended.
                try finishRemote()
                throw InputError(file: name, message: error.message)
            }
            if n == 0 { try finishRemote() }
            return n
        }
        if !prefix.isEmpty {
            let n = min(prefix.count, buffer.count)
            prefix.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: n) }
            prefix.removeFirst(n)
            plainBytesRead += Int64(n)
            return n
        }
        while true {
            let n = Glibc.read(fd, buffer.baseAddress!, buffer.count)
            if n >= 0 {
                if n == 0 { try finishRemote() }
                plainBytesRead += Int64(n)
                return n
            }
            if errno == EINTR { continue }
            throw InputError(file: name, message: "cannot read: \(String(cString: strerror(errno)))")
        }
    }
}

/// The reader that undoes the input's compression.
private enum Decompressor {
    case gzip(GzipReader)
    case libarchive(DecompressingReader)

    var compressedBytesRead: Int64 {
        switch self {
        case .gzip(let reader): reader.compressedBytesRead
        case .libarchive(let reader): reader.compressedBytesRead
        }
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws(ArchiveError) -> Int {
        switch self {
        case .gzip(let reader): try reader.read(into: buffer)
        case .libarchive(let reader): try reader.read(into: buffer)
        }
    }
}
