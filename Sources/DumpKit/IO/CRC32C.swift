import CPlatform

/// CRC-32C (Castagnoli), the checksum Cloud Storage reports for objects (`crc32c`, base64 of the
/// big-endian value).
public struct CRC32C: Sendable {
    private var crc: UInt32 = 0xFFFF_FFFF

    public init() {}

    /// Adds bytes to the checksum (the SSE4.2 `crc32` instruction where the CPU has it).
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        crc = dk_crc32c_update(crc, bytes.baseAddress, bytes.count)
    }

    /// The checksum of everything added so far.
    public var value: UInt32 { crc ^ 0xFFFF_FFFF }

    /// The checksum as Cloud Storage shows it: base64 of the 4 big-endian bytes.
    public var base64: String {
        let v = value
        return Base64.encode([UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)])
    }
}
