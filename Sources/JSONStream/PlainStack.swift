#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A growable array of plain values in manually managed memory, for the per-token bookkeeping of
/// the reader, writer and sorter: appends, pops and element updates without the uniqueness checks
/// and reference counting of `Array`. It grows with `realloc` (the elements are bitwise copyable).
///
/// It is a class so that owners hold it in a `let`: updating it is then no access to the owner's
/// storage, which would need a dynamic exclusivity check per call.
final class PlainStack<Element: BitwiseCopyable> {
    private(set) var base: UnsafeMutablePointer<Element>
    private(set) var capacity: Int
    private(set) var count = 0

    init(capacity: Int = 16) {
        self.capacity = max(4, capacity)
        base = Self.reallocate(nil, self.capacity)
    }

    deinit { free(base) }

    var isEmpty: Bool { count == 0 }

    /// The element at `i`, updated in place.
    subscript(i: Int) -> Element {
        @inline(__always)
        unsafeAddress {
            assert(i >= 0 && i < count)
            return UnsafePointer(base + i)
        }
        @inline(__always)
        unsafeMutableAddress {
            assert(i >= 0 && i < count)
            return base + i
        }
    }

    /// The last element, updated in place; the stack must not be empty.
    var last: Element {
        @inline(__always)
        unsafeAddress {
            assert(count > 0)
            return UnsafePointer(base + count - 1)
        }
        @inline(__always)
        unsafeMutableAddress {
            assert(count > 0)
            return base + count - 1
        }
    }

    @inline(__always)
    func append(_ e: Element) {
        if count == capacity { grow() }
        (base + count).initialize(to: e)
        count += 1
    }

    /// Removes and returns the last element; the stack must not be empty.
    @inline(__always)
    @discardableResult
    func removeLast() -> Element {
        assert(count > 0)
        count -= 1
        return base[count]
    }

    /// Keeps the first `n` elements.
    @inline(__always)
    func removeAll(keepingFirst n: Int = 0) {
        assert(n >= 0 && n <= count)
        count = n
    }

    /// Releases memory beyond `keep` elements of capacity when the stack is empty.
    func shrink(to keep: Int) {
        guard count == 0, capacity > keep * 2 else { return }
        capacity = max(4, keep)
        base = Self.reallocate(base, capacity)
    }

    /// The elements as a buffer, valid until the next append.
    var elements: UnsafeBufferPointer<Element> { UnsafeBufferPointer(start: base, count: count) }

    private func grow() {
        capacity *= 2
        base = Self.reallocate(base, capacity)
    }

    private static func reallocate(_ p: UnsafeMutablePointer<Element>?, _ n: Int) -> UnsafeMutablePointer<Element> {
        let bytes = n * MemoryLayout<Element>.stride
        guard let q = realloc(p, bytes) else { fatalError("out of memory allocating \(bytes) bytes") }
        return q.bindMemory(to: Element.self, capacity: n)
    }
}
