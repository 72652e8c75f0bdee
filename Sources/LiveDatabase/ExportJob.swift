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
/// page after page with `limitToFirst`, each page from the first key there can be after the last
/// one read, in `jobs` chains cut between its first and last key. Every answer is saved in a
/// folder beside the output (`.NAME.dumpkit-export.d`) and noted in its journal, so a run killed
/// midway and started again with the same arguments fetches only what is missing; the output is
/// then assembled from the saved answers in key order (a canonical `JSONWriter`, which sorts with
/// bounded memory), written to a temporary name and renamed when complete. Memory: answers are streamed to their files and the keys of a listing
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
        // The journal and the fetched pages go: the export is done, or must start again.
        func removeWork() {
            journal.remove()
            try? fm.removeItem(atPath: workDirectory)
        }
        var summary = Summary()
        let root = NodePlan(path: [])
        do {
            try await fetch(root, journal: journal, client: client, summary: &summary, progress: progress)
        } catch {
            // Keep what was fetched for the next run; a run that fetched nothing leaves nothing, and
            // one that found the data changed under it starts again (its saved answers are stale).
            if journal.finished.isEmpty || error is ExportChanged { removeWork() }
            throw error
        }
        // Off the cooperative pool: an output in a bucket waits for its parts' uploads, which need it.
        let plan = PlanHandOff(root)
        do {
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
        } catch let error as ExportChanged {
            removeWork()
            throw error
        }
        removeWork()
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
        /// The saved pages of a location too large to list, by chain (a range of its keys, read page
        /// after page), chains and pages in key order; and what they hold.
        var cursorChains: [[CursorPlan]]?
        /// The keys of its pages so far.
        var cursorKeys = ArrayKeyCount()
        /// A child whose key a `KeySearch` found: it must exist.
        var foundBySearch = false
        /// Of a location too large to list: its first and last key (`limitToFirst=1`, `limitToLast=1`),
        /// to cut it into chains, and how many of the two answers are in.
        var edgeKeys: [String?] = [nil, nil]
        var edgesIn = 0
        init(path: [String]) { self.path = path }

    }

    /// A page of a location too large to list: the first `limit` children from the key `from` (`startAt`,
    /// `nil` from the first) up to `to` (`endAt`, `nil` to the last), in chain `chain`.
    final class CursorPlan {
        let node: NodePlan
        let chain: Int
        let from: String?, to: String?
        let limit: Int
        /// Whether this is the half of a refused page: the next page keeps its limit rather than doubling it.
        let isSplit: Bool
        var file: String?
        /// For a single child too large to read, found by a `KeySearch`: its key and its own plan.
        var childKey: String?
        var child: NodePlan?
        init(node: NodePlan, chain: Int, from: String?, to: String?, limit: Int, isSplit: Bool) {
            self.node = node
            self.chain = chain
            self.from = from
            self.to = to
            self.limit = limit
            self.isSplit = isSplit
        }

        /// The page after this one, from the first key there can be after `key`.
        func next(after key: String, limit: Int) -> CursorPlan {
            CursorPlan(node: node, chain: chain, from: ExportJob.keyAfter(key), to: to, limit: limit, isSplit: false)
        }
    }

    /// Where to cut a location too large to list, whose first key is `first` and last `last`, into
    /// `count` chains: strings evenly spaced between them, read as numbers in base 97 (no character,
    /// printable ASCII, anything above) over the 8 characters after their common prefix. Push IDs
    /// (time first, then random) spread evenly; only strictly increasing bounds between the two
    /// that are not integers are kept. Integer keys are not cut.
    package static func chainBounds(first: String, last: String, count: Int) -> [String] {
        guard count > 1, DatabaseKeyOrder.integerValue(first.utf8) == nil, DatabaseKeyOrder.integerValue(last.utf8) == nil,
            DatabaseKeyOrder.less(first, last)
        else { return [] }
        let a = Array(first.unicodeScalars), z = Array(last.unicodeScalars)
        var common = 0
        while common < min(a.count, z.count), a[common] == z[common] { common += 1 }
        let prefix = String(String.UnicodeScalarView(a[..<common]))
        func value(_ s: [Unicode.Scalar]) -> Int64 {
            (0..<8).reduce(Int64(0)) { v, i in
                let c = common + i < s.count ? s[common + i].value : 0
                let digit: Int64 = common + i >= s.count ? 0 : c < 0x20 ? 1 : c <= 0x7E ? Int64(c - 0x20 + 1) : 96
                return v * 97 + digit
            }
        }
        let lo = value(a), hi = value(z)
        var bounds: [String] = []
        for i in 1..<count {
            var v = lo + (hi - lo) * Int64(i) / Int64(count)
            var digits: [Int64] = []
            for _ in 0..<8 {
                digits.append(v % 97)
                v /= 97
            }
            var bound = prefix
            for d in digits.reversed() {
                guard d > 0 else { break }
                bound.unicodeScalars.append(Unicode.Scalar(UInt8(d == 96 ? 0x7F : 0x20 + d - 1)))
            }
            if DatabaseKeyOrder.integerValue(bound.utf8) == nil, DatabaseKeyOrder.less(bounds.last ?? first, bound),
                DatabaseKeyOrder.less(bound, last)
            {
                bounds.append(bound)
            }
        }
        return bounds
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

    /// The search for the key of the first child from `from` (a `startAt`, `nil` from the first key),
    /// when that child alone is larger than one answer: the REST API names a child only in an answer
    /// that holds it, so its key is found by bisection with `endAt` bounds. The first child of
    /// `[from, bound]` refused as too large means the child is at or before `bound`; an answer means
    /// it is after. Integer keys (first in the database's order) are searched as numbers, other keys
    /// one Unicode scalar after another: below `prefix` alone (the key ends there), or below
    /// `prefix + scalar + ceiling`, which sorts after every key of at most 768 bytes that starts with
    /// `prefix + scalar` and is at most 768 bytes itself. The first split of a scalar is at `~`, so a
    /// character of printable ASCII takes about 8 probes. A search that cannot end on a key (the child
    /// was deleted meanwhile) says so after one more probe rather than growing the prefix to 768 bytes.
    package final class KeySearch {
        enum Stage {
            /// Is the key an integer? (The probe is the largest integer key.)
            case integerRegion
            case integer(lo: Int64, hi: Int64)
            /// What follows `prefix`: 0 for nothing, `i` for `scalar(i - 1)`, between `lo` and `hi`
            /// (`top`: the largest that keeps the key within 768 bytes, never probed by the bisection).
            case next(lo: Int, hi: Int, top: Int)
            /// Every probe below `top` was refused: is the key really there?
            case confirm(Int)
        }

        /// Where a probe leaves the search.
        package enum Step: Equatable {
            case searching
            case found(String)
            /// No key fits the answers: the child is gone.
            case vanished
        }

        package private(set) var prefix = ""
        private var stage = Stage.integerRegion
        private let lowestInteger: Int64

        package init(from: String?) {
            let integer = from.flatMap { DatabaseKeyOrder.integerValue($0.utf8) }
            lowestInteger = Int64(integer ?? Int32.min)
            // From a key that is not an integer, the child cannot be one.
            if from != nil, integer == nil { startScalar() }
        }

        /// Key characters by index: U+0020...U+10FFFF without the surrogates, in code point (UTF-8 byte) order.
        static let scalarCount = 0x10FFFF - 0x20 + 1 - 0x800
        static func scalar(_ i: Int) -> Unicode.Scalar {
            let v = 0x20 + i
            return Unicode.Scalar(UInt32(v >= 0xD800 ? v + 0x800 : v))!
        }
        /// The place of the scalar `v` after the "nothing" at 0.
        static func place(_ v: UInt32) -> Int { Int(v) - 0x20 - (v >= 0xE000 ? 0x800 : 0) + 1 }
        /// `~`'s place: the end of printable ASCII.
        static let asciiEnd = place(0x7E)

        /// Starts on the scalar after `prefix`: any that keeps the key within 768 bytes.
        private func startScalar() {
            let room = 768 - prefix.utf8.count
            let top =
                room >= 4
                ? Self.scalarCount : room == 3 ? Self.place(0xFFFF) : room == 2 ? Self.place(0x7FF) : room == 1 ? Self.asciiEnd : 0
            stage = top == 0 ? .confirm(0) : .next(lo: 0, hi: top, top: top)
        }

        private static func middle(_ lo: Int, _ hi: Int) -> Int {
            lo == 0 && hi == scalarCount ? asciiEnd : lo + (hi - lo) / 2
        }

        /// `start` followed by the largest scalars that keep it within 768 bytes: at or after every key
        /// that starts with `start`.
        static func ceiling(after start: String) -> String {
            var bound = start
            let room = max(0, 768 - start.utf8.count)
            bound += String(repeating: "\u{10FFFF}", count: room / 4)
            // The largest key character of 1, 2 or 3 bytes.
            let last: [Unicode.Scalar] = ["~", "\u{7FF}", "\u{FFFF}"]
            if room % 4 > 0 { bound.unicodeScalars.append(last[room % 4 - 1]) }
            return bound
        }

        /// The bound below which the key is, if it continues at place `i`.
        private func bound(_ i: Int) -> (bound: String, name: String) {
            if i == 0 { return (prefix, "whole " + prefix) }
            let start = prefix + String(Self.scalar(i - 1))
            return (Self.ceiling(after: start), "below " + start)
        }

        /// The probe's bound, and a short name of it for the journal.
        package var probe: (bound: String, name: String) {
            switch stage {
            case .integerRegion: return (String(Int32.max), "int?")
            case .integer(let lo, let hi):
                let mid = String(lo + (hi - lo) / 2)
                return (mid, "int " + mid)
            case .next(let lo, let hi, _): return bound(Self.middle(lo, hi))
            case .confirm(let i): return bound(i)
            }
        }

        /// Takes a probe's outcome (`atOrBefore`: the child is at or before the bound).
        package func advance(atOrBefore: Bool) -> Step {
            switch stage {
            case .integerRegion:
                if atOrBefore {
                    stage = .integer(lo: lowestInteger, hi: Int64(Int32.max))
                } else {
                    startScalar()
                }
            case .integer(var lo, var hi):
                let mid = lo + (hi - lo) / 2
                if atOrBefore { hi = mid } else { lo = mid + 1 }
                if lo == hi { return .found(String(lo)) }
                stage = .integer(lo: lo, hi: hi)
            case .next(var lo, var hi, let top):
                let mid = Self.middle(lo, hi)
                if atOrBefore { hi = mid } else { lo = mid + 1 }
                guard lo == hi else {
                    stage = .next(lo: lo, hi: hi, top: top)
                    return .searching
                }
                if lo == top {
                    stage = .confirm(top)
                    return .searching
                }
                return take(lo)
            case .confirm(let i):
                return atOrBefore ? take(i) : .vanished
            }
            return .searching
        }

        /// The key continues at place `i` (or ends, at 0).
        private func take(_ i: Int) -> Step {
            if i == 0 { return prefix.isEmpty ? .vanished : .found(prefix) }
            prefix.unicodeScalars.append(Self.scalar(i - 1))
            startScalar()
            return .searching
        }
    }

    private enum Work {
        case list(NodePlan)
        case priority(NodePlan)
        case page(PagePlan)
        case edge(NodePlan, last: Bool)
        case cursor(CursorPlan)
        case probe(CursorPlan, KeySearch)
    }

    private func unitID(_ work: Work) -> String {
        switch work {
        case .list(let node): return "L " + Self.jsonArray(node.path)
        case .priority(let node): return "R " + Self.jsonArray(node.path)
        case .page(let page):
            return "P " + Self.jsonArray(page.node.path) + " " + Self.jsonArray([page.first, page.last])
        case .edge(let node, let last): return (last ? "E> " : "E< ") + Self.jsonArray(node.path)
        case .cursor(let page):
            return "C " + Self.jsonArray(page.node.path) + " " + Self.jsonArray([page.from ?? "", page.to ?? ""]) + " \(page.limit)"
        case .probe(let page, let search):
            return "K " + Self.jsonArray(page.node.path) + " " + Self.jsonArray([page.from ?? "", page.to ?? "", search.probe.name])
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
        case .edge(let node, let last):
            path = node.path
            query = [("orderBy", "\"$key\""), (last ? "limitToLast" : "limitToFirst", "1")]
        case .cursor(let page):
            path = page.node.path
            query = [("orderBy", "\"$key\"")]
            if let from = page.from { query.append(("startAt", Self.jsonString(from))) }
            if let to = page.to { query.append(("endAt", Self.jsonString(to))) }
            query.append(("limitToFirst", String(page.limit)))
            if exportFormat { query.append(("format", "export")) }
        case .probe(let page, let search):
            path = page.node.path
            query = [("orderBy", "\"$key\"")]
            if let from = page.from { query.append(("startAt", Self.jsonString(from))) }
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
                    switch work {
                    case .probe, .edge: break  // answers, not splits
                    default: summary.splits += 1
                    }
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
                // Every read up to this key was refused, yet nothing is here: the child was deleted
                // meanwhile, or a value no answer can hold (the database's strings are far below its limit).
                throw ExportChanged(
                    location: source.appending(node.path),
                    detail: "no child at this key, though every read up to it was refused as too large")
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
            // Its first and last key first, to read it in `jobs` chains at a time.
            let edges: [Work] = jobs > 1 ? [.edge(node, last: false), .edge(node, last: true)] : []
            return (exportFormat ? [.priority(node)] : []) + (edges.isEmpty ? startChains(node) : edges)
        case (.edge(let node, let last), _):
            node.edgesIn += 1
            if case .saved = outcome {
                try forEachMember(file: file, of: node.path) { key, reader in
                    try reader.skipValue()
                    if !key.hasPrefix(".") { node.edgeKeys[last ? 1 : 0] = key }
                }
            }
            return node.edgesIn == 2 ? startChains(node) : []
        case (.cursor(let page), .saved):
            page.file = file
            let node = page.node
            node.cursorChains![page.chain].append(page)
            var count = 0
            var last: String?
            try forEachMember(file: file, of: node.path) { key, reader in
                try reader.skipValue()
                guard !key.hasPrefix(".") else { return }
                count += 1
                if last.map({ DatabaseKeyOrder.less($0, key) }) ?? true { last = key }
                node.cursorKeys.add(key)
            }
            guard count >= page.limit, let last else { return [] }
            return [.cursor(page.next(after: last, limit: page.isSplit ? page.limit : min(max(1, pageSize), page.limit * 2)))]
        case (.cursor(let page), .tooLarge):
            guard page.limit == 1 else {
                let half = CursorPlan(
                    node: page.node, chain: page.chain, from: page.from, to: page.to, limit: page.limit / 2, isSplit: true)
                return [.cursor(half)]
            }
            return [.probe(page, KeySearch(from: page.from))]
        case (.probe(let page, let search), _):
            unlink(file)
            let key: String
            switch search.advance(atOrBefore: outcome.isTooLarge) {
            case .searching: return [.probe(page, search)]
            case .found(let found): key = found
            case .vanished:
                throw ExportChanged(
                    location: source.appending(page.node.path), detail: "a child too large to read vanished while its key was sought")
            }
            let node = page.node
            page.childKey = key
            page.child = NodePlan(path: node.path + [key])
            page.child!.foundBySearch = true
            node.cursorChains![page.chain].append(page)
            node.cursorKeys.add(key)
            if let to = page.to, !DatabaseKeyOrder.less(key, to) { return [.list(page.child!)] }
            return [.list(page.child!), .cursor(page.next(after: key, limit: 1))]
        }
    }

    /// The first pages of the chains of a location too large to list: one chain, or `jobs` when its
    /// first and last keys are known and can be cut between (`chainBounds`).
    private func startChains(_ node: NodePlan) -> [Work] {
        var bounds: [String] = []
        if let first = node.edgeKeys[0], let last = node.edgeKeys[1] {
            bounds = Self.chainBounds(first: first, last: last, count: max(1, jobs))
        }
        node.cursorChains = Array(repeating: [], count: bounds.count + 1)
        return (0...bounds.count).map { i in
            .cursor(
                CursorPlan(
                    node: node, chain: i, from: i == 0 ? nil : Self.keyAfter(bounds[i - 1]), to: i == bounds.count ? nil : bounds[i],
                    limit: max(1, pageSize), isSplit: false))
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
        if let chains = node.cursorChains {
            try assembleCursorPages(chains.flatMap { $0 }, of: node, priority: priority, writer: writer)
            return
        }
        if !exportFormat, node.keys?.readsAsArray == true {
            try writer.beginArray()
            var next: Int32 = 0
            for page in node.pages { try assembleArray(page, writer: writer, next: &next) }
            try writer.endArray()
            return
        }
        try beginObject(priority: priority, writer: writer)
        for page in node.pages { try assembleObject(page, writer: writer) }
        try writer.endObject()
    }

    /// Opens an object and writes the location's priority in it, if it has one.
    private func beginObject(priority: [UInt8]?, writer: JSONWriter) throws {
        try writer.beginObject()
        if let priority {
            try writer.name(".priority")
            try priority.withUnsafeBytes { try writer.value(compactJSON: $0) }
        }
    }

    /// A location read page after page: an array when its keys read as one, `null` when it had no
    /// children by the time it was read.
    private func assembleCursorPages(_ pages: [CursorPlan], of node: NodePlan, priority: [UInt8]?, writer: JSONWriter) throws {
        guard node.cursorKeys.count > 0 else {
            try writer.null()
            return
        }
        if !exportFormat, node.cursorKeys.readsAsArray {
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
        try beginObject(priority: priority, writer: writer)
        for page in pages {
            if let child = page.child, let key = page.childKey {
                try writer.name(key)
                try assemble(child, writer: writer)
                continue
            }
            try forEachMember(file: page.file, of: node.path) { key, reader in
                // With `format=export` a page may carry the location's priority, which is read apart.
                guard !key.hasPrefix(".") else { return try reader.skipValue() }
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
        let sink = MemoryByteSink()
        let w = JSONWriter(sink: sink)
        try forEachMember(file: file, of: path) { key, reader in
            guard let index = DatabaseKeyOrder.integerValue(key.utf8), index >= 0 else {
                throw ExportChanged(location: source.appending(path), detail: "key \(key) appeared in an array-like location")
            }
            sink.removeAll(keepingCapacityUpTo: 1 << 20)
            w.reset()
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
