import CArchive

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads a tar or zip archive entry by entry through libarchive, whatever compression it has.
///
/// Tar in every dialect (pax, ustar, GNU with long names, v7) and zip are recognised, compressed or not;
/// an empty file is an archive without entries. `nextEntry()` moves to the next header (skipping the
/// data of the previous entry that was not read); `read(into:)` yields the data of the current entry.
/// Errors name the archive and the entry they happened in: a cut-off archive or a corrupt compressed
/// frame fails instead of ending early.
public final class ArchiveReader {
    /// The archive's name as given (`<stdin>` for standard input), used in errors.
    public let name: String
    /// The container format, known once the first header has been read.
    public private(set) var format: ArchiveFormat?
    /// libarchive's name for the format read (`"GNU tar format"`, `"ZIP 2.0 (deflation)"`), for people.
    public private(set) var formatDescription: String?
    /// The compression of the whole archive (tar); `.none` for zip, whose entries carry their own.
    public private(set) var compression: CompressionFilter = .none
    /// Size of the archive file when it is a regular file (for progress).
    public let fileSize: Int64?
    /// Bytes consumed from the archive file so far.
    public var compressedBytesRead: Int64 { source.readAhead?.compressedBytesRead ?? archive_filter_bytes(archive, -1) }
    /// Entry data delivered by `read(into:)` so far, over all entries.
    public private(set) var dataBytesRead: Int64 = 0
    /// The entry whose data `read(into:)` delivers.
    public private(set) var currentEntry: ArchiveEntry?

    private let archive: OpaquePointer
    private let source: FileSource
    /// Set once the end was read: libarchive must not be asked for another header then.
    private var atEnd = false

    /// Opens the archive at `path` (`-` for standard input) and checks that it is one.
    public convenience init(path: String) throws(ArchiveError) {
        if path == "-" {
            try self.init(descriptor: STDIN_FILENO, name: "<stdin>", owned: false)
        } else {
            let descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { throw ArchiveError(name: path, systemCall: "open", errno: errno, action: "cannot open") }
            try self.init(descriptor: descriptor, name: path, owned: true)
        }
    }

    /// Reads the archive on `descriptor` (a file, a pipe, a socket), called `name` in messages, and
    /// closes the descriptor at the end when `owned`.
    public init(descriptor: Int32, name: String, owned: Bool) throws(ArchiveError) {
        self.name = name
        var status = stat()
        let isDirectory = fstat(descriptor, &status) == 0 && (status.st_mode & S_IFMT) == S_IFDIR
        let isFile = (status.st_mode & S_IFMT) == S_IFREG
        fileSize = isFile ? Int64(status.st_size) : nil
        // The first bytes say whether the archive is compressed; a pipe cannot give them back, so
        // they are served again before the rest.
        var magic = [UInt8](repeating: 0, count: CompressionFilter.magicLength)
        let sniffed = isDirectory ? 0 : magic.withUnsafeMutableBytes { Self.sniff(descriptor, into: $0, seekable: isFile) }
        magic.removeLast(magic.count - max(0, sniffed))
        let prefix = isFile ? [] : magic
        let filter = magic.withUnsafeBytes { CompressionFilter.detect(magic: $0) }
        // A compressed archive is decompressed on a thread of its own, ahead of the entries.
        let readAhead = filter == .none ? nil : ReadAheadDecompressor(fileDescriptor: descriptor, prefix: prefix, name: name)
        source = FileSource(descriptor: descriptor, owned: owned, prefix: readAhead == nil ? prefix : [], readAhead: readAhead)
        guard !isDirectory else {
            throw ArchiveError(
                name: name, call: "open", status: ARCHIVE_FATAL, errno: EISDIR, message: "is a directory, expected an archive")
        }
        guard let archive = archive_read_new() else {
            throw ArchiveError(name: name, call: "archive_read_new", status: ARCHIVE_FATAL, errno: ENOMEM, message: "out of memory")
        }
        self.archive = archive
        for (status, call) in [
            (archive_read_support_filter_all(archive), "archive_read_support_filter_all"),
            (archive_read_support_format_tar(archive), "archive_read_support_format_tar"),
            (archive_read_support_format_gnutar(archive), "archive_read_support_format_gnutar"),
            (archive_read_support_format_zip(archive), "archive_read_support_format_zip"),
            (archive_read_support_format_empty(archive), "archive_read_support_format_empty"),
        ] where status != ARCHIVE_OK {
            throw ArchiveError(archive, name: name, call: call, status: status)
        }
        let client = Unmanaged.passUnretained(source).toOpaque()
        if isFile && readAhead == nil {
            // Zip keeps its directory at the end; with seeking, libarchive reads it from there.
            archive_read_set_seek_callback(archive) { _, client, offset, whence in
                Unmanaged<FileSource>.fromOpaque(client!).takeUnretainedValue().seek(offset, whence)
            }
        }
        let opened = archive_read_open(
            archive, client, nil,
            { _, client, block in Unmanaged<FileSource>.fromOpaque(client!).takeUnretainedValue().next(block!) },
            nil)
        if opened != ARCHIVE_OK { throw error(call: "archive_read_open", status: opened, entry: nil) }
    }

    deinit { archive_read_free(archive) }

    /// Reads up to `buffer.count` leading bytes: with `pread` from a file (its position stays at 0),
    /// with `read` from a pipe. Returns how many, or -1.
    private static func sniff(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, seekable: Bool) -> Int {
        var count = 0
        while count < buffer.count {
            let n =
                seekable
                ? pread(descriptor, buffer.baseAddress! + count, buffer.count - count, off_t(count))
                : systemRead(descriptor, buffer.baseAddress! + count, buffer.count - count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            count += n
        }
        return count
    }

    /// Moves to the next entry and returns it; `nil` at the end of the archive (and after it).
    public func nextEntry() throws(ArchiveError) -> ArchiveEntry? {
        let previous = currentEntry?.path
        currentEntry = nil
        if atEnd { return nil }
        var handle: OpaquePointer?
        var status: Int32
        repeat {
            status = UTF8Locale.run { archive_read_next_header(archive, &handle) }
        } while status == ARCHIVE_RETRY
        if format == nil { identifyFormat() }
        switch status {
        case ARCHIVE_EOF:
            atEnd = true
            return nil
        case ARCHIVE_OK, ARCHIVE_WARN:
            guard let handle else { return nil }
            let entry = try UTF8Locale.run { () throws(ArchiveError) in try makeEntry(handle) }
            currentEntry = entry
            return entry
        default:
            // A failure here happened while skipping the rest of the previous entry or reading the
            // next header: name the previous entry so people know where the archive broke.
            throw error(call: "archive_read_next_header", status: status, entry: previous.map { "after \($0)" })
        }
    }

    /// Fills up to `buffer.count` bytes of the current entry's data; returns 0 at the end of the entry.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(ArchiveError) -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0, let entry = currentEntry else { return 0 }
        let count = archive_read_data(archive, base, buffer.count)
        // A warning here is a real failure too (zip's "bad CRC").
        guard count >= 0 else { throw error(call: "archive_read_data", status: Int32(count), entry: entry.path) }
        dataBytesRead += Int64(count)
        return count
    }

    /// Converts libarchive's entry into an `ArchiveEntry`.
    private func makeEntry(_ handle: OpaquePointer) throws(ArchiveError) -> ArchiveEntry {
        guard let rawPath = archive_entry_pathname(handle) ?? archive_entry_pathname_utf8(handle) else {
            throw ArchiveError(
                name: name, call: "archive_entry_pathname", status: ARCHIVE_FAILED, errno: 0, message: "an entry has no path")
        }
        let path = String(decoding: UnsafeRawBufferPointer(start: rawPath, count: strlen(rawPath)), as: UTF8.self)
        let type = UInt32(archive_entry_filetype(handle))
        let kind: ArchiveEntry.Kind
        if let target = archive_entry_hardlink(handle) {
            kind = .hardLink(target: String(cString: target))
        } else {
            switch type {
            case dk_AE_IFREG: kind = .file
            case dk_AE_IFDIR: kind = .directory
            case dk_AE_IFLNK: kind = .symbolicLink(target: archive_entry_symlink(handle).map { String(cString: $0) } ?? "")
            case dk_AE_IFCHR: kind = .special("character device")
            case dk_AE_IFBLK: kind = .special("block device")
            case dk_AE_IFIFO: kind = .special("fifo")
            case dk_AE_IFSOCK: kind = .special("socket")
            default: kind = .special("entry of unknown type")
            }
        }
        var attributes: [ExtendedAttribute] = []
        var remaining = archive_entry_xattr_reset(handle)
        while remaining > 0 {
            remaining -= 1
            var attributeName: UnsafePointer<CChar>?
            var value: UnsafeRawPointer?
            var size = 0
            guard archive_entry_xattr_next(handle, &attributeName, &value, &size) == ARCHIVE_OK, let attributeName else { break }
            let bytes = value.map { Array(UnsafeRawBufferPointer(start: $0, count: size)) } ?? []
            attributes.append(ExtendedAttribute(name: String(cString: attributeName), value: bytes))
        }
        return ArchiveEntry(
            path: path, kind: kind, size: archive_entry_size_is_set(handle) != 0 ? archive_entry_size(handle) : 0,
            permissions: UInt32(archive_entry_perm(handle)) & 0o7777,
            modificationTime: archive_entry_mtime_is_set(handle) != 0
                ? Timestamp(seconds: Int64(archive_entry_mtime(handle)), nanoseconds: Int32(archive_entry_mtime_nsec(handle))) : nil,
            extendedAttributes: attributes)
    }

    /// Records the format and the outermost filter once libarchive chose them.
    private func identifyFormat() {
        let code = archive_format(archive)
        switch code & ARCHIVE_FORMAT_BASE_MASK {
        case ARCHIVE_FORMAT_TAR: format = .tar
        case ARCHIVE_FORMAT_ZIP: format = .zip
        default: break
        }
        formatDescription = archive_format_name(archive).map { String(cString: $0) }
        if let readAhead = source.readAhead {
            compression = readAhead.filter
            return
        }
        let filters = archive_filter_count(archive)
        // The last filter is the client reader itself.
        guard filters > 1 else { return }
        compression =
            switch archive_filter_code(archive, filters - 2) {
            case ARCHIVE_FILTER_GZIP: .gzip
            case ARCHIVE_FILTER_ZSTD: .zstd
            case ARCHIVE_FILTER_XZ: .xz
            case ARCHIVE_FILTER_BZIP2: .bzip2
            default: .none
            }
    }

    /// The error for a failed `call`: a read error of the file, or libarchive's report, prefixed with
    /// the entry it concerns.
    private func error(call: String, status: Int32, entry: String?) -> ArchiveError {
        if let failure = source.readAhead?.failure {
            return ArchiveError(
                name: name, call: failure.call, status: failure.status, errno: failure.errno,
                message: (entry.map { "\($0): " } ?? "") + failure.message)
        }
        if source.readErrno != 0 {
            return ArchiveError(
                name: name, call: "read", status: ARCHIVE_FATAL, errno: source.readErrno,
                message: (entry.map { "\($0): " } ?? "") + "cannot read: \(String(cString: strerror(source.readErrno)))")
        }
        var detail = archive_error_string(archive).map { String(cString: $0) } ?? "unknown libarchive error"
        if detail == "Unrecognized archive format" { detail = "not a tar or zip archive (\(detail))" }
        return ArchiveError(
            name: name, call: call, status: status, errno: archive_errno(archive),
            message: (entry.map { "\($0): " } ?? "") + detail)
    }
}

/// `read(2)`, for methods of types that have a `read` of their own.
private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}

/// The client side of libarchive's read and seek callbacks over a file descriptor: blocks read from it
/// after the bytes already sniffed, or the blocks of a `ReadAheadDecompressor`.
private final class FileSource {
    private static let blockSize = 1 << 20
    private let descriptor: Int32
    private let owned: Bool
    private var prefix: [UInt8]
    let readAhead: ReadAheadDecompressor?
    private let block = UnsafeMutableRawBufferPointer.allocate(byteCount: FileSource.blockSize, alignment: 16)
    /// The errno of a failed read; 0 while reads succeed.
    private(set) var readErrno: Int32 = 0

    init(descriptor: Int32, owned: Bool, prefix: [UInt8], readAhead: ReadAheadDecompressor?) {
        self.descriptor = descriptor
        self.owned = owned
        self.prefix = prefix
        self.readAhead = readAhead
    }

    deinit {
        // The decompressing thread reads the descriptor: stop it before closing.
        readAhead?.stop()
        block.deallocate()
        if owned { close(descriptor) }
    }

    /// Points `buffer` at the next block of the file and returns its size: 0 at the end, -1 on an error.
    func next(_ buffer: UnsafeMutablePointer<UnsafeRawPointer?>) -> Int {
        if let readAhead {
            guard let data = readAhead.next() else { return -1 }
            buffer.pointee = UnsafeRawPointer(data.baseAddress ?? UnsafeRawPointer(block.baseAddress!))
            return data.count
        }
        let count = prefix.count
        if count > 0 {
            prefix.withUnsafeBytes { block.copyMemory(from: $0) }
            prefix = []
        }
        var n: Int
        repeat {
            n = read(descriptor, block.baseAddress! + count, block.count - count)
        } while n < 0 && errno == EINTR
        if n < 0 {
            readErrno = errno
            return -1
        }
        buffer.pointee = UnsafeRawPointer(block.baseAddress)
        return count + n
    }

    /// Moves the file position as `lseek` does; returns the new position or `ARCHIVE_FATAL`.
    func seek(_ offset: Int64, _ whence: Int32) -> Int64 {
        let position = lseek(descriptor, off_t(offset), whence)
        return position < 0 ? Int64(ARCHIVE_FATAL) : Int64(position)
    }
}
