import CArchive

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads a compressed byte stream (any filter libarchive detects) through libarchive's raw format.
///
/// `init` opens the stream and detects its compression; `read(into:)` then yields the decompressed
/// bytes. A stream that is cut short or corrupt throws an `ArchiveError` naming the file instead of
/// ending early, and so does a stream that starts with a filter's magic bytes but is not that filter.
public final class DecompressingReader {
    /// The compression the stream starts with: `.none` for plain input and for the rarer filters
    /// libarchive also undoes (lz4, lzip, compress, ...).
    public private(set) var filter: CompressionFilter = .none

    /// Bytes consumed from the source so far, the prefix included (for progress and ETA).
    public var compressedBytesRead: Int64 { archive_filter_bytes(archive, -1) }

    private let archive: OpaquePointer
    private let source: ReadSource
    private let name: String
    /// libarchive's name of the outermost filter (`"gzip"`, `"lz4"`) for messages; `nil` for plain input.
    private var filterName: String?
    private var atEnd = false
    /// What is left of the last block libarchive handed out.
    private var pending = UnsafeRawBufferPointer(start: nil, count: 0)
    /// The first failure, thrown again by later reads.
    private var failure: ArchiveError?

    /// Opens the stream: `prefix` holds bytes the caller already read from the descriptor (e.g. to sniff
    /// magic) and is served first, then the rest is read from `fileDescriptor` (not closed by this class).
    /// `name` is used in errors.
    public init(fileDescriptor: Int32, prefix: [UInt8] = [], name: String) throws(ArchiveError) {
        guard let archive = archive_read_new() else {
            throw ArchiveError(name: name, call: "archive_read_new", status: ARCHIVE_FATAL, errno: ENOMEM, message: "out of memory")
        }
        self.archive = archive
        self.source = ReadSource(fileDescriptor: fileDescriptor, prefix: prefix)
        self.name = name

        for (status, call) in [
            (archive_read_support_filter_all(archive), "archive_read_support_filter_all"),
            (archive_read_support_format_raw(archive), "archive_read_support_format_raw"),
            (archive_read_support_format_empty(archive), "archive_read_support_format_empty"),
        ] where status != ARCHIVE_OK {
            throw ArchiveError(archive, name: name, call: call, status: status)
        }
        let opened = archive_read_open(
            archive, Unmanaged.passUnretained(source).toOpaque(), nil,
            { _, client, block in Unmanaged<ReadSource>.fromOpaque(client!).takeUnretainedValue().next(block!) },
            nil)
        identifyFilter()
        guard opened == ARCHIVE_OK else { throw streamError(call: "archive_read_open", status: opened) }
        let claimed = source.claimedFilter
        if claimed != .none && claimed != filter {
            throw ArchiveError(
                name: name, call: "archive_read_open", status: ARCHIVE_FATAL, errno: 0,
                message: "not a valid \(claimed) stream, although it starts with \(claimed) magic bytes")
        }

        var entry: OpaquePointer?
        // archive_read_open already decompressed a first block to verify the filters, so a stream
        // without an entry is empty, not broken; that is what the empty format is for.
        switch archive_read_next_header(archive, &entry) {
        case ARCHIVE_OK: break
        case ARCHIVE_EOF: atEnd = true
        case let status: throw streamError(call: "archive_read_next_header", status: status)
        }
    }

    deinit { archive_read_free(archive) }

    /// Fills up to `buffer.count` bytes of decompressed data; returns 0 at the end of the stream.
    ///
    /// Takes libarchive's blocks as the filter makes them (`archive_read_data` would drop everything it
    /// gathered for a large buffer when a later block fails), so the data before a corrupt or missing
    /// part is all delivered before the error.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(ArchiveError) -> Int {
        if let failure { throw failure }
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        if pending.isEmpty {
            guard !atEnd else { return 0 }
            var block: UnsafeRawPointer?
            var size = 0
            var offset: la_int64_t = 0
            let status = archive_read_data_block(archive, &block, &size, &offset)
            if status == ARCHIVE_EOF {
                atEnd = true
                return 0
            }
            guard status == ARCHIVE_OK else {
                let error = streamError(call: "archive_read_data_block", status: status)
                failure = error
                throw error
            }
            pending = UnsafeRawBufferPointer(start: block, count: size)
        }
        let count = min(buffer.count, pending.count)
        base.copyMemory(from: pending.baseAddress!, byteCount: count)
        pending = UnsafeRawBufferPointer(rebasing: pending[count...])
        return count
    }

    /// Records the outermost filter of the stream (the one nearest the source) once libarchive chose it.
    private func identifyFilter() {
        let count = archive_filter_count(archive)
        // The last filter is the client reader itself.
        guard count > 1 else { return }
        filterName = archive_filter_name(archive, count - 2).map { String(cString: $0) }
        filter =
            switch archive_filter_code(archive, count - 2) {
            case ARCHIVE_FILTER_GZIP: .gzip
            case ARCHIVE_FILTER_ZSTD: .zstd
            case ARCHIVE_FILTER_XZ: .xz
            case ARCHIVE_FILTER_BZIP2: .bzip2
            default: .none
            }
    }

    /// The error for a failed `call`: a read error of the source, or libarchive's report worded for people.
    private func streamError(call: String, status: Int32) -> ArchiveError {
        if source.readErrno != 0 {
            return ArchiveError(name: name, systemCall: "read", errno: source.readErrno, action: "cannot read")
        }
        // When bidding fails, libarchive frees the filters it chose, so the magic bytes name the stream.
        let claimed = source.claimedFilter
        let stream = (filterName ?? (claimed == .none ? nil : claimed.rawValue)).map { "\($0) stream" } ?? "input"
        // libarchive words truncation per filter: "truncated gzip input", "Truncated zstd input", xz's
        // "No progress is possible"; gzip reports a cut trailer with no message at all.
        let message =
            switch archive_error_string(archive).map({ String(cString: $0) }) {
            case let detail? where !detail.lowercased().contains("truncated") && !detail.contains("No progress is possible"):
                "corrupt \(stream) (\(detail))"
            default:
                "truncated \(stream): the data ends before the compressed stream does"
            }
        return ArchiveError(name: name, call: call, status: status, errno: archive_errno(archive), message: message)
    }
}

/// The client side of libarchive's read callback: serves the caller's prefix first, then blocks read
/// from the descriptor.
private final class ReadSource {
    private static let blockSize = 1 << 20
    private let fileDescriptor: Int32
    private var prefix: [UInt8]
    private let block: UnsafeMutableRawBufferPointer
    /// The first bytes of the stream, up to `CompressionFilter.magicLength`.
    private var magic: [UInt8] = []
    /// The errno of a failed read; 0 while reads succeed.
    private(set) var readErrno: Int32 = 0

    /// The filter the stream's first bytes claim, to check libarchive's choice against.
    var claimedFilter: CompressionFilter { magic.withUnsafeBytes { CompressionFilter.detect(magic: $0) } }

    init(fileDescriptor: Int32, prefix: [UInt8]) {
        self.fileDescriptor = fileDescriptor
        self.prefix = prefix
        block = .allocate(byteCount: max(Self.blockSize, prefix.count), alignment: 16)
    }

    deinit { block.deallocate() }

    /// Points `buffer` at the next block of the stream and returns its size: 0 at the end, -1 on a read error.
    func next(_ buffer: UnsafeMutablePointer<UnsafeRawPointer?>) -> Int {
        var count = prefix.count
        if count > 0 {
            prefix.withUnsafeBytes { block.copyMemory(from: $0) }
            prefix = []
        }
        if count < block.count {
            var n: Int
            repeat {
                n = read(fileDescriptor, block.baseAddress! + count, block.count - count)
            } while n < 0 && errno == EINTR
            if n < 0 {
                readErrno = errno
                return -1
            }
            count += n
        }
        if magic.count < CompressionFilter.magicLength {
            magic += block.prefix(min(count, CompressionFilter.magicLength - magic.count))
        }
        buffer.pointee = UnsafeRawPointer(block.baseAddress)
        return count
    }
}
