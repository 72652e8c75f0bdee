import DumpKit
import Foundation
import JSONStream

/// `dumpkit import --verify`: exports the target after an import and compares it with the dump by
/// value, with memory that does not grow with either.
///
/// The target is exported as `export` does (`ExportJob`, ranges streamed to a file). Then both the
/// dump and the export are rewritten in one canonical form (members in the database's key order,
/// arrays as objects keyed by index, `null` members left out) through a sorting `JSONWriter` that
/// spills to disk, and the two canonical files are walked side by side.
///
/// What must hold: after a merge, every value the dump names is at its path (the database may hold
/// more); after `--replace`, each top-level child of the dump is equal as a whole (other top-level
/// children are not looked at). Values are compared as the database keeps them: numbers by value
/// (exact decimal, or equal as doubles, which is what the database stores), strings by code points,
/// `null` and empty objects as no data, arrays as objects keyed by index, `.priority` members left
/// out and `{".value": v}` taken as `v`.
///
/// Files go to `.NAME.dumpkit-verify.d` beside the dump, removed when done (a killed verification
/// starts over).
public struct ImportVerification: Sendable {
    public var dump: String
    public var target: DatabaseURL
    public var mode: ImportChunker.Mode
    /// Requests in flight during the export.
    public var jobs = 8
    /// Differences kept with their pointers (all are counted).
    public var shownDifferences = 10

    public init(dump: String, target: DatabaseURL, mode: ImportChunker.Mode) {
        self.dump = dump
        self.target = target
        self.mode = mode
    }

    /// One place where the database does not hold what the dump says.
    public struct Difference: Sendable, Equatable {
        /// The JSON Pointer in the dump (relative to the target).
        public let pointer: String
        public let detail: String
    }

    /// What a verification found.
    public struct Report: Sendable {
        public var differences = 0
        /// The first `shownDifferences` differences, in key order.
        public var first: [Difference] = []
        /// Requests of the export.
        public var requests = 0
        public var bytesFetched: Int64 = 0
    }

    /// The folder of the export and the canonical files: `.NAME.dumpkit-verify.d` beside the dump (in
    /// `TMPDIR` for a dump in a bucket, `RunFiles`).
    public var workDirectory: String { RunFiles.beside(dump, suffix: "dumpkit-verify.d") }

    /// Exports the target and compares it with the dump.
    public func run(client: DatabaseClient) async throws -> Report {
        let fm = FileManager.default
        try? fm.removeItem(atPath: workDirectory)
        do {
            try fm.createDirectory(atPath: workDirectory, withIntermediateDirectories: false)
        } catch {
            throw OutputError(file: workDirectory, message: "cannot make the folder of the verification: \(error.localizedDescription)")
        }
        defer { try? fm.removeItem(atPath: workDirectory) }
        var export = ExportJob(source: target, output: workDirectory + "/database.json")
        export.jobs = jobs
        let exported = try await export.run(client: client)
        var report = Report(requests: exported.requests, bytesFetched: exported.bytesFetched)
        try Self.canonicalize(dump, to: workDirectory + "/dump.canonical.json", temporary: workDirectory)
        try Self.canonicalize(export.output, to: workDirectory + "/database.canonical.json", temporary: workDirectory)
        let walk = CanonicalComparison(
            dump: JSONReader(source: try InputFile(path: workDirectory + "/dump.canonical.json")),
            database: JSONReader(source: try InputFile(path: workDirectory + "/database.canonical.json")),
            replace: mode == .replace, shown: shownDifferences)
        try walk.compare([])
        report.differences = walk.differences
        report.first = walk.first
        return report
    }

    /// Rewrites `input` in the canonical form the comparison walks.
    static func canonicalize(_ input: String, to output: String, temporary: String) throws {
        let reader = JSONReader(source: try InputFile(path: input), sourceName: input)
        let out = try OutputFile(path: output)
        do {
            let writer = JSONWriter(sink: out, options: JSONWriter.Options(sortKeys: true, temporaryDirectory: temporary))
            try canonicalValue(reader, writer)
            try writer.flush()
            try out.commit()
        } catch {
            out.abort()
            throw error
        }
    }

    private static func canonicalValue(_ r: JSONReader, _ w: JSONWriter) throws {
        switch try r.peek() {
        case .beginObject:
            try r.next()
            try w.beginObject()
            while try r.next() == .name {
                let key = r.stringValue
                if try r.peek() == .null {
                    try r.next()
                    continue
                }
                try w.name(key)
                try canonicalValue(r, w)
            }
            try w.endObject()
        case .beginArray:
            try r.next()
            try w.beginObject()
            var index = 0
            while try r.peek() != .endArray {
                if try r.peek() == .null {
                    try r.next()
                } else {
                    try w.name(String(index))
                    try canonicalValue(r, w)
                }
                index += 1
            }
            try r.next()
            try w.endObject()
        default:
            try r.transfer(to: w)
        }
    }
}

/// Walks two canonical files side by side, counting where the database differs from the dump.
final class CanonicalComparison {
    private let d: JSONReader
    private let b: JSONReader
    /// Whether the top-level children must be equal as a whole (`--replace`), else contained.
    private let replace: Bool
    private let shown: Int
    private(set) var differences = 0
    private(set) var first: [ImportVerification.Difference] = []

    init(dump: JSONReader, database: JSONReader, replace: Bool, shown: Int) {
        d = dump
        b = database
        self.replace = replace
        self.shown = shown
    }

    private func differ(_ path: [String], _ detail: String) {
        differences += 1
        if first.count < shown { first.append(.init(pointer: JSONPointer.string(path), detail: detail)) }
    }

    /// Compares the values both readers are at, and consumes them.
    func compare(_ path: [String]) throws {
        // Below a replaced top-level child, what the database has beyond the dump is a difference too.
        let exact = replace && !path.isEmpty
        switch (try d.peek() == .beginObject, try b.peek() == .beginObject) {
        case (true, true):
            try d.next()
            try b.next()
            var dk = try nextKey(d), bk = try nextKey(b)
            while dk != nil || bk != nil {
                if let k = dk, bk == nil || DatabaseKeyOrder.less(k, bk!) {
                    if try hasData(d) { differ(path + [k], "not in the database") }
                    dk = try nextKey(d)
                } else if let k = bk, dk == nil || DatabaseKeyOrder.less(k, dk!) {
                    if try hasData(b), exact { differ(path + [k], "in the database, not in the dump") }
                    bk = try nextKey(b)
                } else {
                    try compare(path + [dk!])
                    dk = try nextKey(d)
                    bk = try nextKey(b)
                }
            }
        case (true, false):
            // `{".value": v, ".priority": p}` stands for v; an object without data for nothing.
            try d.next()
            if try b.peek() == .null {
                // Nothing there: each member of the dump is missing on its own.
                try b.next()
                while let k = try nextKey(d) {
                    if try hasData(d) { differ(k == ".value" ? path : path + [k], "not in the database") }
                }
                return
            }
            var matched = false, data = false
            while let k = try nextKey(d) {
                if k == ".value", !matched {
                    try compare(path)
                    matched = true
                } else if try hasData(d) {
                    data = true
                }
            }
            if !matched {
                let there = try hasData(b)
                if data {
                    differ(path, there ? "the dump has an object, the database a value" : "not in the database")
                } else if exact, there {
                    differ(path, "the database has a value, the dump nothing")
                }
            }
        case (false, true):
            let token = try d.next()
            let shown = describe(token, d)
            let there = try hasData(b)
            if token != .null {
                differ(path, there ? "the dump has \(shown), the database an object" : "not in the database")
            } else if exact, there {
                differ(path, "the database has an object, the dump nothing")
            }
        case (false, false):
            let dt = try d.next()
            let dumpValue = describe(dt, d)
            let dumpText = Self.text(dt, d)
            let bt = try b.next()
            if dt == .null {
                if exact, bt != .null { differ(path, "the database has \(describe(bt, b)), the dump nothing") }
            } else if bt == .null {
                differ(path, "not in the database")
            } else if !Self.sameLeaf(dt, dumpText, bt, Self.text(bt, b)) {
                differ(path, "the dump has \(dumpValue), the database \(describe(bt, b))")
            }
        }
    }

    /// The next member's name, `.priority` members skipped; `nil` at the object's end.
    private func nextKey(_ r: JSONReader) throws -> String? {
        while try r.next() == .name {
            let key = r.stringValue
            if key == ".priority" {
                try r.skipValue()
                continue
            }
            return key
        }
        return nil
    }

    /// Consumes a value and tells whether it holds any data (a leaf other than `null`).
    private func hasData(_ r: JSONReader) throws -> Bool {
        var depth = 0, found = false
        repeat {
            switch try r.next() {
            case .beginObject, .beginArray: depth += 1
            case .endObject, .endArray: depth -= 1
            case .name, .null: break
            case .end: return found
            default: found = true
            }
        } while depth > 0
        return found
    }

    /// The text of a string or number token (other tokens have none).
    private static func text(_ token: JSONToken, _ r: JSONReader) -> String {
        token == .string || token == .number ? r.stringValue : ""
    }

    static func sameLeaf(_ a: JSONToken, _ aText: String, _ b: JSONToken, _ bText: String) -> Bool {
        guard a == b else { return false }
        switch a {
        case .string: return JSONValue.sameCodePoints(aText, bText)
        case .number:
            if aText == bText { return true }
            if let x = ExactDecimal(aText), let y = ExactDecimal(bText), x == y { return true }
            // The database keeps numbers as doubles: 12345678901234567891 comes back as 12345678901234567000.
            guard let x = Double(aText), let y = Double(bText), x.isFinite else { return false }
            return x == y
        default: return true
        }
    }

    /// A leaf for a message: JSON text, long strings cut.
    private func describe(_ token: JSONToken, _ r: JSONReader) -> String {
        switch token {
        case .string:
            let s = r.stringValue
            return ExportJob.jsonString(s.count > 40 ? String(s.prefix(40)) + "..." : s)
        case .number: return r.stringValue
        case .true: return "true"
        case .false: return "false"
        case .null: return "null"
        default: return "an object"
        }
    }
}
