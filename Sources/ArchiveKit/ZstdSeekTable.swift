/// The seek table of the zstd seekable format (facebook/zstd `contrib/seekable_format`): a skippable
/// frame at the end of a file of independent frames, listing each frame's compressed and
/// decompressed size, so that a reader finds the frame holding any decompressed offset without
/// decompressing what comes before it. Decoders that do not know the format skip the table.
///
/// Layout: skippable magic 0x184D2A5E, the payload size, one entry per frame (compressed size,
/// decompressed size, and with the checksum flag the low 32 bits of the XXH64 of the frame's
/// content, each 4 bytes little-endian), then the footer: the number of frames (4 bytes), the
/// descriptor (bit 7: checksums; bits 2-6 reserved, 0) and the seekable magic 0x8F92EAB1.
public struct ZstdSeekTable: Sendable, Equatable {
    /// One frame of the file.
    public struct Entry: Sendable, Equatable {
        public var compressedSize: UInt32
        public var decompressedSize: UInt32
        /// The low 32 bits of the XXH64 of the frame's content, when the table holds checksums.
        public var checksum: UInt32?

        public init(compressedSize: UInt32, decompressedSize: UInt32, checksum: UInt32?) {
            self.compressedSize = compressedSize
            self.decompressedSize = decompressedSize
            self.checksum = checksum
        }

        /// The entry of a frame libzstd compressed with a content checksum: its last 4 bytes are the
        /// checksum a seek table holds.
        public init(checksummedFrame frame: [UInt8], decompressedSize: Int) {
            self.init(
                compressedSize: UInt32(frame.count), decompressedSize: UInt32(decompressedSize),
                checksum: ZstdSeekTable.littleEndian(frame, at: frame.count - 4))
        }
    }

    /// What a seek table that cannot be used says: the message names the byte or frame.
    public struct FormatError: Error, Sendable {
        public let message: String
    }

    public static let skippableMagic: UInt32 = 0x184D_2A5E
    public static let seekableMagic: UInt32 = 0x8F92_EAB1
    /// Number of frames, descriptor, seekable magic.
    public static let footerSize = 9
    /// The skippable frame's header: its magic and payload size.
    public static let headerSize = 8
    /// The most frames the format allows (`ZSTD_SEEKABLE_MAXFRAMES`).
    public static let maximumFrames = 0x800_0000

    public let entries: [Entry]
    /// Where each frame starts in the file and in the decompressed bytes; one more element than
    /// `entries`, the last being the frames' end (the table's start) and the decompressed size.
    public let compressedStarts: [Int64]
    public let decompressedStarts: [Int64]

    public init(entries: [Entry]) {
        self.entries = entries
        var compressed: [Int64] = [0]
        var decompressed: [Int64] = [0]
        compressed.reserveCapacity(entries.count + 1)
        decompressed.reserveCapacity(entries.count + 1)
        for entry in entries {
            compressed.append(compressed.last! + Int64(entry.compressedSize))
            decompressed.append(decompressed.last! + Int64(entry.decompressedSize))
        }
        compressedStarts = compressed
        decompressedStarts = decompressed
    }

    /// The decompressed size of the whole file.
    public var decompressedSize: Int64 { decompressedStarts.last! }
    /// The size of the table's skippable frame.
    public var frameSize: Int { Self.frameSize(frames: entries.count, checksums: hasChecksums) }
    /// Whether every entry has a checksum (the table holds them only then).
    public var hasChecksums: Bool { !entries.isEmpty && entries.allSatisfy { $0.checksum != nil } }

    static func frameSize(frames: Int, checksums: Bool) -> Int { headerSize + frames * (checksums ? 12 : 8) + footerSize }

    /// The table as the skippable frame that ends a seekable file.
    public func bytes() -> [UInt8] {
        let checksums = hasChecksums
        var out: [UInt8] = []
        out.reserveCapacity(frameSize)
        func append(_ value: UInt32) { for i in 0..<4 { out.append(UInt8(truncatingIfNeeded: value >> (8 * i))) } }
        append(Self.skippableMagic)
        append(UInt32(frameSize - Self.headerSize))
        for entry in entries {
            append(entry.compressedSize)
            append(entry.decompressedSize)
            if checksums { append(entry.checksum!) }
        }
        append(UInt32(entries.count))
        out.append(checksums ? 0x80 : 0)
        append(Self.seekableMagic)
        return out
    }

    /// Whether the last bytes of a file (at least `footerSize` of them) end with the seekable magic.
    public static func hasFooter(_ tail: [UInt8]) -> Bool {
        tail.count >= footerSize && littleEndian(tail, at: tail.count - 4) == seekableMagic
    }

    /// The size of the table's skippable frame that the footer (a file's last `footerSize` bytes)
    /// announces, checked against the file's size.
    public static func frameSize(footer: [UInt8], fileSize: Int64) throws(FormatError) -> Int {
        precondition(footer.count == footerSize)
        guard littleEndian(footer, at: 5) == seekableMagic else {
            throw FormatError(message: "does not end with the seekable zstd magic 0x8F92EAB1 (at byte \(fileSize - 4))")
        }
        let descriptor = footer[4]
        guard descriptor & 0x7C == 0 else {
            throw FormatError(
                message: "the seek table's descriptor (byte \(fileSize - 5)) has reserved bits set (0x\(String(descriptor, radix: 16)))")
        }
        let frames = Int(littleEndian(footer, at: 0))
        guard frames <= maximumFrames else {
            throw FormatError(message: "the seek table says \(frames) frames, more than the format allows (\(maximumFrames))")
        }
        let size = frameSize(frames: frames, checksums: descriptor & 0x80 != 0)
        guard Int64(size) <= fileSize else {
            throw FormatError(message: "the seek table of \(frames) frames (\(size) bytes) is larger than the file (\(fileSize) bytes)")
        }
        return size
    }

    /// Parses the table's skippable frame (the file's last `frameSize(footer:fileSize:)` bytes) and
    /// checks it against the file: the frames' sizes add up to where the table starts, no frame has
    /// no compressed bytes, none is larger than `maximumFrameSize` decompressed, and none larger
    /// compressed than zstd makes of that much.
    public init(frame: [UInt8], fileSize: Int64, maximumFrameSize: Int) throws(FormatError) {
        let tableStart = fileSize - Int64(frame.count)
        guard frame.count >= Self.headerSize + Self.footerSize, Self.littleEndian(frame, at: 0) == Self.skippableMagic else {
            throw FormatError(message: "the seek table at byte \(tableStart) does not start with the skippable frame magic 0x184D2A5E")
        }
        let frames = Int(Self.littleEndian(frame, at: frame.count - Self.footerSize))
        let checksums = frame[frame.count - 5] & 0x80 != 0
        guard frame.count == Self.frameSize(frames: frames, checksums: checksums) else {
            throw FormatError(message: "the seek table at byte \(tableStart) is not as long as its \(frames) frames need")
        }
        guard Int(Self.littleEndian(frame, at: 4)) == frame.count - Self.headerSize else {
            throw FormatError(
                message: "the seek table's frame size (byte \(tableStart + 4)) is \(Self.littleEndian(frame, at: 4)), "
                    + "but its footer makes it \(frame.count - Self.headerSize)")
        }
        let width = checksums ? 12 : 8
        let largestFrame = ZstdFrame.compressBound(maximumFrameSize)
        var entries: [Entry] = []
        entries.reserveCapacity(frames)
        var at = Self.headerSize
        var compressedEnd: Int64 = 0
        for number in 0..<frames {
            let entry = Entry(
                compressedSize: Self.littleEndian(frame, at: at), decompressedSize: Self.littleEndian(frame, at: at + 4),
                checksum: checksums ? Self.littleEndian(frame, at: at + 8) : nil)
            guard entry.compressedSize > 0 else {
                throw FormatError(message: "frame \(number) of the seek table (byte \(tableStart + Int64(at))) has a compressed size of 0")
            }
            guard entry.decompressedSize <= maximumFrameSize, entry.compressedSize <= largestFrame else {
                throw FormatError(
                    message: "frame \(number) of the seek table (byte \(tableStart + Int64(at))) holds \(entry.decompressedSize) bytes "
                        + "(\(entry.compressedSize) compressed), more than the \(maximumFrameSize) read at once")
            }
            compressedEnd += Int64(entry.compressedSize)
            entries.append(entry)
            at += width
        }
        guard compressedEnd == tableStart else {
            throw FormatError(
                message: "the seek table's \(frames) frames add up to \(compressedEnd) bytes, but the table starts at byte \(tableStart)")
        }
        self.init(entries: entries)
    }

    /// The frame holding decompressed byte `offset` (0 ..< `decompressedSize`): the last frame
    /// starting at or before it that is not empty.
    public func frame(containing offset: Int64) -> Int {
        var lo = 0
        var hi = entries.count
        // The first frame whose end is past `offset`.
        while lo < hi {
            let mid = (lo + hi) / 2
            if decompressedStarts[mid + 1] <= offset { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    static func littleEndian(_ bytes: [UInt8], at index: Int) -> UInt32 {
        UInt32(bytes[index]) | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2]) << 16 | UInt32(bytes[index + 3]) << 24
    }
}
