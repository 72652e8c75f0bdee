import JSONStream

/// Joins the shards' rejects (`REJECTS.part-I-of-N`, each line after its sort key in hex and a
/// space) into the order the unsharded run writes them in: by the key (the path the record was read
/// at, in the database's key order, then the reject's number in its record). Each part is already in
/// that order, so this is a merge of N sorted streams holding one line of each.
struct RejectsMerger {
    let parts: [String]

    func run(into sink: JSONByteSink) throws {
        var readers = try parts.map { part -> LineReader in
            let missing = ShardError(message: "\(part) is missing: run that shard again")
            // In a bucket, only a part that is not there is missing; the store's own errors stand.
            if BucketParts.isURL(part) {
                guard try BucketParts.exists(part) else { throw missing }
                return LineReader(file: try PositionalInput.open(part).source, name: part)
            }
            do { return LineReader(file: try ReadOnlyFile(path: part), name: part) } catch { throw missing }
        }
        var heads = try readers.indices.map { try readers[$0].next() }
        while true {
            var best: Int?
            for i in heads.indices {
                guard let line = heads[i] else { continue }
                if let b = best, !(line.key.lexicographicallyPrecedes(heads[b]!.key)) { continue }
                best = i
            }
            guard let b = best else { return }
            try heads[b]!.line.withUnsafeBytes { try sink.write($0) }
            heads[b] = try readers[b].next()
        }
    }

    /// Reads `key line\n` records of one part.
    private struct LineReader {
        let file: PositionalByteSource
        let name: String
        var offset: Int64 = 0
        var buffer: [UInt8] = []
        var start = 0
        var atEnd = false

        init(file: PositionalByteSource, name: String) {
            self.file = file
            self.name = name
        }

        /// The next line's key and the line itself (with its line break), or nil at the end.
        mutating func next() throws -> (key: ArraySlice<UInt8>, line: ArraySlice<UInt8>)? {
            while true {
                if let nl = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
                    let record = buffer[start...nl]
                    start = nl + 1
                    guard let space = record.firstIndex(of: UInt8(ascii: " ")) else {
                        throw ShardError(message: "\(name): a line without its sort key; run that shard again")
                    }
                    return (record[record.startIndex..<space], record[(space + 1)...])
                }
                if atEnd {
                    guard start == buffer.count else {
                        throw ShardError(message: "\(name) ends in the middle of a line; run that shard again")
                    }
                    return nil
                }
                buffer.removeFirst(start)
                start = 0
                let old = buffer.count
                buffer += [UInt8](repeating: 0, count: 1 << 16)
                let n = try buffer.withUnsafeMutableBytes {
                    try file.read(at: offset, into: UnsafeMutableRawBufferPointer(rebasing: $0[old...]))
                }
                buffer.removeLast((1 << 16) - n)
                offset += Int64(n)
                if n == 0 { atEnd = true }
            }
        }
    }
}
