import CZstd

/// The zstd frames DumpKit writes itself (RFC 8878): raw frames for data that does not compress, and
/// skippable frames that fill reserved space. Compressed frames come from libzstd.
public enum ZstdFrame {
    /// The largest block a frame may hold (`Block_Maximum_Size`).
    public static let maximumBlockSize = 128 << 10
    /// The size of a skippable frame's header (magic number and payload size); its smallest size.
    public static let skippableHeaderSize = 8

    /// The size of a raw frame holding `count` bytes (1 to 2^32 - 1): header and one 3-byte header per block.
    public static func rawFrameSize(holding count: Int) -> Int {
        rawHeaderSize(count) + count + 3 * blockCount(count)
    }

    /// Appends the header of a single-segment frame of `contentSize` bytes (1 to 2^32 - 1): magic
    /// number, descriptor (no checksum, no dictionary) and the content size in its shortest field.
    public static func appendRawFrameHeader(contentSize: Int, to frame: inout [UInt8]) {
        appendLittleEndian(0xFD2F_B528, count: 4, to: &frame)
        switch contentSize {
        case ..<256:
            frame.append(0x20)  // FCS_Flag 0 with Single_Segment: 1 byte
            frame.append(UInt8(contentSize))
        case ..<(65536 + 256):
            frame.append(0x60)  // FCS_Flag 1: 2 bytes, value - 256
            appendLittleEndian(UInt64(contentSize - 256), count: 2, to: &frame)
        default:
            frame.append(0xA0)  // FCS_Flag 2: 4 bytes
            appendLittleEndian(UInt64(contentSize), count: 4, to: &frame)
        }
    }

    /// Appends the 3-byte header of a raw block of `size` bytes (at most `maximumBlockSize`).
    public static func appendRawBlockHeader(size: Int, last: Bool, to frame: inout [UInt8]) {
        // Last_Block in bit 0, Block_Type 0 (raw) in bits 1-2, Block_Size in bits 3-23.
        appendLittleEndian(UInt64(size) << 3 | (last ? 1 : 0), count: 3, to: &frame)
    }

    /// The header of a skippable frame whose payload (`payloadSize` bytes, any content) follows it.
    public static func skippableHeader(payloadSize: Int) -> [UInt8] {
        var header: [UInt8] = []
        appendLittleEndian(0x184D_2A50, count: 4, to: &header)
        appendLittleEndian(UInt64(payloadSize), count: 4, to: &header)
        return header
    }

    /// The largest compressed frame libzstd makes of `count` bytes, checksum included.
    public static func compressBound(_ count: Int) -> Int {
        ZSTD_compressBound(count) + 4
    }

    private static func rawHeaderSize(_ count: Int) -> Int {
        count < 256 ? 6 : count < 65536 + 256 ? 7 : 9
    }

    private static func blockCount(_ count: Int) -> Int {
        (count + maximumBlockSize - 1) / maximumBlockSize
    }

    private static func appendLittleEndian(_ value: UInt64, count: Int, to bytes: inout [UInt8]) {
        for index in 0..<count { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * index))) }
    }
}
