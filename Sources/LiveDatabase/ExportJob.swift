import CloudHTTP
import DumpKit
import Foundation
import JSONStream

/// `dumpkit export`: reads a subtree of a live database in pieces the database will answer, several
/// at a time, and writes the JSON one GET of it would return, members in the database's key order.
///
/// The children of the location are listed with `shallow=true`; their keys are cut into pages of
/// `pageSize`, each read with `orderBy="$key"`, `startAt` and `endAt` (JSON-encoded). A page the
/// database refuses as too large is halved; a single child that is too large is listed and paged
/// in turn. A location whose listing is itself refused as too large (millions of children) is read
/// one page after another with `limitToFirst`, each page starting at the last key of the one before. Every answer is saved in a folder beside the output (`.NAME.dumpkit-export.d`) and
/// noted in its journal, so a run killed midway and started again with the same arguments fetches
/// only what is missing; the output is then assembled from the saved answers in key order (a
/// canonical `JSONWriter`, which sorts with bounded memory), written to a temporary name and
/// renamed when complete. Memory: answers are streamed to their files and the keys of a listing
/// sorted on disk (`ListedKeys`), an array-like page put in index order with an `ExternalSorter`;
/// what is held is one small plan object per page.
///
/// The REST API has no snapshots: children written while an export runs may or may not be in it.
public struct ExportJob: Sendable {
    public var source: DatabaseURL
    public var output: String
    public var jobs: Int = 8
    /// Children per page before any split.
    public var pageSize: Int = 1000
    /// Only the keys of the location's children (`shallow=true`), as firebase-tools' `--shallow`.
    public var shallow = false
    /// `format=export`: leaves with priorities as `{".value", ".priority"}`, objects with `.priority`.
    public var exportFormat = false

    public init(source: DatabaseURL, output: String) {
        self.source = source
        self.output = output
    }

    /// What an export did.
    public struct Summary: Sendable {
        /// Requests answered in this run (lists and pages).
        public var requests = 0
        /// Ranges taken from an earlier, killed run's saved answers.
        public var resumed = 0
        /// Pages the database refused as too large, then split.
        public var splits = 0
        public var bytesFetched: Int64 = 0
        public var bytesWritten: Int64 = 0
    }

    /// The folder of saved answers and the journal: `.NAME.dumpkit-export.d` beside the output (in
    /// `TMPDIR` for an output in a bucket, `RunFiles`).
    public var workDirectory: String { RunFiles.beside(output, suffix: "dumpkit-export.d") }

    private var identity: String {
        "dumpkit export v1 \(source) page-size=\(pageSize) shallow=\(shallow) format=\(exportFormat ? "export" : "plain")"
    }

    /// Runs the export; `progress` hears of every finished request.
    public func run(client: DatabaseClient, progress: (@Sendable (Summary) -> Void)? = nil) async throws -> Summary {
        guard output != "-" else { throw UsageError("export writes to a file (it assembles saved pages): give -o FILE") }
        let fm = FileManager.default
        do {
            // Beside the output, whose folder must exist (it is not made, as no command makes one).
            if !fm.fileExists(atPath: workDirectory) { try fm.createDirectory(atPath: workDirectory, withIntermediateDirectories: false) }
        } catch {
            throw OutputError(
                file: output, message: "cannot make the folder of fetched pages \(workDirectory): \(error.localizedDescription)")
        }
        let journal = try RunJournal(path: workDirectory + "/journal", identity: identity)
        var summary = Summary()
        let root = NodePlan(path: [])
        do {
            try await fetch(root, journal: journal, client: client, summary: &summary, progress: progress)
        } catch {
            // Keep what was fetched for the next run; a run that fetched nothing leaves nothing.
            if journal.finished.isEmpty {
                journal.remove()
                try? fm.removeItem(atPath: workDirectory)
            }
            throw error
        }
        // Off the cooperative pool: an output in a bucket waits for its parts' uploads, which need it.
        let plan = PlanHandOff(root)
        summary.bytesWritten = try await onOwnThread { [self] in
            let out = try OutputFile(path: output)
            do {
                let writer = JSONWriter(sink: out, options: JSONWriter.Options(sortKeys: true, temporaryDirectory: workDirectory))
                try assemble(plan.root, writer: writer)
                try writer.flush()
                try out.commit()
            } catch {
                out.abort()
                throw error
            }
            return out.bytesWritten
        }
        journal.remove()
        try? fm.removeItem(atPath: workDirectory)
        return summary
    }

    // MARK: - The plan: what is listed, paged, split

    /// A location whose children are listed and paged (or whose whole value is one saved answer).
    /// The finished plan handed to the assembling thread; the fetching tasks are done with it.
    private final class PlanHandOff: @unchecked Sendable {
        let root: NodePlan
        init(_ root: NodePlan) { self.root = root }
    }

    final class NodePlan {
        let path: [String]
        var valueFile: String?
        /// With `format=export`: the saved answer of `PATH/.priority`, which listings leave out.
        var priorityFile: String?
        /// The children's keys, sorted on disk, when the location was listed as an object.
        var keys: ListedKeys?
        var pages: [PagePlan] = []
        /// The saved pages, in key order, of a location too large to list, and what they hold.
        var cursorPages: [CursorPlan]?
        var cursorKeys = 0
        var cursorIntegersOnly = true
        var cursorLargestInteger: Int32 = -1
        /// A child whose key a `KeySearch` found: it must exist.
        var foundBySearch = false
        init(path: [String]) { self.path = path }

        /// Counts a key of a page read after the one before.
        func count(_ key: String) {
            cursorKeys += 1
            if let i = DatabaseKeyOrder.integerValue(key.utf8), i >= 0 {
                cursorLargestInteger = max(cursorLargestInteger, i)
            } else {
                cursorIntegersOnly = false
            }
        }
    }

    /// A page of a location too large to list: its first `limit` children after the key `after` (from
    /// `startAt` the next key there can be), or its first `limit`.
    final class CursorPlan {
        let node: NodePlan
        let after: String?
        let limit: Int
        /// Whether this is the half of a refused page: the next page keeps its limit rather than doubling it.
        let isSplit: Bool
        var file: String?
        /// For a single child too large to read, found by a `KeySearch`: its key and its own plan.
        var childKey: String?
        var child: NodePlan?
        init(node: NodePlan, after: String?, limit: Int, isSplit: Bool) {
            self.node = node
            self.after = after
            self.limit = limit
            self.isSplit = isSplit
        }
    }

    /// A range of a listed location's keys, `keys[lo..<hi]`: its first and last key are kept, as the
    /// request and the journal name them.
    final class PagePlan {
        let node: NodePlan
        let lo: Int, hi: Int
        let first: String, last: String
        var file: String?
        var halves: [PagePlan] = []
        var child: NodePlan?
        init(node: NodePlan, lo: Int, hi: Int) throws {
            self.node = node
            self.lo = lo
            self.hi = hi
            first = try node.keys!.key(lo)
            last = hi - 1 == lo ? first : try node.keys!.key(hi - 1)
        }
    }

    /// One request to make, as a child task sees it (plans stay with the scheduling task).
    struct Fetch: Sendable {
        let unit: String
        let path: [String]
        let query: [(String, String)]
        let file: String
    }

    enum Outcome: Sendable {
        case saved(bytes: Int)
        case tooLarge

        var isTooLarge: Bool {
            if case .tooLarge = self { return true }
            return false
        }
    }

    /// The search for the key of the child after a cursor page's `after`, when that child alone is
    /// larger than one answer: the REST API names a child only in an answer that holds it, so its key
    /// is found by bisection with `endAt` bounds. The first child of `[after, bound]` refused as too
    /// large means the child is at or before `bound`; an answer means it is after. Integer keys (first
    /// in the database's order) are searched as numbers, other keys one Unicode scalar after another:
    /// below `prefix` alone (the key ends there), or below `prefix + scalar + ceiling`, which sorts
    /// after every key of at most 768 bytes that starts with `prefix + scalar`. The first split of a
    /// scalar is at `~`, so a character of printable ASCII takes about 8 probes.
    final class KeySearch {
        enum Stage {
            /// Is the key an integer? (The probe is the largest integer key.)
            case integerRegion
            case integer(lo: Int64, hi: Int64)
            /// What follows `prefix`: 0 for nothing, `i` for `scalar(i - 1)`, between `lo` and `hi`.
            case next(lo: Int, hi: Int)
        }
        let page: CursorPlan
        var prefix = ""
        var stage: Stage
        init(page: CursorPlan) {
            self.page = page
            // After a key that is not an integer, the child cannot be one.
            stage = page.after.map { DatabaseKeyOrder.integerValue($0.utf8) == nil } == true ? Self.wholeRange : .integerRegion
        }

        /// Key characters by index: U+0020...U+10FFFF without the surrogates, in code point (UTF-8 byte) order.
        static let scalarCount = 0x10FFFF - 0x20 + 1 - 0x800
        static func scalar(_ i: Int) -> Unicode.Scalar {
            let v = 0x20 + i
            return Unicode.Scalar(UInt32(v >= 0xD800 ? v + 0x800 : v))!
        }
        static let ceiling = String(repeating: "\u{10FFFF}", count: 193)
        static let wholeRange = Stage.next(lo: 0, hi: scalarCount)
        /// `~`'s place: the end of printable ASCII.
        static let asciiEnd = 0x7E - 0x20 + 1

        private static func middle(_ lo: Int, _ hi: Int) -> Int {
            lo == 0 && hi == scalarCount ? asciiEnd : lo + (hi - lo) / 2
        }

        /// The probe's bound, and a short name of it for the journal.
        var probe: (bound: String, name: String) {
            switch stage {
            case .integerRegion: return (String(Int32.max), "int?")
            case .integer(let lo, let hi):
                let mid = String(lo + (hi - lo) / 2)
                return (mid, "int " + mid)
            case .next(let lo, let hi):
                let mid = Self.middle(lo, hi)
                if mid == 0 { return (prefix, "whole " + prefix) }
                let start = prefix + String(Self.scalar(mid - 1))
                return (start + Self.ceiling, "below " + start)
            }
        }

        /// Takes a probe's outcome (`atOrBefore`: the child is at or before the bound); the key when found.
        func advance(atOrBefore: Bool) -> String? {
            switch stage {
            case .integerRegion:
                stage = atOrBefore ? .integer(lo: Int64(Int32.min), hi: Int64(Int32.max)) : Self.wholeRange
            case .integer(var lo, var hi):
                let mid = lo + (hi - lo) / 2
                if atOrBefore { hi = mid } else { lo = mid + 1 }
                if lo == hi { return String(lo) }
                stage = .integer(lo: lo, hi: hi)
            case .next(var lo, var hi):
                let mid = Self.middle(lo, hi)
                if atOrBefore { hi = mid } else { lo = mid + 1 }
                guard lo == hi else {
                    stage = .next(lo: lo, hi: hi)
                    return nil
                }
                if lo == 0 { return prefix }
                prefix.unicodeScalars.append(Self.scalar(lo - 1))
                stage = Self.wholeRange
            }
            return nil
        }
    }

    private enum Work {
        case list(NodePlan)
        case priority(NodePlan)
        case page(PagePlan)
        case cursor(CursorPlan)
        case probe(KeySearch)
    }

    private func unitID(_ work: Work) -> String {
        switch work {
        case .list(let node): return "L " + Self.jsonArray(node.path)
        case .priority(let node): return "R " + Self.jsonArray(node.path)
        case .page(let page):
            return "P " + Self.jsonArray(page.node.path) + " " + Self.jsonArray([page.first, page.last])
        case .cursor(let page):
            return "C " + Self.jsonArray(page.node.path) + " " + Self.jsonArray(page.after.map { [$0] } ?? []) + " \(page.limit)"
        case .probe(let search):
            let page = search.page
            return "K " + Self.jsonArray(page.node.path) + " " + Self.jsonArray((page.after.map { [$0] } ?? []) + [search.probe.name])
        }
    }

    private func request(_ work: Work) -> Fetch {
        let unit = unitID(work)
        let file = workDirectory + "/" + RunJournal.hash(unit) + RunJournal.hash("salt" + unit) + ".json"
        var query: [(String, String)] = []
        let path: [String]
        switch work {
        case .list(let node):
            path = node.path
            query = [("shallow", "true")]
        case .priority(let node):
            path = node.path + [".priority"]
        case .page(let page):
            path = page.node.path
            query = [
                ("orderBy", "\"$key\""), ("startAt", Self.jsonString(page.first)), ("endAt", Self.jsonString(page.last)),
            ]
            if exportFormat { query.append(("format", "export")) }
        case .cursor(let page):
            path = page.node.path
            query = [("orderBy", "\"$key\"")]
            if let after = page.after { query.append(("startAt", Self.jsonString(Self.keyAfter(after)))) }
            query.append(("limitToFirst", String(page.limit)))
            if exportFormat { query.append(("format", "export")) }
        case .probe(let search):
            let page = search.page
            path = page.node.path
            query = [("orderBy", "\"$key\"")]
            if let after = page.after { query.append(("startAt", Self.jsonString(Self.keyAfter(after)))) }
            query.append(("endAt", Self.jsonString(search.probe.bound)))
            query.append(("limitToFirst", "1"))
        }
        return Fetch(unit: unit, path: path, query: query, file: file)
    }

    /// Lists and pages until every range is saved, `jobs` requests at a time.
    private func fetch(
        _ root: NodePlan, journal: RunJournal, client: DatabaseClient, summary: inout Summary,
        progress: (@Sendable (Summary) -> Void)?
    ) async throws {
        var queue: [Work] = [.list(root)]
        var waiting: [String: Work] = [:]
        let source = self.source
        try await withThrowingTaskGroup(of: (String, Outcome).self) { group in
            var inFlight = 0
            while !queue.isEmpty || inFlight > 0 {
                while inFlight < max(1, jobs), !queue.isEmpty {
                    let work = queue.removeFirst()
                    let fetch = request(work)
                    if journal.contains("D " + fetch.unit) {
                        summary.resumed += 1
                        queue += try apply(work, .saved(bytes: 0), file: fetch.file)
                    } else if journal.contains("S " + fetch.unit) {
                        summary.resumed += 1
                        queue += try apply(work, .tooLarge, file: fetch.file)
                    } else {
                        waiting[fetch.unit] = work
                        inFlight += 1
                        group.addTask { (fetch.unit, try await Self.perform(fetch, source: source, client: client)) }
                    }
                }
                guard inFlight > 0, let result = try await group.next() else { continue }
                let (unit, outcome) = result
                inFlight -= 1
                let work = waiting.removeValue(forKey: unit)!
                summary.requests += 1
                switch outcome {
                case .saved(let bytes):
                    summary.bytesFetched += Int64(bytes)
                    queue += try apply(work, outcome, file: request(work).file)
                    try journal.record("D " + unit)
                case .tooLarge:
                    summary.splits += 1
                    queue += try apply(work, outcome, file: request(work).file)
                    try journal.record("S " + unit)
                }
                progress?(summary)
            }
        }
    }

    /// Makes one request and streams its answer to a file (a temporary name, renamed when whole), so
    /// that memory does not grow with the answer.
    private static func perform(_ fetch: Fetch, source: DatabaseURL, client: DatabaseClient) async throws -> Outcome {
        let temporary = fetch.file + ".part"
        let bytes: Int
        do {
            bytes = try await client.download(source, fetch.path, query: fetch.query, to: temporary)
        } catch let error as DatabaseRequestError where error.kind == .readTooLarge {
            return .tooLarge
        }
        guard rename(temporary, fetch.file) == 0 else {
            throw OutputError(file: fetch.file, message: "cannot save a fetched page: \(String(cString: strerror(errno)))")
        }
        return .saved(bytes: bytes)
    }

    /// Files an answer into the plan and returns the requests it calls for.
    private func apply(_ work: Work, _ outcome: Outcome, file: String) throws -> [Work] {
        switch (work, outcome) {
        case (.priority(let node), .saved):
            node.priorityFile = file
            return []
        case (.priority, .tooLarge):
            return []
        case (.list(let node), .saved):
            let followUp: [Work] = exportFormat && !shallow ? [.priority(node)] : []
            let reader = JSONReader(source: try InputFile(path: file), sourceName: file)
            let first = try reader.peek()
            if node.foundBySearch, first == .null {
                // Every read below the bound was refused, yet nothing is there: a value no answer can
                // hold (the database's strings are far below its limit), or the data changed meanwhile.
                throw DatabaseRequestError(
                    kind: .readTooLarge, status: 400,
                    message: "a child of this location is larger than one answer, and no key can be found for it",
                    request: "GET \(source.appending(Array(node.path.dropLast())).restURL(query: []))")
            }
            if shallow || first != .beginObject {
                node.valueFile = file
                return followUp
            }
            let keys = try ListedKeys(listing: file, temporaryDirectory: workDirectory)
            node.keys = keys
            let size = max(1, pageSize)
            node.pages = try stride(from: 0, to: keys.count, by: size).map {
                try PagePlan(node: node, lo: $0, hi: min($0 + size, keys.count))
            }
            return followUp + node.pages.map { .page($0) }
        case (.page(let page), .saved):
            page.file = file
            return []
        case (.page(let page), .tooLarge):
            if page.hi - page.lo > 1 {
                let mid = page.lo + (page.hi - page.lo) / 2
                page.halves = [try PagePlan(node: page.node, lo: page.lo, hi: mid), try PagePlan(node: page.node, lo: mid, hi: page.hi)]
                return page.halves.map { .page($0) }
            }
            let child = NodePlan(path: page.node.path + [page.first])
            page.child = child
            return [.list(child)]
        case (.list(let node), .tooLarge):
            guard !shallow else {
                throw DatabaseRequestError(
                    kind: .readTooLarge, status: 400,
                    message: "the list of the children's keys (shallow=true) is larger than the database answers; list its parts by path",
                    request: "GET \(source.appending(node.path).restURL(query: [("shallow", "true")]))")
            }
            node.cursorPages = []
            let first = CursorPlan(node: node, after: nil, limit: max(1, pageSize), isSplit: false)
            return (exportFormat ? [.priority(node)] : []) + [.cursor(first)]
        case (.cursor(let page), .saved):
            page.file = file
            let node = page.node
            node.cursorPages!.append(page)
            var count = 0
            var last: String?
            try forEachMember(file: file, of: node.path) { key, reader in
                try reader.skipValue()
                count += 1
                if last.map({ DatabaseKeyOrder.less($0, key) }) ?? true { last = key }
                node.count(key)
            }
            guard count >= page.limit, let last else { return [] }
            let limit = page.isSplit ? page.limit : min(max(1, pageSize), page.limit * 2)
            return [.cursor(CursorPlan(node: node, after: last, limit: limit, isSplit: false))]
        case (.cursor(let page), .tooLarge):
            guard page.limit == 1 else {
                return [.cursor(CursorPlan(node: page.node, after: page.after, limit: page.limit / 2, isSplit: true))]
            }
            return [.probe(KeySearch(page: page))]
        case (.probe(let search), _):
            unlink(file)
            guard let key = search.advance(atOrBefore: outcome.isTooLarge) else {
                guard search.prefix.utf8.count <= 768 else {
                    throw ExportChanged(
                        location: source.appending(search.page.node.path),
                        detail: "a child too large to read vanished while its key was sought")
                }
                return [.probe(search)]
            }
            let page = search.page, node = page.node
            page.childKey = key
            page.child = NodePlan(path: node.path + [key])
            page.child!.foundBySearch = true
            node.cursorPages!.append(page)
            node.count(key)
            return [.list(page.child!), .cursor(CursorPlan(node: node, after: key, limit: 1, isSplit: false))]
        }
    }

    // MARK: - Assembly

    /// Writes a node's value from its saved answers.
    private func assemble(_ node: NodePlan, writer: JSONWriter) throws {
        let priority = try node.priorityFile.flatMap { file -> [UInt8]? in
            let bytes = try Array(Data(contentsOf: URL(fileURLWithPath: file)))
            return bytes == Array("null".utf8) ? nil : bytes
        }
        if let file = node.valueFile {
            let reader = JSONReader(source: try InputFile(path: file), sourceName: file)
            if let priority, try reader.peek() != .null {
                try writer.beginObject()
                try writer.name(".priority")
                try priority.withUnsafeBytes { try writer.value(compactJSON: $0) }
                try writer.name(".value")
                try reader.transfer(to: writer)
                try writer.endObject()
            } else {
                try reader.transfer(to: writer)
            }
            return
        }
        if let cursorPages = node.cursorPages {
            try assembleCursorPages(cursorPages, of: node, priority: priority, writer: writer)
            return
        }
        if !exportFormat, node.keys?.readsAsArray == true {
            try writer.beginArray()
            var next: Int32 = 0
            for page in node.pages { try assembleArray(page, writer: writer, next: &next) }
            try writer.endArray()
            return
        }
        try writer.beginObject()
        if let priority {
            try writer.name(".priority")
            try priority.withUnsafeBytes { try writer.value(compactJSON: $0) }
        }
        for page in node.pages { try assembleObject(page, writer: writer) }
        try writer.endObject()
    }

    /// A location read page after page: an array when its keys read as one, `null` when it had no
    /// children by the time it was read.
    private func assembleCursorPages(_ pages: [CursorPlan], of node: NodePlan, priority: [UInt8]?, writer: JSONWriter) throws {
        guard node.cursorKeys > 0 else {
            try writer.null()
            return
        }
        if !exportFormat, node.cursorIntegersOnly, Int(node.cursorLargestInteger) < 2 * node.cursorKeys {
            try writer.beginArray()
            var next: Int32 = 0
            for page in pages {
                if let child = page.child, let key = page.childKey {
                    try writeHoles(upTo: key, writer: writer, next: &next)
                    try assemble(child, writer: writer)
                    next += 1
                } else {
                    try writeArrayMembers(file: page.file, of: node.path, writer: writer, next: &next)
                }
            }
            try writer.endArray()
            return
        }
        try writer.beginObject()
        if let priority {
            try writer.name(".priority")
            try priority.withUnsafeBytes { try writer.value(compactJSON: $0) }
        }
        for page in pages {
            if let child = page.child, let key = page.childKey {
                try writer.name(key)
                try assemble(child, writer: writer)
                continue
            }
            try forEachMember(file: page.file, of: node.path) { key, reader in
                try writer.name(key)
                try reader.transfer(to: writer)
            }
        }
        try writer.endObject()
    }

    private func assembleObject(_ page: PagePlan, writer: JSONWriter) throws {
        if let child = page.child {
            try writer.name(page.first)
            try assemble(child, writer: writer)
            return
        }
        if !page.halves.isEmpty {
            for half in page.halves { try assembleObject(half, writer: writer) }
            return
        }
        try forEachMember(file: page.file, of: page.node.path) { key, reader in
            try writer.name(key)
            try reader.transfer(to: writer)
        }
    }

    /// An array-like location's members, in index order with `null` for the holes.
    private func assembleArray(_ page: PagePlan, writer: JSONWriter, next: inout Int32) throws {
        if let child = page.child {
            try writeHoles(upTo: page.first, writer: writer, next: &next)
            try assemble(child, writer: writer)
            next += 1
            return
        }
        if !page.halves.isEmpty {
            for half in page.halves { try assembleArray(half, writer: writer, next: &next) }
            return
        }
        try writeArrayMembers(file: page.file, of: page.node.path, writer: writer, next: &next)
    }

    /// Writes the members of a saved page of an array-like location, from index `next` on.
    private func writeArrayMembers(file: String?, of path: [String], writer: JSONWriter, next: inout Int32) throws {
        // A page's members may come in any order: sort them by index (big-endian, so bytewise is
        // numeric), spilling past the sorter's budget rather than holding the answer.
        let members = ExternalSorter(temporaryDirectory: workDirectory)
        try forEachMember(file: file, of: path) { key, reader in
            guard let index = DatabaseKeyOrder.integerValue(key.utf8), index >= 0 else {
                throw ExportChanged(location: source.appending(path), detail: "key \(key) appeared in an array-like location")
            }
            let sink = MemoryByteSink()
            let w = JSONWriter(sink: sink)
            try reader.transfer(to: w)
            try w.flush()
            try members.add(key: withUnsafeBytes(of: UInt32(index).bigEndian) { Array($0) }, payload: sink.bytes)
        }
        let sorted = try members.sorted()
        while try sorted.next() {
            let index = sorted.key.reduce(0) { $0 << 8 | Int32($1) }
            try writeHoles(upTo: String(index), writer: writer, next: &next)
            try sorted.payload.withUnsafeBytes { try writer.value(compactJSON: $0) }
            next += 1
        }
    }

    private func writeHoles(upTo key: String, writer: JSONWriter, next: inout Int32) throws {
        guard let index = DatabaseKeyOrder.integerValue(key.utf8), index >= next else {
            throw ExportChanged(location: source, detail: "key \(key) out of order in an array-like location")
        }
        while next < index {
            try writer.null()
            next += 1
        }
    }

    /// Calls `body` with each member of a saved page of the location at `path` (an object, or an
    /// array the database made of integer keys), the reader positioned at its value.
    private func forEachMember(file: String?, of path: [String], _ body: (String, JSONReader) throws -> Void) throws {
        guard let file else { return }
        let reader = JSONReader(source: try InputFile(path: file), sourceName: file)
        switch try reader.next() {
        case .beginObject:
            while try reader.next() == .name { try body(reader.stringValue, reader) }
        case .beginArray:
            var i = 0
            while try reader.peek() != .endArray {
                if try reader.peek() == .null {
                    try reader.next()
                } else {
                    try body(String(i), reader)
                }
                i += 1
            }
            try reader.next()
        case .null:
            return  // every child of the range was deleted meanwhile
        default:
            throw ExportChanged(location: source.appending(path), detail: "a page came back as a single value")
        }
    }

    /// The first key there can be after `key` in the database's order: the next integer, else `key`
    /// and a space (no key holds a control character); after the largest integer, the first other key.
    static func keyAfter(_ key: String) -> String {
        guard let i = DatabaseKeyOrder.integerValue(key.utf8) else { return key + " " }
        return i < Int32.max ? String(i + 1) : " "
    }

    static func jsonString(_ s: String) -> String {
        let sink = MemoryByteSink()
        let w = JSONWriter(sink: sink)
        try? w.string(s)
        try? w.flush()
        return sink.string
    }

    static func jsonArray(_ items: [String]) -> String {
        let sink = MemoryByteSink()
        let w = JSONWriter(sink: sink)
        try? w.beginArray()
        for s in items { try? w.string(s) }
        try? w.endArray()
        try? w.flush()
        return sink.string
    }
}

/// The data changed under an export in a way its pages cannot be put together (run it again).
public struct ExportChanged: Error, CustomStringConvertible, Sendable {
    public let location: DatabaseURL
    public let detail: String
    public var description: String { "\(location): the data changed during the export (\(detail)); run it again" }
}
