import CArchive

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads a gzip stream with zlib, checking the CRC-32 and length in every member's trailer.
///
/// libarchive's gzip filter (3.6.2) never checks the trailer, so a corrupt `.gz` reads without an
/// error there; this reader is used for gzip input instead. Concatenated members read as one stream,
/// as with `gzip -dc`. Zero bytes after the last member are ignored, as gzip ignores them (tape
/// padding); anything else after a member throws, and so does a stream that ends before the trailer
/// of its last member, and a CRC-32 or length that does not match the data.
///
/// The data of a member reaches the caller before its trailer is checked, so a caller must treat the
/// stream as good only once `read(into:)` has returned 0.
///
/// Errors from zlib name the zlib function as `call` and have zlib's status (`Z_DATA_ERROR`, ...) as `status`.
public final class GzipReader {
    private static let blockSize = 1 << 20

    /// Bytes consumed from the source so far, the prefix included (for progress and ETA).
    public private(set) var compressedBytesRead: Int64 = 0

    private let stream: UnsafeMutablePointer<z_stream>
    /// Compressed input: the prefix, then blocks read from the descriptor.
    private let block: UnsafeMutableRawBufferPointer
    private let fileDescriptor: Int32
    private let name: String
    /// The descriptor returned end of file.
    private var sourceAtEnd = false
    /// zlib finished a member (its trailer checked) and the next bytes are not yet known to start another.
    private var betweenMembers = false
    /// Zero bytes followed the last member: everything up to the end must be zero too.
    private var inPadding = false
    private var atEnd = false
    /// The first failure, thrown again by later reads.
    private var failure: ArchiveError?

    /// Opens the stream: `prefix` holds bytes the caller already read from the descriptor (e.g. to sniff
    /// magic) and is served first, then the rest is read from `fileDescriptor` (not closed by this class)
    /// in blocks of 1 MiB. `name` is used in errors.
    public init(fileDescriptor: Int32, prefix: [UInt8] = [], name: String) throws(ArchiveError) {
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        // 15 + 16: the largest window, and a gzip wrapper (zlib then checks each trailer).
        let status = dk_inflateInit2(stream, 15 + 16)
        guard status == Z_OK else {
            let error = Self.zlibError(stream, name: name, call: "inflateInit2", status: status)
            stream.deinitialize(count: 1)
            stream.deallocate()
            throw error
        }
        self.stream = stream
        self.fileDescriptor = fileDescriptor
        self.name = name
        block = .allocate(byteCount: max(Self.blockSize, prefix.count), alignment: 16)

        // Fill the first block now, so a descriptor that cannot be read fails here.
        prefix.withUnsafeBytes { block.copyMemory(from: $0) }
        compressedBytesRead = Int64(prefix.count)
        var count = prefix.count
        if count < block.count { count += try readSource(into: block.baseAddress! + count, count: block.count - count) }
        stream.pointee.next_in = block.baseAddress!.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_in = uInt(count)
    }

    deinit {
        inflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
        block.deallocate()
    }

    /// Fills up to `buffer.count` bytes of decompressed data (decompressing straight into it); returns 0
    /// at the end of the stream, after every member's trailer has been checked.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(ArchiveError) -> Int {
        if let failure { throw failure }
        guard !atEnd, let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        do {
            return try inflate(into: base, count: buffer.count)
        } catch {
            failure = error
            throw error
        }
    }

    /// Decompresses into `base` until `count` bytes are there (at most 4 GiB - 1 per call) or the stream ends.
    private func inflate(into base: UnsafeMutableRawPointer, count: Int) throws(ArchiveError) -> Int {
        stream.pointee.next_out = base.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_out = uInt(clamping: count)
        let capacity = Int(stream.pointee.avail_out)
        while stream.pointee.avail_out > 0 {
            if stream.pointee.avail_in == 0 && !sourceAtEnd { try refill() }
            if betweenMembers {
                guard try startNextMember() else {
                    atEnd = true
                    break
                }
            }
            let status = CArchive.inflate(stream, Z_NO_FLUSH)
            switch status {
            case Z_OK:
                continue
            case Z_STREAM_END:
                betweenMembers = true
            case Z_BUF_ERROR where stream.pointee.avail_in == 0:
                // No progress without more input (there is room for output).
                if sourceAtEnd { throw truncated(status: status) }
            default:
                throw Self.zlibError(stream, name: name, call: "inflate", status: status)
            }
        }
        return capacity - Int(stream.pointee.avail_out)
    }

    /// After a member's trailer: returns true when another member starts (zlib is reset for it), false
    /// at the end of the source, after nothing or only zero bytes; throws for anything else.
    ///
    /// This matches gzip 1.12: after a member, it reads another member, or skips zero bytes to the end
    /// of the file; other bytes (zeros followed by anything else too) are "trailing garbage".
    private func startNextMember() throws(ArchiveError) -> Bool {
        while true {
            if stream.pointee.avail_in == 0 {
                if sourceAtEnd { return false }
                try refill()
                continue
            }
            let next = stream.pointee.next_in!
            if !inPadding {
                if next[0] == 0x1F {
                    // zlib checks the rest of the header: a bad one is corrupt, a cut one truncated.
                    let status = inflateReset(stream)
                    guard status == Z_OK else { throw Self.zlibError(stream, name: name, call: "inflateReset", status: status) }
                    betweenMembers = false
                    return true
                }
                guard next[0] == 0 else { throw trailingGarbage() }
                inPadding = true
            }
            let available = Int(stream.pointee.avail_in)
            var zeros = 0
            while zeros < available && next[zeros] == 0 { zeros += 1 }
            stream.pointee.next_in = next + zeros
            stream.pointee.avail_in -= uInt(zeros)
            if zeros < available { throw trailingGarbage() }
        }
    }

    /// Reads the next block from the descriptor; only called when zlib consumed all input.
    private func refill() throws(ArchiveError) {
        let count = try readSource(into: block.baseAddress!, count: block.count)
        stream.pointee.next_in = block.baseAddress!.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_in = uInt(count)
    }

    /// Reads up to `count` bytes from the descriptor, retrying on EINTR; 0 marks the end of the source.
    private func readSource(into destination: UnsafeMutableRawPointer, count: Int) throws(ArchiveError) -> Int {
        let n = readRetryingInterrupts(fileDescriptor, destination, count)
        guard n >= 0 else { throw ArchiveError(name: name, systemCall: "read", errno: errno, action: "cannot read") }
        if n == 0 { sourceAtEnd = true }
        compressedBytesRead += Int64(n)
        return n
    }

    /// The offset in the source of the next byte zlib has not consumed.
    private var inputOffset: Int64 { compressedBytesRead - Int64(stream.pointee.avail_in) }

    private func truncated(status: Int32) -> ArchiveError {
        ArchiveError(
            name: name, call: "inflate", status: status, errno: 0,
            message: "truncated gzip stream: the data ends before the compressed stream does")
    }

    private func trailingGarbage() -> ArchiveError {
        ArchiveError(
            name: name, call: "inflate", status: Z_DATA_ERROR, errno: 0,
            message: "corrupt gzip stream (trailing garbage at byte \(inputOffset), after the end of a member)")
    }

    /// zlib's report of a failed call, worded for people: `corrupt gzip stream (incorrect data check)`.
    private static func zlibError(
        _ stream: UnsafeMutablePointer<z_stream>, name: String, call: String, status: Int32
    ) -> ArchiveError {
        let detail = stream.pointee.msg.map { String(cString: $0) }
        let message =
            switch status {
            case Z_DATA_ERROR: "corrupt gzip stream (\(detail ?? "invalid data"))"
            // A preset dictionary is part of zlib's format, never of gzip's.
            case Z_NEED_DICT: "corrupt gzip stream (needs a preset dictionary)"
            case Z_MEM_ERROR: "out of memory"
            case Z_VERSION_ERROR: "zlib version mismatch (built with \(ZLIB_VERSION), running \(String(cString: zlibVersion())))"
            default: "zlib error \(status)\(detail.map { ": \($0)" } ?? "")"
            }
        return ArchiveError(name: name, call: call, status: status, errno: status == Z_MEM_ERROR ? ENOMEM : 0, message: message)
    }
}

/// `read(2)`, retried while a signal interrupts it (outside the class, whose `read(into:)` hides it).
private func readRetryingInterrupts(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    var n: Int
    repeat {
        n = read(fd, buffer, count)
    } while n < 0 && errno == EINTR
    return n
}
