import Crypto
import Foundation
import JSONStream

/// Passes bytes through from a source while computing their SHA-256.
final class HashingByteSource: JSONByteSource {
    private let source: JSONByteSource
    private var hasher = SHA256()

    init(_ source: JSONByteSource) { self.source = source }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let n = try source.read(into: buffer)
        if n > 0 { hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: buffer[0..<n])) }
        return n
    }

    /// The digest of everything read, lowercase hex (call once, at the end).
    var hex: String { Hex.lowercase(hasher.finalize()) }
}

/// Passes bytes through to a sink while computing their SHA-256 (and, when asked, CRC-32C).
final class HashingByteSink: JSONByteSink {
    private let sink: JSONByteSink
    private var hasher = SHA256()
    private var checksum: CRC32C?

    init(_ sink: JSONByteSink, crc32c: Bool = false) {
        self.sink = sink
        checksum = crc32c ? CRC32C() : nil
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        hasher.update(bufferPointer: bytes)
        checksum?.update(bytes)
        try sink.write(bytes)
    }

    /// The CRC-32C of everything written (0 unless made with `crc32c: true`).
    var crc32c: UInt32 { checksum?.value ?? 0 }

    /// The digest of everything written, lowercase hex (call once, at the end).
    var hex: String { Hex.lowercase(hasher.finalize()) }
}

/// Passes bytes through to a sink while computing their CRC-32C: the checksum of shards' parts,
/// which `merge` checks (in hardware, at memory speed).
final class CRC32CByteSink: JSONByteSink {
    private let sink: JSONByteSink
    private var checksum = CRC32C()

    init(_ sink: JSONByteSink) { self.sink = sink }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        checksum.update(bytes)
        try sink.write(bytes)
    }

    /// The CRC-32C of everything written.
    var value: UInt32 { checksum.value }
}

/// Drops every byte (dry runs).
final class DiscardingByteSink: JSONByteSink {
    func write(_ bytes: UnsafeRawBufferPointer) throws {}
}
