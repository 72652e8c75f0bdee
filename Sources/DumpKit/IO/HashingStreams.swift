import Crypto
import Foundation
import JSONStream

/// The SHA-256 of bytes given in order, computed on a thread of its own: the caller pays for a
/// copy, not for the hash (a fifth of an index pass's time when inline). Blocks of 1 MiB, at most
/// four of them waiting.
final class BackgroundSHA256: @unchecked Sendable {
    private static let blockSize = 1 << 20
    private let queue = DispatchQueue(label: "dumpkit.sha256")
    /// Touched only on `queue`.
    private var hasher = SHA256()
    private var block: [UInt8] = []
    private let waiting = DispatchSemaphore(value: 4)

    func update(_ bytes: UnsafeRawBufferPointer) {
        var rest = bytes
        while !rest.isEmpty {
            if block.isEmpty { block.reserveCapacity(Self.blockSize) }
            let n = min(rest.count, Self.blockSize - block.count)
            block.append(contentsOf: UnsafeRawBufferPointer(rebasing: rest[0..<n]))
            rest = UnsafeRawBufferPointer(rebasing: rest[n...])
            if block.count == Self.blockSize { send() }
        }
    }

    private func send() {
        let full = block
        block = []
        waiting.wait()
        queue.async {
            full.withUnsafeBytes { self.hasher.update(bufferPointer: $0) }
            self.waiting.signal()
        }
    }

    /// The digest of everything given, lowercase hex (call once, at the end).
    func finish() -> String {
        if !block.isEmpty { send() }
        return queue.sync { Hex.lowercase(hasher.finalize()) }
    }
}

/// Passes bytes through from a source while computing their SHA-256.
final class HashingByteSource: JSONByteSource {
    private let source: JSONByteSource
    private let hasher = BackgroundSHA256()

    init(_ source: JSONByteSource) { self.source = source }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let n = try source.read(into: buffer)
        if n > 0 { hasher.update(UnsafeRawBufferPointer(rebasing: buffer[0..<n])) }
        return n
    }

    /// The digest of everything read, lowercase hex (call once, at the end).
    var hex: String { hasher.finish() }
}

/// Passes bytes through to a sink while computing their SHA-256.
final class HashingByteSink: JSONByteSink {
    private let sink: JSONByteSink
    private let hasher = BackgroundSHA256()

    init(_ sink: JSONByteSink) { self.sink = sink }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        hasher.update(bytes)
        try sink.write(bytes)
    }

    /// The digest of everything written, lowercase hex (call once, at the end).
    var hex: String { hasher.finish() }
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
