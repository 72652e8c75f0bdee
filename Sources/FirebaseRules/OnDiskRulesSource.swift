import JSONStream

/// A `RulesSnapshotSource` over a dump in a file, for dumps larger than memory.
///
/// A path is followed through the large containers by their `RulesDumpIndex` entries; below the
/// first value without member entries (at most `expandBytes` of input, or a primitive) the value is
/// parsed from the file and navigated in memory. Parsed values are kept in a cache of at most
/// `cacheBytes` of input, emptied when full. `content`, `childKeys` and `priority` of a large
/// container are answered from the index; only `value(at:)` of one (a rule comparing the `val()` of
/// a large object) reads it whole.
public final class OnDiskRulesSource: RulesSnapshotSource {
    /// Containers up to this many bytes of input are read whole when rules look into them.
    public static let defaultExpandBytes: Int64 = 256 << 10

    /// The first error reading the file; lookups that fail see no data, so check this afterwards.
    public private(set) var readError: (any Error)?
    private let file: PositionalByteSource
    private let name: String
    private let index: RulesDumpIndex
    private let cacheBytes: Int64
    private var cache: [Int32: JSONValue] = [:]
    private var cachedBytes: Int64 = 0
    /// The keys of the last path located through expanded containers, and the entry each leads to.
    private var lastPath: [String] = []
    private var lastChain: [Int32] = []

    /// A source over `file` (named `name` in errors) whose `index` was built from a complete pass
    /// over it.
    package init(file: PositionalByteSource, name: String, index: RulesDumpIndex, cacheBytes: Int64 = 16 << 20) {
        index.finish()
        self.file = file
        self.name = name
        self.index = index
        self.cacheBytes = cacheBytes
    }

    /// Indexes `file` in a pass of its own.
    package static func indexing(_ file: PositionalByteSource, name: String, expandBytes: Int64 = defaultExpandBytes) throws
        -> OnDiskRulesSource
    {
        let index = RulesDumpIndex(expandBytes: expandBytes)
        let reader = JSONReader(source: file.stream(), sourceName: name)
        reader.tokenObserver = { index.observe($0, $1) }
        try reader.skipValue()
        guard try reader.next() == .end else { throw reader.error(.trailingData, "unexpected data after the JSON value") }
        return OnDiskRulesSource(file: file, name: name, index: index)
    }

    /// The deepest entry on `path` and the keys left below it; nil when an expanded container lacks
    /// the next key.
    private func locate(_ path: [String]) -> (entry: Int32, rest: ArraySlice<String>)? {
        var e: Int32 = 0
        var depth = 0
        // Rules look up paths next to each other: reuse the previous lookups as far as they agree.
        while depth < path.count, depth < lastChain.count, lastPath[depth] == path[depth] {
            e = lastChain[depth]
            depth += 1
        }
        lastPath.removeSubrange(depth...)
        lastChain.removeSubrange(depth...)
        while depth < path.count {
            guard index.entries[Int(e)].expanded else { return (e, path[depth...]) }
            guard let child = index.child(of: e, named: path[depth]) else { return nil }
            e = child
            lastPath.append(path[depth])
            lastChain.append(child)
            depth += 1
        }
        return (e, path[path.count...])
    }

    /// The entry at `path` when it is an expanded container.
    private func expanded(_ path: [String]) -> Int32? {
        guard let (e, rest) = locate(path), rest.isEmpty, index.entries[Int(e)].expanded else { return nil }
        return e
    }

    public func value(at path: [String]) -> JSONValue? {
        guard let (e, rest) = locate(path), let value = parse(e) else { return nil }
        return rest.isEmpty ? value : value.value(at: rest)
    }

    public func content(at path: [String]) -> RulesNodeContent {
        guard let e = expanded(path) else { return value(at: path).map(RulesSnapshot.content(of:)) ?? .absent }
        if index.entries[Int(e)].kind == .object, let wrapped = index.child(of: e, named: ".value") {
            let v = parse(wrapped) ?? .null
            return v.isNull ? .absent : .leaf(v)
        }
        return index.children(of: e).contains { isPresentChild($0) } ? .branch : .absent
    }

    public func childKeys(at path: [String]) -> [String] {
        var keys: [String] = []
        forEachChildKey(at: path) { keys.append($0) }
        return keys
    }

    public func forEachChildKey(at path: [String], _ body: (String) -> Void) {
        guard let e = expanded(path) else {
            value(at: path).map(RulesSnapshot.childKeys(of:))?.forEach(body)
            return
        }
        if index.entries[Int(e)].kind == .object, index.child(of: e, named: ".value") != nil { return }
        for c in index.children(of: e) where isPresentChild(c) { body(index.key(of: c)) }
    }

    public func priority(at path: [String]) -> JSONValue? {
        guard let e = expanded(path) else { return value(at: path)?.objectValue?[".priority"] }
        guard index.entries[Int(e)].kind == .object, let p = index.child(of: e, named: ".priority") else { return nil }
        return parse(p)
    }

    private func isPresentChild(_ c: Int32) -> Bool {
        guard index.entries[Int(c)].present else { return false }
        let key = index.keyBytes(of: c)
        return !key.elementsEqual(".priority".utf8) && !key.elementsEqual(".value".utf8)
    }

    /// The value of an entry, from the cache or the file.
    private func parse(_ e: Int32) -> JSONValue? {
        if let v = cache[e] { return v }
        let entry = index.entries[Int(e)]
        do {
            var bytes = [UInt8](repeating: 0, count: Int(entry.length))
            var done = 0
            while done < bytes.count {
                let n = try bytes.withUnsafeMutableBytes {
                    try file.read(at: entry.offset + Int64(done), into: UnsafeMutableRawBufferPointer(rebasing: $0[done...]))
                }
                guard n > 0 else {
                    throw InputError(
                        file: name, message: "ended at byte \(entry.offset + Int64(done)) while rereading it for rules; was it changed?")
                }
                done += n
            }
            let reader = JSONReader(bytes: bytes, options: .init(bufferSize: bytes.count + 64))
            reader.sourceName = name
            let value = try reader.readValue()
            if entry.length <= cacheBytes {
                if cachedBytes + entry.length > cacheBytes {
                    cache.removeAll(keepingCapacity: true)
                    cachedBytes = 0
                }
                cache[e] = value
                cachedBytes += entry.length
            }
            return value
        } catch {
            if readError == nil { readError = error }
            return nil
        }
    }
}
