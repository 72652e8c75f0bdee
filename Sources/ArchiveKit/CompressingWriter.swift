import CArchive

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes a byte stream compressed with one filter through libarchive's raw format to a sink (a file
/// descriptor through `DescriptorSink`, or an upload).
///
/// Output goes to the sink unbuffered by libarchive's block layer (no padding, no extra copy);
/// the filters write in their own chunks of 64 KiB and more. A writer dropped without `finish()`
/// leaves the stream unterminated, so an interrupted run cannot pass for a complete file.
public final class CompressingWriter {
    private let archive: OpaquePointer
    private let output: SinkBridge
    private let name: String
    private let filter: CompressionFilter
    private var finished = false

    /// Opens the compressed stream on `sink` (not closed by this class) and writes its header.
    ///
    /// `level` is the filter's compression level (gzip and xz 0-9, bzip2 1-9, zstd from its negative
    /// fast levels to 22; `nil` for the filter's default). `threads` (at least 1) is the number of worker
    /// threads for zstd and xz; gzip and bzip2 compress on one thread and ignore it. `name` is used in errors.
    public init(
        sink: ArchiveSink, filter: CompressionFilter, level: Int? = nil, threads: Int? = nil, name: String
    ) throws(ArchiveError) {
        guard let archive = archive_write_new() else {
            throw ArchiveError(name: name, call: "archive_write_new", status: ARCHIVE_FATAL, errno: ENOMEM, message: "out of memory")
        }
        self.archive = archive
        self.output = SinkBridge(sink: sink)
        self.name = name
        self.filter = filter

        try check(archive_write_set_format_raw(archive), "archive_write_set_format_raw")
        switch filter {
        case .none: try check(archive_write_add_filter_none(archive), "archive_write_add_filter_none")
        case .gzip: try check(archive_write_add_filter_gzip(archive), "archive_write_add_filter_gzip")
        case .zstd: try check(archive_write_add_filter_zstd(archive), "archive_write_add_filter_zstd")
        case .xz: try check(archive_write_add_filter_xz(archive), "archive_write_add_filter_xz")
        case .bzip2: try check(archive_write_add_filter_bzip2(archive), "archive_write_add_filter_bzip2")
        }
        if let level {
            guard filter != .none else { throw usageError("a compression level needs a compression filter") }
            try setOption("compression-level", "\(level)", else: "\(filter) does not support compression level \(level)")
        }
        if let threads {
            guard threads >= 1 else { throw usageError("the number of compression threads must be at least 1, not \(threads)") }
            if filter == .zstd || filter == .xz {
                try setOption("threads", "\(threads)", else: "\(filter) does not support \(threads) threads")
            }
        }
        if filter == .gzip {
            // No modification time in the header, as `gzip` does for standard input: the same bytes
            // in give the same file out.
            try setOption("timestamp", nil, else: "gzip does not support leaving out the timestamp")
        }
        // Block size 0: hand every chunk the filter produces straight to the sink.
        try check(archive_write_set_bytes_per_block(archive, 0), "archive_write_set_bytes_per_block")
        try check(
            archive_write_open(
                archive, Unmanaged.passUnretained(output).toOpaque(), nil,
                { _, client, bytes, count in
                    Unmanaged<SinkBridge>.fromOpaque(client!).takeUnretainedValue().send(bytes!, count: count)
                },
                nil),
            "archive_write_open")

        // The raw format writes the data of exactly one regular-file entry.
        let entry = archive_entry_new()
        defer { archive_entry_free(entry) }
        archive_entry_set_filetype(entry, dk_AE_IFREG)
        try check(archive_write_header(archive, entry), "archive_write_header")
    }

    deinit {
        // Freeing a writer that is still open would close the stream cleanly and make a cut-off
        // output look complete; marking it failed first makes free skip that.
        if !finished { archive_write_fail(archive) }
        archive_write_free(archive)
    }

    /// Compresses `bytes` and writes whatever compressed output the filter has ready. Throws the sink's
    /// own error when it failed, else an `ArchiveError`.
    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        let written = archive_write_data(archive, base, bytes.count)
        if written < 0 { throw streamError(call: "archive_write_data", status: Int32(written)) }
    }

    /// Flushes and ends the compressed stream (does not close the sink). Must be called for a valid output.
    public func finish() throws {
        let status = archive_write_close(archive)
        if status != ARCHIVE_OK { throw streamError(call: "archive_write_close", status: status) }
        finished = true
    }

    /// Throws the error of a libarchive call that did not return `ARCHIVE_OK`.
    private func check(_ status: Int32, _ call: String) throws(ArchiveError) {
        if status != ARCHIVE_OK { throw libarchiveError(call: call, status: status) }
    }

    /// Sets an option of the filter; `value` nil turns a boolean option off. libarchive answers an
    /// out-of-range value with "Undefined option", so the message comes from the caller.
    private func setOption(_ option: String, _ value: String?, else message: String) throws(ArchiveError) {
        let status = archive_write_set_filter_option(archive, filter.rawValue, option, value)
        if status != ARCHIVE_OK {
            throw ArchiveError(name: name, call: "archive_write_set_filter_option", status: status, errno: 0, message: message)
        }
    }

    /// An error in the arguments, found before libarchive is asked.
    private func usageError(_ message: String) -> ArchiveError {
        ArchiveError(name: name, call: "CompressingWriter.init", status: ARCHIVE_FATAL, errno: 0, message: message)
    }

    /// The error for a failed `call`: the sink's own, or libarchive's report.
    private func streamError(call: String, status: Int32) -> any Error {
        output.failure ?? libarchiveError(call: call, status: status)
    }

    /// libarchive's report of a failed `call`.
    private func libarchiveError(call: String, status: Int32) -> ArchiveError {
        let detail = archive_error_string(archive).map { String(cString: $0) } ?? "unknown libarchive error"
        return ArchiveError(
            name: name, call: call, status: status, errno: archive_errno(archive),
            message: "cannot write \(filter == .none ? "output" : "\(filter) stream"): \(detail)")
    }
}
