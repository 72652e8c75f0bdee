import Foundation
import JSONStream
import NIOConcurrencyHelpers

/// The test server's database: one namespace held in memory, answering REST requests as the
/// Firebase Realtime Database REST API documents them.
///
/// References: firebase.google.com/docs/reference/rest/database (methods, query parameters, error
/// conditions), firebase.google.com/docs/database/rest/retrieve-data (`shallow`, `print`,
/// `orderBy="$key"` with `startAt`/`endAt`/`limitToFirst`/`limitToLast`, `format=export`),
/// firebase.google.com/docs/database/rest/save-data (PUT, PATCH with multi-path updates, DELETE),
/// firebase.google.com/docs/database/usage/limits (the size of one read and one write).
/// Not implemented: POST (push IDs), ETags, `print=pretty`, `callback`, `timeout`, and ordering by
/// anything but `$key` (refused with a 400 that says so).
public final class RTDBDatabase: Sendable {
    /// Settings, fixed when the server starts.
    public struct Configuration: Sendable {
        /// The namespace (`NS` in `NS.firebaseio.com`); requests naming another in `ns` get 404.
        public var namespace: String
        /// The largest response, in bytes (the real limit is 256 MB); larger reads get the documented 400.
        public var maxResponseBytes: Int
        /// The largest write body, in bytes (256 MB for REST); larger writes get the documented 400.
        public var maxWriteBytes: Int
        /// When set, every request must carry this credential as `auth=`, `access_token=` or a bearer token.
        public var requiredCredential: String?
        /// Writes at or below these paths are refused with 401 "Permission denied", as security rules would.
        public var deniedWritePaths: [[String]]
        /// The security rules at the start, as `GET /.settings/rules.json` returns them (comments and
        /// all, as the real database keeps them); `nil` answers 404.
        public var rules: [UInt8]?
        /// Writes are checked and answered as if applied, and then dropped: for measuring a client's
        /// import of more data than this server could hold (not the database's behaviour).
        public var discardsWrites = false

        public init(
            namespace: String = "test-db", maxResponseBytes: Int = 256_000_000, maxWriteBytes: Int = 256_000_000,
            requiredCredential: String? = nil, deniedWritePaths: [[String]] = [],
            rules: [UInt8]? = Array("{\n  \"rules\": {\n    \".read\": false,\n    \".write\": false\n  }\n}".utf8)
        ) {
            self.namespace = namespace
            self.maxResponseBytes = maxResponseBytes
            self.maxWriteBytes = maxWriteBytes
            self.requiredCredential = requiredCredential
            self.deniedWritePaths = deniedWritePaths
            self.rules = rules
        }
    }

    /// The documented message of an oversize read (firebase.google.com/docs/database/usage/limits).
    public static let readTooLargeMessage = "Data requested exceeds the maximum size that can be accessed with a single request."
    /// The documented message of an oversize write.
    public static let writeTooLargeMessage = "Data to write exceeds the maximum size that can be modified with a single request."

    public let configuration: Configuration
    private let root = NIOLockedValueBox(DataNode())
    /// The file served read-only in place of `root` (`serve(file:)`).
    private let served = NIOLockedValueBox<ServedFile?>(nil)
    private let rulesText: NIOLockedValueBox<[UInt8]?>

    /// The children's keys of queried nodes in the database's order, by path, as of write number
    /// `generation` (every write clears them): a key query's page is then found by binary search, not
    /// by a pass over every key of a large node, which made a 1 GB export take half an hour.
    private struct KeyIndex {
        var generation = 0
        var keys: [[String]: [String]] = [:]
    }
    private let keyIndex = NIOLockedValueBox(KeyIndex())

    /// Called inside `root`'s lock after every change (the lock order is root, then keyIndex).
    private func changed() {
        keyIndex.withLockedValue {
            $0.generation += 1
            $0.keys.removeAll()
        }
    }

    /// The sorted keys of `node`, the node at `path` as of `generation`.
    private func sortedKeys(of node: DataNode, at path: [String], generation: Int) -> [String] {
        if let keys = keyIndex.withLockedValue({ $0.generation == generation ? $0.keys[path] : nil }) { return keys }
        let keys = node.sortedKeys
        keyIndex.withLockedValue { if $0.generation == generation { $0.keys[path] = keys } }
        return keys
    }

    public init(configuration: Configuration) {
        self.configuration = configuration
        rulesText = NIOLockedValueBox(configuration.rules)
    }

    /// The security rules as last written, byte for byte.
    public var rules: [UInt8]? { rulesText.withLockedValue { $0 } }

    /// Replaces the data at `path` with `json` (test set-up, no limits).
    public func load(json: [UInt8], at path: [String] = []) throws {
        try store(JSONReader(bytes: json), at: path, whole: true)
    }

    /// Loads a dataset file of any size (`rtdb-test-server --load`): the values `depth` levels down
    /// (and shallower ones that are not objects) are read and stored one by one, so that no value
    /// needs to fit the reader's 512 MiB limit for one value, nor be held twice.
    public func load(file: String, depth: Int = 3) throws {
        let reader = JSONReader(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: file), options: .alwaysMapped)))
        try load(reader, at: [], depth: depth)
    }

    private func load(_ reader: JSONReader, at path: [String], depth: Int) throws {
        if path.count < depth, try reader.peek() == .beginObject {
            try reader.next()
            while try reader.next() == .name { try load(reader, at: path + [reader.stringValue], depth: depth) }
            return
        }
        try store(reader, at: path, whole: false)
    }

    /// Replaces the data at `path` with the next value of `reader`, which must be all it holds when
    /// `whole`; nothing changes on an error.
    private func store(_ reader: JSONReader, at path: [String], whole: Bool) throws {
        try root.withLockedValue { root in
            let node = try Self.node(of: reader, at: path, over: root)
            if whole, try reader.next() != .end { throw reader.error(.trailingData, "unexpected content after the value") }
            root.set(path[...], to: node)
            changed()
        }
    }

    /// The node the next value of `reader` becomes at `path`, read over the root `existing`.
    static func node(of reader: JSONReader, at path: [String], over existing: DataNode, now: Int64 = now()) throws -> DataNode {
        var nodes = WrittenNodeReader(reader: reader, now: now, existing: existing)
        let node = try nodes.node(at: path)
        if let refusal = nodes.refusal { throw refusal }
        return node
    }

    /// Serves `file` read-only from now on, in place of the data in memory: reads are answered from
    /// the file's bytes (its objects indexed `indexDepth` levels down), writes refused. The file must
    /// be canonical (as `dumpkit export` writes it); see `ServedFile`.
    public func serve(file: String, indexDepth: Int = 3) throws {
        let file = try ServedFile(path: file, indexDepth: indexDepth)
        served.withLockedValue { $0 = file }
    }

    /// What a plain GET of `path` returns (compact JSON, database key order), without limits.
    public func contents(at path: [String] = [], export: Bool = false) -> [UInt8] {
        let node = root.withLockedValue { $0.node(at: path[...]) } ?? DataNode()
        return Self.render(node, export: export)
    }

    /// Answers one request.
    public func handle(_ request: RESTRequest) -> RESTResponse {
        if let ns = request.query["ns"], ns != configuration.namespace {
            return .error(404, "Firebase Database not found: namespace \(ns) does not exist here")
        }
        if let required = configuration.requiredCredential {
            let given = request.query["auth"] ?? request.query["access_token"] ?? request.bearerToken
            guard let given else { return .error(401, "Permission denied") }
            guard given == required else { return .error(401, "Could not parse auth token.") }
        }
        if request.path == [".settings", "rules"] { return rulesRequest(request) }
        for key in request.path where key != ".priority" && !DataNode.isValidKey(key) {
            return .error(400, "Invalid path: \(key) is not a valid key")
        }
        let silent = request.query["print"] == "silent"
        if request.method != "GET", served.withLockedValue({ $0 != nil }) {
            return .error(405, "this test server serves a file read-only (--serve)")
        }
        switch request.method {
        case "GET": return get(request, silent: silent)
        case "PUT", "PATCH", "DELETE": return write(request, silent: silent)
        default: return .error(405, "\(request.method) is not supported by this test server")
        }
    }

    // MARK: - Rules

    /// `/.settings/rules.json`: "make a GET request to the /.settings/rules.json path ... The response
    /// will contain all of the rules", and "a PUT request to the /.settings/rules.json path" writes
    /// them, which "will overwrite any existing rules" (firebase.google.com/docs/database/rest/app-management,
    /// linked from the REST reference). Rules are kept as the bytes written (comments included, as the
    /// console keeps them); a PUT whose body is not a rules object (JSON with comments, a "rules"
    /// member) is refused with a 400. The answer to a PUT is not documented: this server answers
    /// `{"status":"ok"}`.
    private func rulesRequest(_ request: RESTRequest) -> RESTResponse {
        switch request.method {
        case "GET":
            guard let rules else { return .error(404, "Not found: no rules set") }
            return RESTResponse(status: 200, body: rules)
        case "PUT":
            var options = JSONReader.Options()
            options.relaxed = true
            let parsed = try? JSONReader(source: MemoryByteSource(request.body), options: options).readValue()
            guard parsed?.objectValue?["rules"]?.objectValue != nil else {
                return .error(400, "Invalid rules: expected an object with a \"rules\" object")
            }
            rulesText.withLockedValue { $0 = request.body }
            return RESTResponse(status: 200, body: Array(#"{"status":"ok"}"#.utf8))
        default:
            return .error(405, "\(request.method) is not supported on /.settings/rules.json by this test server")
        }
    }

    // MARK: - Reads

    private func get(_ request: RESTRequest, silent: Bool) -> RESTResponse {
        let q = request.query
        let export = q["format"] == "export"
        let isQuery = Self.isQuery(q)
        var generation = 0
        var node: DataNode
        if let file = served.withLockedValue({ $0 }) {
            do {
                switch try file.locate(request.path) {
                case .indexed(let object): return get(object, of: file, request, silent: silent)
                case .parsed(let parsed): node = parsed
                }
            } catch {
                return .error(500, "\(file.path): \(error)")
            }
        } else {
            node =
                root.withLockedValue { root in
                    generation = keyIndex.withLockedValue { $0.generation }
                    return root.node(at: request.path[...])
                } ?? DataNode()
        }
        if q["shallow"] == "true" {
            if isQuery { return .error(400, Self.shallowQueryMessage) }
            if node.leaf == nil {
                var shallow = DataNode()
                for key in node.children.keys {
                    var t = DataNode()
                    t.leaf = .bool(true)
                    shallow.children[key] = t
                }
                node = shallow
            }
            // The limit is on every response ("Size of a single response served by the database"),
            // so a location with millions of children cannot be listed whole.
            let body = Self.render(node, export: false, arrays: false)
            if body.count > configuration.maxResponseBytes { return .error(400, Self.readTooLargeMessage) }
            return respond(body, silent: silent)
        }
        if isQuery {
            if let refusal = Self.refusal(ofQuery: q) { return refusal }
            do {
                let queried = node
                node = Self.keyQuery(node, try KeyQuery(q)) { self.sortedKeys(of: queried, at: request.path, generation: generation) }
            } catch let refusal as DataNode.WriteRefusal {
                return .error(400, refusal.message)
            } catch {
                return .error(400, "\(error)")
            }
        }
        let body = Self.render(node, export: export)
        if body.count > configuration.maxResponseBytes { return .error(400, Self.readTooLargeMessage) }
        return respond(body, silent: silent)
    }

    /// Whether a read is a query (REST reference, "Filtering data").
    private static func isQuery(_ q: [String: String]) -> Bool {
        ["orderBy", "startAt", "endAt", "equalTo", "limitToFirst", "limitToLast"].contains { q[$0] != nil }
    }

    /// "shallow cannot be mixed with any other query parameters" (REST reference, "shallow").
    private static let shallowQueryMessage = "Mixing shallow and querying parameters is not supported"

    /// The answer to a query this server does not run: one without `orderBy`, or ordered by
    /// anything but `$key`.
    private static func refusal(ofQuery q: [String: String]) -> RESTResponse? {
        guard let orderBy = q["orderBy"] else {
            return .error(400, "orderBy must be defined when other query parameters are defined")
        }
        guard orderBy == "\"$key\"" else { return .error(400, "this test server orders only by \"$key\", not \(orderBy)") }
        return nil
    }

    /// A read of an indexed object of a served file: the answer cut from the file's bytes (parsed
    /// only with `format=export`, or for a query whose children read as an array).
    private func get(_ object: ServedFile.Object, of file: ServedFile, _ request: RESTRequest, silent: Bool) -> RESTResponse {
        let q = request.query
        let export = q["format"] == "export"
        let limit = configuration.maxResponseBytes
        do {
            if q["shallow"] == "true" {
                if Self.isQuery(q) { return .error(400, Self.shallowQueryMessage) }
                var body: [UInt8] = [UInt8(ascii: "{")]
                for i in 0..<object.count {
                    if i > 0 { body.append(UInt8(ascii: ",")) }
                    body += file.bytes(object.keyQuote[i], object.valueStart[i] - 1) + Array(":true".utf8)
                    // With the closing brace still to come.
                    if body.count + 1 > limit { return .error(400, Self.readTooLargeMessage) }
                }
                body.append(UInt8(ascii: "}"))
                return respond(body, silent: silent)
            }
            let selected: [Int]
            if Self.isQuery(q) {
                if let refusal = Self.refusal(ofQuery: q) { return refusal }
                selected = try KeyQuery(q).select(count: object.count) { file.key($0, of: object) }
            } else if !export {
                if object.end - object.start > limit { return .error(400, Self.readTooLargeMessage) }
                return respond(file.bytes(object.start, object.end), silent: silent)
            } else {
                selected = Array(0..<object.count)
            }
            var integerKeys = !export
            var largest: Int32 = -1
            for i in selected where integerKeys {
                guard let n = DatabaseKeyOrder.integerValue(file.key(i, of: object).utf8), n >= 0 else {
                    integerKeys = false
                    break
                }
                largest = max(largest, n)
            }
            if export || (integerKeys && Int(largest) < 2 * selected.count) {
                var node = DataNode()
                for i in selected { node.children[file.key(i, of: object)] = try file.node(ofMember: i, in: object) }
                let body = Self.render(node, export: export)
                if body.count > limit { return .error(400, Self.readTooLargeMessage) }
                return respond(body, silent: silent)
            }
            guard !selected.isEmpty else { return respond(Array("null".utf8), silent: silent) }
            var body: [UInt8] = [UInt8(ascii: "{")]
            for i in selected {
                if body.count > 1 { body.append(UInt8(ascii: ",")) }
                file.appendMember(i, of: object, to: &body)
                if body.count + 1 > limit { return .error(400, Self.readTooLargeMessage) }
            }
            body.append(UInt8(ascii: "}"))
            return respond(body, silent: silent)
        } catch let refusal as DataNode.WriteRefusal {
            return .error(400, refusal.message)
        } catch {
            return .error(500, "\(file.path): \(error)")
        }
    }

    /// The children of `node` a `$key` query selects.
    private static func keyQuery(_ node: DataNode, _ query: KeyQuery, sortedKeys: () -> [String]) -> DataNode {
        guard node.leaf == nil else { return node }
        let all = sortedKeys()
        var result = DataNode()
        for i in query.select(count: all.count, key: { all[$0] }) { result.children[all[i]] = node.children[all[i]] }
        return result
    }

    /// A query ordered by `$key`: the children whose keys lie in `[startAt, endAt]` (or equal
    /// `equalTo`), the first or last `limit` of them.
    struct KeyQuery {
        let start, end, equal: String?
        let first, last: Int?

        init(_ q: [String: String]) throws {
            func key(_ name: String) throws -> String? {
                guard let text = q[name] else { return nil }
                guard let s = try? JSONReader(bytes: Array(text.utf8)).readValue().stringValue else {
                    throw DataNode.WriteRefusal(message: "\(name) must be a JSON string when ordering by $key")
                }
                return s
            }
            func limit(_ name: String) throws -> Int? {
                guard let text = q[name] else { return nil }
                guard let n = Int(text), n > 0 else { throw DataNode.WriteRefusal(message: "\(name) must be a positive integer") }
                return n
            }
            start = try key("startAt")
            end = try key("endAt")
            equal = try key("equalTo")
            first = try limit("limitToFirst")
            last = try limit("limitToLast")
            if first != nil, last != nil { throw DataNode.WriteRefusal(message: "limitToFirst and limitToLast cannot both be set") }
        }

        /// The positions selected among `count` keys in the database's order, `key(i)` the i-th.
        func select(count: Int, key: (Int) -> String) -> [Int] {
            // The first position where `p` holds (it holds from there on).
            func boundary(_ p: (String) -> Bool) -> Int {
                var lo = 0, hi = count
                while lo < hi {
                    let mid = (lo + hi) / 2
                    if p(key(mid)) { hi = mid } else { lo = mid + 1 }
                }
                return lo
            }
            var lo = start.map { s in boundary { !DatabaseKeyOrder.less($0, s) } } ?? 0
            var hi = end.map { e in boundary { DatabaseKeyOrder.less(e, $0) } } ?? count
            if let equal {
                lo = max(lo, boundary { !DatabaseKeyOrder.less($0, equal) })
                hi = min(hi, boundary { DatabaseKeyOrder.less(equal, $0) })
            }
            guard lo < hi else { return [] }
            if let first { hi = min(hi, lo + first) }
            if let last { lo = max(lo, hi - last) }
            return Array(lo..<hi)
        }
    }

    // MARK: - Writes

    private func write(_ request: RESTRequest, silent: Bool) -> RESTResponse {
        if request.body.count > configuration.maxWriteBytes { return .error(400, Self.writeTooLargeMessage) }
        // Read under the lock, since server values depend on the data there.
        return root.withLockedValue { root in
            let read: (updates: [(path: [String], node: DataNode)], refusal: DataNode.WriteRefusal?)?
            do {
                read = try Self.updates(of: request, over: root)
            } catch {
                return .error(400, "Invalid data; couldn't parse JSON object, array, or value.")
            }
            guard let (updates, refusal) = read else {
                return .error(400, "Invalid data; couldn't parse JSON object. PATCH needs an object.")
            }
            // Sorted by segments, a path's descendants follow it directly (any order of keys does).
            let sorted = updates.map(\.path).sorted { a, b in
                for (x, y) in zip(a, b) where x != y { return x < y }
                return a.count < b.count
            }
            for (a, b) in zip(sorted, sorted.dropFirst()) where b.starts(with: a) {
                let pa = a.joined(separator: "/"), pb = b.joined(separator: "/")
                return .error(400, "Invalid data; path /\(pa) is an ancestor or duplicate of /\(pb) in one update")
            }
            for (path, _) in updates {
                for denied in configuration.deniedWritePaths where path.starts(with: denied) {
                    return .error(401, "Permission denied")
                }
                for key in path where key != ".priority" && !DataNode.isValidKey(key) {
                    return .error(400, "Invalid path: \(key) is not a valid key")
                }
            }
            if let refusal { return .error(400, refusal.message) }
            if !configuration.discardsWrites {
                for (path, node) in updates { root.set(path[...], to: node) }
                changed()
            }
            // PUT and PATCH answer with the data written, DELETE with null.
            return respond(request.method == "DELETE" ? Array("null".utf8) : request.body, silent: silent)
        }
    }

    /// The paths a write sets and the nodes it sets them to, read over the root `existing`, with the
    /// first refusal of its data; `nil` for a PATCH of something else than an object. All or nothing:
    /// the whole body is parsed and every node built before anything changes, and `existing` is let
    /// go of before then (a second reference would make each change copy the data on its path).
    private static func updates(
        of request: RESTRequest, over existing: DataNode
    ) throws -> (updates: [(path: [String], node: DataNode)], refusal: DataNode.WriteRefusal?)? {
        if request.method == "DELETE" { return ([(request.path, DataNode())], nil) }
        let reader = JSONReader(bytes: request.body)
        var nodes = WrittenNodeReader(reader: reader, now: now(), existing: existing)
        var updates: [(path: [String], node: DataNode)] = []
        if request.method == "PATCH" {
            guard try reader.peek() == .beginObject else {
                try reader.skipValue()
                guard try reader.next() == .end else { throw reader.error(.trailingData, "content after the value") }
                return nil
            }
            // A multi-path PATCH: each key is a path relative to the request's (REST reference, "PATCH").
            try reader.next()
            while try reader.next() == .name {
                let path = request.path + reader.stringValue.split(separator: "/").map(String.init)
                updates.append((path, try nodes.node(at: path)))
            }
        } else {
            updates.append((request.path, try nodes.node(at: request.path)))
        }
        guard try reader.next() == .end else { throw reader.error(.trailingData, "content after the value") }
        return (updates, nodes.refusal)
    }

    // MARK: - Helpers

    private func respond(_ body: [UInt8], silent: Bool) -> RESTResponse {
        // "print=silent returns a 204 No Content on success" (retrieve-data, "print").
        silent ? RESTResponse(status: 204, body: []) : RESTResponse(status: 200, body: body)
    }

    static func render(_ node: DataNode, export: Bool, arrays: Bool = true) -> [UInt8] {
        let sink = MemoryByteSink()
        let writer = JSONWriter(sink: sink)
        if !arrays, node.leaf == nil, node.exists {
            // Shallow results are objects of `true`s whatever their keys.
            try? writer.beginObject()
            for key in node.sortedKeys {
                try? writer.name(key)
                try? writer.bool(true)
            }
            try? writer.endObject()
        } else {
            try? node.write(to: writer, export: export)
        }
        try? writer.flush()
        return sink.bytes
    }

    static func now() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }
}
