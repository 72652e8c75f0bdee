import ArchiveKit
import CPlatform
import JSONStream

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// An output path or `-` (standard output), written to a temporary file beside the target and
/// renamed over it only by `commit()`; compressed when the name ends in `.gz`, `.zst`, `.xz` or `.bz2`
/// (`.zst` in zstd's seekable format when asked: `SeekableZstdWriter`).
/// A URL is written through the `RemoteOutputStream` its opener gives (`RemoteOutput`): sent in
/// parts while it is written, it appears only when `commit()` publishes it. An output that needs
/// positional writes (`seekable`) goes to a temporary file in `TMPDIR` first and is sent in `prepare()`.
///
/// Until `commit()`, an existing file at the path is untouched; `abort()` (or deinit without
/// commit) removes the temporary file, so a failed run never leaves a partial output. Written bytes
/// go to disk in the background as the file grows (every `writebackInterval` bytes), so the `fsync`
/// before the rename waits for the last few megabytes, not for the whole file.
public final class OutputFile: JSONByteSink {
    public let path: String
    public let compression: CompressionFilter
    /// The file written, or -1 for a URL sent as it is written.
    private let fd: Int32
    private let temporaryPath: String?
    /// Where the (compressed) bytes go: the file, or the remote stream.
    private let raw: ArchiveSink
    /// The upload of a URL.
    private let remote: RemoteOutputStream?
    private var compressor: (any StreamCompressor)?
    private var finished = false
    /// Compression finished and the temporary file synced and closed (`prepare()`).
    private var prepared = false
    /// Bytes handed to `write` (before compression).
    public private(set) var bytesWritten: Int64 = 0
    /// The file's size once `prepare()` finished it (compressed when the output is); nil for standard
    /// output.
    public private(set) var fileSize: Int64?
    /// How many bytes of the file are asked to go to disk at a time.
    static let writebackInterval: Int64 = 8 << 20
    /// The file offset up to which writeback has been started.
    private var writebackOffset: Int64 = 0
    /// `bytesWritten` when the file's size was last looked at.
    private var writebackChecked: Int64 = 0

    /// Creates the temporary file (or opens the upload); fails with an `OutputError` when the directory
    /// is not writable. `seekable` is for callers of `skip`, `write(_:at:)` and `append(contentsOf:length:)`.
    /// `seekableZstd` writes a zstd output in the seekable format, which sharded runs can read from
    /// any offset; a `UsageError` for an output that is not zstd.
    public init(
        path: String, compression: CompressionFilter? = nil, level: Int? = nil, threads: Int? = nil, seekable: Bool = false,
        seekableZstd: Bool = false
    ) throws {
        if seekableZstd, (compression ?? (path == "-" ? .none : CompressionFilter.forPath(path))) != .zstd {
            throw UsageError(
                "--seekable writes zstd in its seekable format, but \(path == "-" ? "standard output" : path) would not be zstd: "
                    + "give an output whose name ends in .zst")
        }
        self.path = path
        if path == "-" {
            fd = STDOUT_FILENO
            temporaryPath = nil
            remote = nil
            raw = DescriptorSink(fileDescriptor: fd, name: path)
            self.compression = compression ?? .none
        } else if let stream = try RemoteOutput.stream(for: path) {
            remote = stream
            self.compression = compression ?? CompressionFilter.forPath(path)
            if seekable {
                let dir = getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
                guard let (d, temporary) = UniqueFile.create(prefix: "\(dir)/dumpkit-output-\(getpid())-") else {
                    throw OutputError(file: path, message: "cannot create a temporary file in \(dir): \(String(cString: strerror(errno)))")
                }
                fd = d
                temporaryPath = temporary
                raw = DescriptorSink(fileDescriptor: fd, name: path)
            } else {
                fd = -1
                temporaryPath = nil
                raw = StreamSink(stream)
            }
        } else {
            var st = stat()
            if stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR {
                throw OutputError(file: path, message: "is a directory, expected a file name")
            }
            let dir = OutputFile.directory(of: path)
            let base = path.split(separator: "/").last.map(String.init) ?? path
            OutputFile.removeAbandonedTemporaryFiles(in: dir, base: base)
            guard let (d, temporary) = UniqueFile.create(prefix: "\(dir)/.\(base).dumpkit-\(getpid())-") else {
                throw OutputError(file: path, message: "cannot create a file in \(dir): \(String(cString: strerror(errno)))")
            }
            fd = d
            temporaryPath = temporary
            remote = nil
            raw = DescriptorSink(fileDescriptor: fd, name: path)
            self.compression = compression ?? CompressionFilter.forPath(path)
        }
        if self.compression != .none {
            do {
                compressor =
                    seekableZstd
                    ? try SeekableZstdWriter(sink: raw, level: level, threads: threads, name: path)
                    : try CompressingWriter(sink: raw, filter: self.compression, level: level, threads: threads, name: path)
            } catch {
                abort()
                throw OutputError(file: path, message: error.message)
            }
        }
    }

    deinit { if !finished { abort() } }

    /// Removes temporary files of earlier runs for the same output (`.<base>.dumpkit-<pid>-XXXXXX`)
    /// whose process no longer exists: what a run killed with `kill -9` or a power cut leaves behind.
    /// Files of a live process, and names without a process id, are left alone.
    static func removeAbandonedTemporaryFiles(in dir: String, base: String) {
        let prefix = ".\(base).dumpkit-"
        guard let stream = opendir(dir) else { return }
        defer { closedir(stream) }
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard name.hasPrefix(prefix) else { continue }
            let rest = name.dropFirst(prefix.count).split(separator: "-", maxSplits: 1)
            guard rest.count == 2, rest[1].count == 6, let pid = pid_t(rest[0]), pid > 0 else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH { unlink(dir + "/" + name) }
        }
    }

    /// The folder part of a path (`.` for a bare name).
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        bytesWritten += Int64(bytes.count)
        defer { if bytesWritten - writebackChecked >= Self.writebackInterval { startWriteback() } }
        do {
            if let compressor { try compressor.write(bytes) } else { try raw.write(bytes) }
        } catch let error as ArchiveError {
            throw OutputError(file: path, message: error.message)
        }
    }

    /// Moves on `count` bytes without writing them: they stay a hole, costing no disk, until
    /// `write(_:at:)` fills them. Only for an uncompressed, `seekable` file (not standard output).
    public func skip(_ count: Int64) throws {
        precondition(compressor == nil && temporaryPath != nil, "skip needs an uncompressed, seekable file")
        guard lseek(fd, off_t(count), SEEK_CUR) >= 0 else {
            throw OutputError(file: path, message: "cannot seek: \(String(cString: strerror(errno)))")
        }
    }

    /// Writes `bytes` at `offset`, leaving the position of `write` where it is. Only for an uncompressed,
    /// `seekable` file (not standard output).
    public func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws {
        precondition(compressor == nil && temporaryPath != nil, "a positional write needs an uncompressed, seekable file")
        var done = 0
        while done < bytes.count {
            let n = pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                throw OutputError(file: path, message: "cannot write: \(String(cString: strerror(errno)))")
            }
            done += n
        }
    }

    /// Appends the bytes of the file at `source` (all `length` of them): with `copy_file_range`, so
    /// they go file to file in the kernel (or as shared extents where the file system can), with
    /// plain reads and writes where it cannot. Only for an uncompressed, `seekable` file (not standard output).
    public func append(contentsOf source: String, length: Int64) throws {
        precondition(compressor == nil && temporaryPath != nil, "appending a file needs an uncompressed, seekable file")
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw InputError(file: source, message: "cannot open: \(String(cString: strerror(errno)))") }
        defer { close(input) }
        var done: Int64 = 0
        var kernelCopies = true
        var buffer: [UInt8] = []
        while done < length {
            let want = Int(min(length - done, 1 << 30))
            let n: Int
            if kernelCopies {
                n = dk_copy_file_range(input, fd, want)
                if n < 0 && [EXDEV, ENOSYS, EINVAL, EOPNOTSUPP].contains(errno) {
                    kernelCopies = false
                    continue
                }
            } else {
                if buffer.isEmpty { buffer = [UInt8](repeating: 0, count: 1 << 20) }
                n = buffer.withUnsafeMutableBytes { Glibc.read(input, $0.baseAddress!, min(want, $0.count)) }
            }
            if n < 0 {
                if errno == EINTR { continue }
                throw OutputError(file: path, message: "cannot copy \(source) into it: \(String(cString: strerror(errno)))")
            }
            if n == 0 { throw InputError(file: source, message: "ends at byte \(done), expected \(length) bytes") }
            if kernelCopies {
                bytesWritten += Int64(n)
            } else {
                try buffer.withUnsafeBytes { try write(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
            }
            done += Int64(n)
        }
        if bytesWritten - writebackChecked >= Self.writebackInterval { startWriteback() }
    }

    /// Starts writing what the file holds beyond `writebackOffset` to disk, without waiting.
    private func startWriteback() {
        writebackChecked = bytesWritten
        guard temporaryPath != nil, remote == nil else { return }
        let end = Int64(lseek(fd, 0, SEEK_CUR))
        guard end - writebackOffset >= Self.writebackInterval else { return }
        // A hint only: where the kernel refuses, the fsync in commit() still writes everything.
        _ = dk_start_writeback(fd, writebackOffset, end - writebackOffset)
        writebackOffset = end
    }

    /// Writes `value` as pretty JSON (a report) to `path`, atomically.
    public static func writeJSON(_ value: JSONValue, to path: String) throws {
        let file = try OutputFile(path: path)
        do {
            let w = JSONWriter(sink: file, options: .init(pretty: true))
            try w.value(value)
            try w.raw("\n")
            try w.flush()
            try file.commit()
        } catch {
            file.abort()
            throw error
        }
    }

    /// Finishes compression, syncs, and renames the temporary file over `path` (`prepare()`, then
    /// `publish()`).
    public func commit() throws {
        try prepare()
        try publish()
    }

    /// Finishes compression and syncs the temporary file, so that `publish()` only renames: a
    /// command with several outputs prepares them all, then publishes them in the order it wants. A
    /// URL's bytes are all sent here, so that `publish()` only makes the object appear.
    public func prepare() throws {
        guard !finished, !prepared else { return }
        do {
            try compressor?.finish()
        } catch {
            abort()
            throw outputError(error)
        }
        prepared = true
        if let remote {
            do {
                if temporaryPath != nil { try sendTemporaryFile(to: remote) }
                try remote.finish()
            } catch {
                abort()
                throw outputError(error)
            }
            if let sent = (raw as? StreamSink)?.count { fileSize = sent }
            return
        }
        guard let temporaryPath else { return }
        var st = stat()
        if fstat(fd, &st) == 0 { fileSize = Int64(st.st_size) }
        if fsync(fd) != 0 || close(fd) != 0 {
            let message = String(cString: strerror(errno))
            finished = true
            unlink(temporaryPath)
            throw OutputError(file: path, message: "cannot write: \(message)")
        }
        // mkstemp creates 0600; give the output the usual permissions.
        let mask = umask(0)
        umask(mask)
        chmod(temporaryPath, 0o666 & ~mask)
    }

    /// Sends a seekable URL output's finished temporary file through the stream, and removes the file.
    private func sendTemporaryFile(to remote: RemoteOutputStream) throws {
        defer {
            close(fd)
            unlink(temporaryPath!)
        }
        var st = stat()
        guard fstat(fd, &st) == 0, lseek(fd, 0, SEEK_SET) == 0 else {
            throw OutputError(file: path, message: "cannot read the finished output back: \(String(cString: strerror(errno)))")
        }
        fileSize = Int64(st.st_size)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let n = read(fd, buffer.baseAddress!, buffer.count)
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else {
                throw OutputError(file: path, message: "cannot read the finished output back: \(String(cString: strerror(errno)))")
            }
            if n == 0 { return }
            try remote.write(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
        }
    }

    /// Renames the prepared temporary file over `path` and syncs its folder, so that the rename
    /// itself survives a power cut; or makes a URL's object appear.
    public func publish() throws {
        try prepare()
        guard !finished else { return }
        finished = true
        if let remote {
            do { try remote.publish() } catch { throw outputError(error) }
            return
        }
        guard let temporaryPath else { return }
        guard rename(temporaryPath, path) == 0 else {
            let message = String(cString: strerror(errno))
            unlink(temporaryPath)
            throw OutputError(file: path, message: "cannot replace the file: \(message)")
        }
        try Self.syncDirectory(Self.directory(of: path), for: path)
    }

    /// After `commit()` of a URL: the ETag the store gave the object (`RemoteOutputStream.storedETag`).
    public func storedETag() throws -> String? { try remote?.storedETag() }

    /// An `ArchiveError` of the compressor or a file as this output's `OutputError`; other errors (a
    /// store's) as they are.
    private func outputError(_ error: any Error) -> any Error {
        (error as? ArchiveError).map { OutputError(file: path, message: $0.message) } ?? error
    }

    /// `fsync` of a folder, after a rename in it. File systems that cannot sync folders say EINVAL;
    /// only a failed write (EIO and the like) is an error.
    static func syncDirectory(_ dir: String, for path: String) throws {
        let d = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard d >= 0 else { return }
        defer { close(d) }
        if fsync(d) != 0 && errno != EINVAL && errno != EROFS {
            throw OutputError(file: path, message: "renamed, but its folder cannot be synced: \(String(cString: strerror(errno)))")
        }
    }

    /// Discards the temporary file (or the upload); the target is left as it was.
    public func abort() {
        guard !finished else { return }
        finished = true
        compressor = nil
        remote?.abort()
        if let temporaryPath {
            if !prepared { close(fd) }
            unlink(temporaryPath)
        }
    }
}

/// An output that cannot be created or written.
public struct OutputError: Error, CustomStringConvertible, Sendable {
    public let file: String
    public let message: String
    public init(file: String, message: String) {
        self.file = file
        self.message = message
    }
    public var description: String { "\(file): \(message)" }
}

/// What compresses an output's bytes on their way to the file.
protocol StreamCompressor: AnyObject {
    func write(_ bytes: UnsafeRawBufferPointer) throws
    /// Writes what is left; the sink stays open.
    func finish() throws
}

extension CompressingWriter: StreamCompressor {}
extension SeekableZstdWriter: StreamCompressor {}

/// Hands a URL output's bytes to its stream and counts them: the object's size.
private final class StreamSink: ArchiveSink {
    let stream: RemoteOutputStream
    private(set) var count: Int64 = 0

    init(_ stream: RemoteOutputStream) { self.stream = stream }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        try stream.write(bytes)
        count += Int64(bytes.count)
    }
}
