import CArchive

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where an `ArchiveWriter` sends the bytes of the archive (a file, a temporary file renamed on
/// success, standard output, memory in tests).
public protocol ArchiveSink: AnyObject {
    /// Writes all of `bytes` or throws.
    func write(_ bytes: UnsafeRawBufferPointer) throws
}

/// Writes to a file descriptor (not closed by it), every byte or an error naming `name`.
public final class DescriptorSink: ArchiveSink {
    public let fileDescriptor: Int32
    private let name: String

    public init(fileDescriptor: Int32, name: String) {
        self.fileDescriptor = fileDescriptor
        self.name = name
    }

    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        var done = 0
        while done < bytes.count {
            let n = Glibc.write(fileDescriptor, bytes.baseAddress! + done, bytes.count - done)
            if n < 0 {
                if errno == EINTR { continue }
                throw ArchiveError(name: name, systemCall: "write", errno: errno, action: "cannot write")
            }
            done += n
        }
    }
}

/// Writes a tar (POSIX pax) or zip archive, entry by entry, through libarchive.
///
/// Tar archives are pax with `SCHILY.xattr.*` records only (the form GNU tar and bsdtar both read),
/// compressed with any `CompressionFilter`; zip archives store or deflate each entry. Every entry is
/// written with owner and group 0 and no names, and no access or change time, so the same entries in
/// give the same bytes out. The writer checks that each entry gets exactly its declared size (libarchive
/// would silently pad a short one with zeros). Dropped without `finish()`, it leaves the archive
/// unterminated, so an interrupted run cannot pass for a complete archive.
public final class ArchiveWriter {
    /// The format being written.
    public let format: ArchiveFormat
    /// The compression of the whole archive (tar), or of each entry (zip: `.gzip` means deflate).
    public let compression: CompressionFilter
    /// Entries begun so far.
    public private(set) var entryCount = 0

    private let archive: OpaquePointer
    private let entry: OpaquePointer
    private let output: SinkBridge
    private let name: String
    private let unbuffered: Bool
    /// The path of the entry being written and the data bytes it still expects.
    private var current: (path: String, remaining: Int64)?
    private var finished = false

    /// Opens an archive on `sink` and writes nothing yet.
    ///
    /// `level` is the compression level (zstd from its negative fast levels to 22, gzip, xz and zip's
    /// deflate 0-9; `nil` for the default). `threads` (at least 1) is the number of zstd or xz worker
    /// threads; other compressions ignore it. Zip supports only `.none` (store) and `.gzip` (deflate).
    /// `unbuffered` hands every write of an uncompressed tar to the sink as it comes (no 10 KiB blocks), for
    /// a sink that compresses on its own and must see entry data apart from headers.
    /// `name` is used in errors. Errors from the sink are rethrown as they are; everything else is an
    /// `ArchiveError`.
    public init(
        sink: ArchiveSink, format: ArchiveFormat, compression: CompressionFilter, level: Int? = nil, threads: Int? = nil,
        unbuffered: Bool = false, name: String
    ) throws {
        guard let archive = archive_write_new(), let entry = archive_entry_new() else {
            throw ArchiveError(name: name, call: "archive_write_new", status: ARCHIVE_FATAL, errno: ENOMEM, message: "out of memory")
        }
        self.archive = archive
        self.entry = entry
        self.output = SinkBridge(sink: sink)
        self.name = name
        self.format = format
        self.compression = compression
        self.unbuffered = unbuffered
        try UTF8Locale.run { () throws(ArchiveError) in try configure(level: level, threads: threads, unbuffered: unbuffered) }
    }

    deinit {
        // Freeing a writer that is still open would close the archive cleanly and make a cut-off
        // output look complete; marking it failed first makes free skip that.
        if !finished { archive_write_fail(archive) }
        archive_write_free(archive)
        archive_entry_free(entry)
    }

    /// Sets the format, filter and options, and opens the archive.
    private func configure(level: Int?, threads: Int?, unbuffered: Bool) throws(ArchiveError) {
        switch format {
        case .tar:
            try check(archive_write_set_format_pax_restricted(archive), "archive_write_set_format_pax_restricted")
            // Only the SCHILY form of extended attributes: GNU tar warns about each LIBARCHIVE one.
            try check(archive_write_set_format_option(archive, "pax", "xattrheader", "SCHILY"), "archive_write_set_format_option")
            try addFilter()
            if let level {
                guard compression != .none else { throw usageError("a compression level needs a compression") }
                try setFilterOption("compression-level", "\(level)", else: "\(compression) does not support compression level \(level)")
            }
            if let threads {
                guard threads >= 1 else { throw usageError("the number of compression threads must be at least 1, not \(threads)") }
                if compression == .zstd || compression == .xz {
                    try setFilterOption("threads", "\(threads)", else: "\(compression) does not support \(threads) threads")
                }
            }
            if compression == .gzip {
                // No time in the gzip header: the same entries give the same bytes.
                try setFilterOption("timestamp", nil, else: "gzip does not support leaving out the timestamp")
            }
            // Compressors buffer on their own: hand them every write directly. Plain tar keeps
            // libarchive's 10 KiB blocks (fewer, larger writes) without padding the last one.
            if compression != .none || unbuffered {
                try check(archive_write_set_bytes_per_block(archive, 0), "archive_write_set_bytes_per_block")
            }
        case .zip:
            try check(archive_write_set_format_zip(archive), "archive_write_set_format_zip")
            switch compression {
            case .none: try check(archive_write_zip_set_compression_store(archive), "archive_write_zip_set_compression_store")
            case .gzip: try check(archive_write_zip_set_compression_deflate(archive), "archive_write_zip_set_compression_deflate")
            default: throw usageError("zip archives compress entries with deflate (gzip) or not at all, not with \(compression)")
            }
            if let level {
                guard compression == .gzip else { throw usageError("a compression level needs a compression") }
                let status = archive_write_set_format_option(archive, "zip", "compression-level", "\(level)")
                if status != ARCHIVE_OK { throw usageError("zip does not support compression level \(level)") }
            }
            try check(archive_write_add_filter_none(archive), "archive_write_add_filter_none")
        }
        try check(archive_write_set_bytes_in_last_block(archive, 1), "archive_write_set_bytes_in_last_block")
        try check(
            archive_write_open(
                archive, Unmanaged.passUnretained(output).toOpaque(), nil,
                { _, client, bytes, count in
                    Unmanaged<SinkBridge>.fromOpaque(client!).takeUnretainedValue().send(bytes!, count: count)
                },
                nil),
            "archive_write_open")
    }

    private func addFilter() throws(ArchiveError) {
        switch compression {
        case .none: try check(archive_write_add_filter_none(archive), "archive_write_add_filter_none")
        case .gzip: try check(archive_write_add_filter_gzip(archive), "archive_write_add_filter_gzip")
        case .zstd: try check(archive_write_add_filter_zstd(archive), "archive_write_add_filter_zstd")
        case .xz: try check(archive_write_add_filter_xz(archive), "archive_write_add_filter_xz")
        case .bzip2: try check(archive_write_add_filter_bzip2(archive), "archive_write_add_filter_bzip2")
        }
    }

    /// Writes the header of `newEntry`; for files, exactly `newEntry.size` bytes of data must follow
    /// through `write` before the next `begin` or `finish`.
    public func begin(_ newEntry: ArchiveEntry) throws {
        try finishEntry()
        archive_entry_clear(entry)
        archive_entry_copy_pathname(entry, newEntry.path)
        switch newEntry.kind {
        case .file:
            archive_entry_set_filetype(entry, dk_AE_IFREG)
            archive_entry_set_size(entry, newEntry.size)
        case .directory:
            archive_entry_set_filetype(entry, dk_AE_IFDIR)
            archive_entry_set_size(entry, 0)
        case .symbolicLink(let target):
            archive_entry_set_filetype(entry, dk_AE_IFLNK)
            archive_entry_copy_symlink(entry, target)
            archive_entry_set_size(entry, 0)
        case .hardLink(let target):
            archive_entry_set_filetype(entry, dk_AE_IFREG)
            archive_entry_copy_hardlink(entry, target)
            archive_entry_set_size(entry, 0)
        case .special(let kind):
            throw ArchiveError(
                name: name, call: "archive_write_header", status: ARCHIVE_FAILED, errno: 0,
                message: "\(newEntry.path): cannot write a \(kind) entry")
        }
        archive_entry_set_perm(entry, mode_t(newEntry.permissions & 0o7777))
        archive_entry_set_uid(entry, 0)
        archive_entry_set_gid(entry, 0)
        if let time = newEntry.modificationTime {
            archive_entry_set_mtime(entry, time_t(time.seconds), Int(time.nanoseconds))
        }
        for attribute in newEntry.extendedAttributes {
            attribute.value.withUnsafeBytes {
                archive_entry_xattr_add_entry(entry, attribute.name, $0.baseAddress, $0.count)
            }
        }
        let status = UTF8Locale.run { archive_write_header(archive, entry) }
        if status != ARCHIVE_OK { try fail("archive_write_header", status, entry: newEntry.path) }
        entryCount += 1
        current = (newEntry.path, newEntry.kind == .file ? newEntry.size : 0)
    }

    /// Writes data of the current entry; more than its declared size is an error.
    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        guard let (path, remaining) = current, Int64(bytes.count) <= remaining else {
            throw ArchiveError(
                name: name, call: "archive_write_data", status: ARCHIVE_FAILED, errno: 0,
                message: "\(current?.path ?? "(no entry)"): more data than the entry's declared size")
        }
        var done = 0
        while done < bytes.count {
            let written = archive_write_data(archive, base + done, bytes.count - done)
            if written <= 0 { try fail("archive_write_data", Int32(written), entry: path) }
            done += written
        }
        current = (path, remaining - Int64(bytes.count))
    }

    /// Ends the last entry, writes the end of the archive and flushes the compressor. Must be called
    /// for a valid archive; the sink is not closed. Without `endOfArchive` (an uncompressed
    /// `unbuffered` tar only), the two zero blocks that end a tar are left out: the entries are one
    /// part of an archive that more entries continue (a shard's part of `archive --shard`).
    public func finish(endOfArchive: Bool = true) throws {
        try finishEntry()
        if !endOfArchive {
            precondition(format == .tar && compression == .none && unbuffered, "only an unbuffered plain tar's end can be left out")
            // Unbuffered, every byte of the entries has reached the sink: what close writes now is the end.
            output.discard = true
        }
        let status = UTF8Locale.run { archive_write_close(archive) }
        if status != ARCHIVE_OK { try fail("archive_write_close", status, entry: nil) }
        finished = true
    }

    /// Checks that the current entry received all its data.
    private func finishEntry() throws {
        guard let (path, remaining) = current else { return }
        current = nil
        if remaining > 0 {
            throw ArchiveError(
                name: name, call: "archive_write_finish_entry", status: ARCHIVE_FAILED, errno: 0,
                message: "\(path): \(remaining) bytes short of the entry's declared size")
        }
        let status = archive_write_finish_entry(archive)
        if status != ARCHIVE_OK { try fail("archive_write_finish_entry", status, entry: path) }
    }

    /// Throws the sink's own error when it caused the failure, else libarchive's.
    private func fail(_ call: String, _ status: Int32, entry path: String?) throws -> Never {
        if let error = output.failure { throw error }
        let detail = archive_error_string(archive).map { String(cString: $0) } ?? "unknown libarchive error"
        throw ArchiveError(
            name: name, call: call, status: status, errno: archive_errno(archive),
            message: path.map { "\($0): \(detail)" } ?? detail)
    }

    /// Throws the error of a libarchive call that did not return `ARCHIVE_OK` while setting up.
    private func check(_ status: Int32, _ call: String) throws(ArchiveError) {
        if status != ARCHIVE_OK { throw ArchiveError(archive, name: name, call: call, status: status) }
    }

    /// Sets an option of the filter; `value` nil turns a boolean option off. libarchive answers an
    /// out-of-range value with "Undefined option", so the message comes from the caller.
    private func setFilterOption(_ option: String, _ value: String?, else message: String) throws(ArchiveError) {
        let status = archive_write_set_filter_option(archive, compression.rawValue, option, value)
        if status != ARCHIVE_OK { throw usageError(message) }
    }

    /// An error in the arguments, found before libarchive is asked.
    private func usageError(_ message: String) -> ArchiveError {
        ArchiveError(name: name, call: "ArchiveWriter.init", status: ARCHIVE_FATAL, errno: 0, message: message)
    }
}

/// The client side of libarchive's write callback (`ArchiveWriter`, `CompressingWriter`): hands every
/// chunk to the sink and keeps its error.
final class SinkBridge {
    private let sink: ArchiveSink
    /// The error the sink threw; libarchive only learns that the write failed.
    private(set) var failure: Error?
    /// Drops what libarchive writes from now on (`ArchiveWriter.finish(endOfArchive: false)`).
    var discard = false

    init(sink: ArchiveSink) {
        self.sink = sink
    }

    /// Writes the chunk and returns `count`, or -1 when the sink throws.
    func send(_ bytes: UnsafeRawPointer, count: Int) -> Int {
        if discard { return count }
        do {
            try sink.write(UnsafeRawBufferPointer(start: bytes, count: count))
            return count
        } catch {
            failure = error
            return -1
        }
    }
}
