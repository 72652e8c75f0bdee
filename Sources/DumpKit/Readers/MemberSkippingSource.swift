import JSONStream

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// What `convert` and `migrate` do with a name that is twice in one object.
public enum DuplicateKeyPolicy: String, Sendable, CaseIterable {
    /// Refuse the dump (`DuplicateKeyError`, exit 1): it is ambiguous.
    case refuse
    /// Keep the member that comes last, as JavaScript's `JSON.parse` does, and leave out the others.
    case keepLast = "keep-last"
}

/// A byte source that leaves out byte ranges of another: with `earlierDuplicates(in:)`, a dump
/// without the members whose name comes again later in their object (`--duplicate-keys keep-last`).
///
/// A left-out member is the bytes from its name to the next member's name, so what remains is
/// JSON as it was, with the last of each name.
public final class MemberSkippingSource: JSONByteSource {
    private let source: JSONByteSource
    private let ranges: [Range<Int64>]
    /// Offset in `source` of the next byte it gives.
    private var position: Int64 = 0
    /// The first range that does not end before `position`.
    private var nextRange = 0

    /// Serves `source` without `ranges` (sorted, not overlapping).
    public init(_ source: JSONByteSource, skipping ranges: [Range<Int64>]) {
        self.source = source
        self.ranges = ranges
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        while true {
            let n = try source.read(into: buffer)
            if n == 0 { return 0 }
            var kept = 0
            var i = 0
            while i < n {
                let at = position + Int64(i)
                while nextRange < ranges.count && ranges[nextRange].upperBound <= at { nextRange += 1 }
                if nextRange < ranges.count && ranges[nextRange].lowerBound <= at {
                    i = Int(min(ranges[nextRange].upperBound - position, Int64(n)))
                    continue
                }
                let end = nextRange < ranges.count ? Int(min(ranges[nextRange].lowerBound - position, Int64(n))) : n
                if kept != i { memmove(buffer.baseAddress! + kept, buffer.baseAddress! + i, end - i) }
                kept += end - i
                i = end
            }
            position += Int64(n)
            if kept > 0 { return kept }
        }
    }

    /// The members of `path` whose name comes again later in their object, as byte ranges (from the
    /// name to the next member's name) in order and merged, and how many members they are: one
    /// pass that reads the whole dump, keeping the names and offsets of the members of the open
    /// objects (memory grows with the largest object's members, not with the dump). Fails as
    /// reading the dump would.
    public static func earlierDuplicates(in path: String) throws -> (ranges: [Range<Int64>], members: Int) {
        let file = try InputFile(path: path)
        let reader = JSONReader(source: file, sourceName: file.name)
        let finder = Finder()
        reader.tokenObserver = { finder.observe($0, $1) }
        while try reader.next() != .end {}
        var merged: [Range<Int64>] = []
        for range in finder.ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = merged.last, range.lowerBound <= last.upperBound {
                merged[merged.count - 1] = last.lowerBound..<max(last.upperBound, range.upperBound)
            } else {
                merged.append(range)
            }
        }
        return (merged, finder.ranges.count)
    }

    /// Finds, per open object, the members a later one of the same name replaces.
    private final class Finder {
        /// An open container: for an object, the latest offset of each name and every member's
        /// offset in order.
        struct Level {
            var names: [[UInt8]: Int64] = [:]
            var starts: [Int64] = []
        }

        var levels: [Level] = []
        var ranges: [Range<Int64>] = []

        func observe(_ token: JSONToken, _ reader: JSONReader) {
            switch token {
            case .beginObject, .beginArray: levels.append(Level())
            case .endObject, .endArray: levels.removeLast()
            case .name:
                guard !levels.isEmpty else { return }
                let l = levels.count - 1
                let offset = reader.offset
                let name = [UInt8](reader.bytes)
                levels[l].starts.append(offset)
                if let earlier = levels[l].names.updateValue(offset, forKey: name) {
                    // The member after the earlier one: the starts are in increasing order.
                    let starts = levels[l].starts
                    var lo = 0, hi = starts.count - 1
                    while lo < hi {
                        let mid = (lo + hi) / 2
                        if starts[mid] <= earlier { lo = mid + 1 } else { hi = mid }
                    }
                    ranges.append(earlier..<starts[lo])
                }
            default: break
            }
        }
    }
}
