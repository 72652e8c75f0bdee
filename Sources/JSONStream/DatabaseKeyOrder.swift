/// The Realtime Database's child order: keys that are 32-bit integers first, numerically, then the
/// other keys in byte (code point) order.
public enum DatabaseKeyOrder {
    /// The key's value when it is a canonical 32-bit integer (`"0"`, `"-12"`, not `"007"` or `"-0"`).
    @inlinable
    public static func integerValue<C: Collection<UInt8>>(_ key: C) -> Int32? {
        var it = key.makeIterator()
        guard var c = it.next() else { return nil }
        var negative = false
        if c == UInt8(ascii: "-") {
            negative = true
            guard let n = it.next() else { return nil }
            c = n
        }
        guard c >= 0x30, c <= 0x39 else { return nil }
        var value = Int64(c - 0x30)
        var digits = 1
        if c == 0x30 {
            // "0" alone is an integer; "-0" and leading zeros are not.
            if negative || it.next() != nil { return nil }
            return 0
        }
        while let d = it.next() {
            guard d >= 0x30, d <= 0x39 else { return nil }
            digits += 1
            if digits > 10 { return nil }
            value = value * 10 + Int64(d - 0x30)
        }
        if negative { value = -value }
        guard value >= Int64(Int32.min), value <= Int64(Int32.max) else { return nil }
        return Int32(value)
    }

    /// Whether `a` sorts before `b` in the database's order (UTF-8 bytes).
    @inlinable
    public static func less(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        let ia = integerValue(a), ib = integerValue(b)
        switch (ia, ib) {
        case let (x?, y?): return x < y
        case (.some, nil): return true
        case (nil, .some): return false
        case (nil, nil): return bytesLess(a, b)
        }
    }

    /// Byte (code point) order.
    @inlinable @inline(__always)
    static func bytesLess(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        let n = min(a.count, b.count)
        if n > 0, let pa = a.baseAddress, let pb = b.baseAddress {
            // Keys are short: compare 8 bytes at a time (as big-endian numbers) rather than call memcmp.
            var i = 0
            while i + 8 <= n {
                let x = UInt64(bigEndian: pa.loadUnaligned(fromByteOffset: i, as: UInt64.self))
                let y = UInt64(bigEndian: pb.loadUnaligned(fromByteOffset: i, as: UInt64.self))
                if x != y { return x < y }
                i += 8
            }
            while i < n {
                let x = pa.load(fromByteOffset: i, as: UInt8.self), y = pb.load(fromByteOffset: i, as: UInt8.self)
                if x != y { return x < y }
                i += 1
            }
        }
        return a.count < b.count
    }

    /// The key's rank among integer keys for sorting: its `integerValue`, or `Int64.max` for the
    /// other keys (which then compare by bytes).
    @inline(__always)
    static func sortKey(_ key: UnsafeRawBufferPointer) -> Int64 {
        // Integers are at most 11 bytes and start with '-' or a digit; most keys are not.
        guard let c = key.first, key.count <= 11, c == UInt8(ascii: "-") || c &- 0x30 < 10 else { return .max }
        return integerValue(key).map(Int64.init) ?? .max
    }

    /// `less` for keys whose `sortKey`s are known.
    @inline(__always)
    static func less(_ ia: Int64, _ a: UnsafeRawBufferPointer, _ ib: Int64, _ b: UnsafeRawBufferPointer) -> Bool {
        if ia != ib { return ia < ib }
        if ia != .max { return false }
        return bytesLess(a, b)
    }

    /// Whether `a` sorts before `b` in the database's order.
    public static func less(_ a: String, _ b: String) -> Bool {
        var a = a, b = b
        return a.withUTF8 { pa in b.withUTF8 { pb in less(UnsafeRawBufferPointer(pa), UnsafeRawBufferPointer(pb)) } }
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif
