#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A growable byte buffer with cheap appends, used for output and sort arenas.
///
/// The memory comes from `malloc` and grows with `realloc`, which moves large buffers by remapping
/// their pages rather than copying them into freshly faulted ones (a sort arena grows to tens of MB).
final class ByteBuffer {
    private(set) var base: UnsafeMutablePointer<UInt8>
    private(set) var capacity: Int
    var count = 0

    init(capacity: Int) {
        self.capacity = max(16, capacity)
        base = Self.allocate(self.capacity)
    }

    deinit { free(base) }

    private static func allocate(_ n: Int) -> UnsafeMutablePointer<UInt8> {
        guard let p = malloc(n) else { fatalError("out of memory allocating \(n) bytes") }
        return p.bindMemory(to: UInt8.self, capacity: n)
    }

    @inline(__always)
    func reserve(_ extra: Int) {
        if count + extra > capacity { grow(count + extra) }
    }

    private func grow(_ needed: Int) {
        var c = capacity * 2
        while c < needed { c *= 2 }
        guard let p = realloc(base, c) else { fatalError("out of memory allocating \(c) bytes") }
        base = p.bindMemory(to: UInt8.self, capacity: c)
        capacity = c
    }

    @inline(__always)
    func append(_ byte: UInt8) {
        if count == capacity { grow(count + 1) }
        base[count] = byte
        count += 1
    }

    @inline(__always)
    func append(_ bytes: UnsafeRawBufferPointer) {
        let n = bytes.count
        guard n > 0 else { return }
        reserve(n)
        UnsafeMutableRawPointer(base + count).copyMemory(from: bytes.baseAddress!, byteCount: n)
        count += n
    }

    @inline(__always)
    func append(_ s: StaticString) { append(staticBytes(s)) }

    /// The bytes in `range`.
    @inline(__always)
    func bytes(_ start: Int, _ length: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: base + start, count: length)
    }

    /// Drops the first `n` bytes, moving the rest to the front.
    func removeFirst(_ n: Int) {
        guard n > 0 else { return }
        if n < count { memmove(base, base + n, count - n) }
        count -= n
    }

    /// Releases memory beyond `keep` bytes of capacity when the buffer is empty.
    func shrink(to keep: Int) {
        guard count == 0, capacity > keep * 2 else { return }
        free(base)
        capacity = keep
        base = Self.allocate(keep)
    }
}
