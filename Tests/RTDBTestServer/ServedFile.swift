import Foundation
import JSONStream

/// A database served read-only from a canonical JSON file (`rtdb-test-server --serve`), without
/// loading it: the file is mapped, and the objects of its first `indexDepth` levels are indexed (each
/// member's key and where its value starts and ends). Answers at those levels are cut from the
/// file's bytes; below them a value is parsed into a `DataNode` when asked for. It lets the tests'
/// server answer reads of more data than its in-memory tree could hold (a 10 GB export).
///
/// The file must be what a GET of the root returns (as `dumpkit export` or `convert --canonical`
/// write it): compact, members in the database's key order, no priorities. Key order and compactness
/// are checked where the file is indexed; below, values are sent as their bytes.
final class ServedFile: @unchecked Sendable {
    /// An indexed object: its members' keys and values, by their offsets in the file.
    final class Object {
        /// Where the object's `{` is, and one past its `}`.
        var start = 0, end = 0
        /// Per member: the offset of its key's opening quote, and where its value starts and ends.
        var keyQuote: [Int] = [], valueStart: [Int] = [], valueEnd: [Int] = []
        /// Members that are indexed objects themselves, by member number.
        var objects: [Int: Object] = [:]
        var count: Int { keyQuote.count }
    }

    /// A file that cannot be served (not canonical where indexed).
    struct NotCanonical: Error, CustomStringConvertible {
        let file: String
        let offset: Int
        let detail: String
        var description: String { "\(file): byte \(offset): \(detail) (--serve needs the canonical form, as export writes it)" }
    }

    let path: String
    private let data: Data
    /// The root object; `nil` when the file's value is not an object (served by parsing it).
    let root: Object?

    init(path: String, indexDepth: Int) throws {
        self.path = path
        data = try Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped)
        let reader = JSONReader(source: MappedBytes(data), sourceName: path)
        root =
            try reader.peek() == .beginObject && indexDepth > 0 ? try Self.index(reader, data, path, depth: 1, indexDepth: indexDepth) : nil
    }

    /// Indexes the object the reader is at (peeked), objects below it to `indexDepth`.
    private static func index(_ reader: JSONReader, _ data: Data, _ path: String, depth: Int, indexDepth: Int) throws -> Object {
        let object = Object()
        try reader.next()
        object.start = Int(reader.offset)
        var previous: String?
        var token = try reader.next()
        while token == .name {
            let quote = Int(reader.offset)
            let key = reader.stringValue
            if let previous, !DatabaseKeyOrder.less(previous, key) {
                throw NotCanonical(file: path, offset: quote, detail: "key \(key) is not after \(previous) in the database's order")
            }
            previous = key
            let kind = try reader.peek()
            let start = Int(reader.offset)
            guard data[start - 1] == UInt8(ascii: ":"), data[start - 2] == UInt8(ascii: "\"") else {
                throw NotCanonical(file: path, offset: start, detail: "space around a member")
            }
            if kind == .beginObject, depth < indexDepth {
                object.objects[object.count] = try index(reader, data, path, depth: depth + 1, indexDepth: indexDepth)
            } else {
                try reader.skipValue()
            }
            token = try reader.next()
            let end = token == .name ? Int(reader.offset) - 1 : Int(reader.offset)
            guard data[end] == UInt8(ascii: token == .name ? "," : "}"), ![0x20, 0x09, 0x0A, 0x0D].contains(data[end - 1]) else {
                throw NotCanonical(file: path, offset: end, detail: "space after a value")
            }
            object.keyQuote.append(quote)
            object.valueStart.append(start)
            object.valueEnd.append(end)
        }
        object.end = Int(reader.offset) + 1
        return object
    }

    /// Where a path leads: an indexed object, or a parsed value below the index.
    enum Location {
        case indexed(Object)
        case parsed(DataNode)
    }

    func locate(_ path: [String]) throws -> Location {
        guard var object = root else { return .parsed(try node(start: 0, end: data.count).node(at: path[...]) ?? DataNode()) }
        for (depth, segment) in path.enumerated() {
            guard let i = index(of: segment, in: object) else {
                // Not a member; `.priority` of an object from the file is none.
                return .parsed(DataNode())
            }
            if let child = object.objects[i] {
                object = child
                continue
            }
            let value = try node(start: object.valueStart[i], end: object.valueEnd[i])
            return .parsed(value.node(at: path[(depth + 1)...]) ?? DataNode())
        }
        return .indexed(object)
    }

    /// The key of member `i`.
    func key(_ i: Int, of object: Object) -> String {
        let raw = bytes(object.keyQuote[i], object.valueStart[i] - 1)
        guard raw.contains(UInt8(ascii: "\\")) else { return String(decoding: raw.dropFirst().dropLast(), as: UTF8.self) }
        return (try? JSONReader(bytes: raw).readValue().stringValue) ?? ""
    }

    /// The member number of `key`, by binary search.
    func index(of key: String, in object: Object) -> Int? {
        let i = boundary(in: object) { !DatabaseKeyOrder.less($0, key) }
        return i < object.count && self.key(i, of: object) == key ? i : nil
    }

    /// The first member number from which `p` holds for every key (it must hold from there on).
    func boundary(in object: Object, _ p: (String) -> Bool) -> Int {
        var lo = 0, hi = object.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if p(key(mid, of: object)) { hi = mid } else { lo = mid + 1 }
        }
        return lo
    }

    /// The file's bytes from `start` to `end`.
    func bytes(_ start: Int, _ end: Int) -> [UInt8] { Array(data[start..<end]) }

    /// Appends the raw key and value of member `i` (`"key":value`) to `body`.
    func appendMember(_ i: Int, of object: Object, to body: inout [UInt8]) {
        data.withUnsafeBytes { raw in
            body.append(contentsOf: raw[object.keyQuote[i]..<object.valueEnd[i]])
        }
    }

    /// The value of member `i` as a node.
    func node(ofMember i: Int, in object: Object) throws -> DataNode {
        try node(start: object.valueStart[i], end: object.valueEnd[i])
    }

    /// A value of the file parsed into a node.
    func node(start: Int, end: Int) throws -> DataNode {
        var options = JSONReader.Options()
        options.maxValueBytes = Int.max
        return try RTDBDatabase.node(of: JSONReader(bytes: bytes(start, end), options: options), at: [], over: DataNode(), now: 0)
    }
}

/// Reads a mapped file's bytes for `JSONReader`.
private final class MappedBytes: JSONByteSource {
    private let data: Data
    private var position = 0
    init(_ data: Data) { self.data = data }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let n = min(buffer.count, data.count - position)
        guard n > 0 else { return 0 }
        data.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + position, byteCount: n) }
        position += n
        return n
    }
}
