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

    /// Empties the buffer and gives back the memory beyond `keep` bytes of capacity.
    func removeAll(keepingCapacityUpTo keep: Int) {
        count = 0
        guard capacity > keep, let p = realloc(base, max(16, keep)) else { return }
        base = p.bindMemory(to: UInt8.self, capacity: max(16, keep))
        capacity = max(16, keep)
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
        reserve(n)
        copyBytes(base + count, bytes)
        count += n
    }

    /// Lets `body` write up to `maxCount` bytes at the end; it returns how many it wrote.
    @inline(__always)
    func append(upTo maxCount: Int, _ body: (UnsafeMutablePointer<UInt8>) -> Int) {
        reserve(maxCount)
        count += body(base + count)
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

    /// Moves the bytes (valid UTF-8) out into a `String` and empties the buffer. They are copied from
    /// the end in slices, and the buffer shrinks (`realloc`) behind each one, so a large buffer gives
    /// its pages back as the string's are filled: a huge string is held about once, not twice.
    func takeString() -> String {
        let n = count
        let slice = 1 << 20
        let string = String(unsafeUninitializedCapacity: n) { out in
            var end = n
            while end > 0 {
                let start = max(0, end - slice)
                (out.baseAddress! + start).update(from: base + start, count: end - start)
                end = start
                if end >= slice, let p = realloc(base, end) {
                    base = p.bindMemory(to: UInt8.self, capacity: end)
                    capacity = end
                }
            }
            return n
        }
        count = 0
        return string
    }

    /// Releases memory beyond `keep` bytes of capacity when the buffer is empty.
    func shrink(to keep: Int) {
        guard count == 0, capacity > keep * 2 else { return }
        free(base)
        capacity = keep
        base = Self.allocate(keep)
    }
}

/// Copies `src` to `dst` (not overlapping); short copies, the usual keys and values, are done inline
/// with a few possibly overlapping loads and stores instead of a call to `memcpy`.
@inline(__always)
func copyBytes(_ dst: UnsafeMutablePointer<UInt8>, _ src: UnsafeRawBufferPointer) {
    let n = src.count
    guard n > 0, let s = src.baseAddress else { return }
    let d = UnsafeMutableRawPointer(dst)
    if n > 32 {
        d.copyMemory(from: s, byteCount: n)
    } else if n >= 8 {
        let first = s.loadUnaligned(as: UInt64.self)
        let last = s.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)
        if n > 16 {
            let second = s.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
            let third = s.loadUnaligned(fromByteOffset: n - 16, as: UInt64.self)
            d.storeBytes(of: second, toByteOffset: 8, as: UInt64.self)
            d.storeBytes(of: third, toByteOffset: n - 16, as: UInt64.self)
        }
        d.storeBytes(of: first, as: UInt64.self)
        d.storeBytes(of: last, toByteOffset: n - 8, as: UInt64.self)
    } else if n >= 4 {
        let first = s.loadUnaligned(as: UInt32.self)
        let last = s.loadUnaligned(fromByteOffset: n - 4, as: UInt32.self)
        d.storeBytes(of: first, as: UInt32.self)
        d.storeBytes(of: last, toByteOffset: n - 4, as: UInt32.self)
    } else {
        dst[0] = s.load(as: UInt8.self)
        dst[n >> 1] = s.load(fromByteOffset: n >> 1, as: UInt8.self)
        dst[n - 1] = s.load(fromByteOffset: n - 1, as: UInt8.self)
    }
}
