import Foundation
import JSONStream
import Yams

/// `dumpkit validate`: the database's limits, JSON Schemas per record pattern and security rules,
/// checked over a dump, reported as findings.
public struct ValidateJob {
    /// A schema bound to the records a pattern matches.
    public struct SchemaBinding {
        public var pattern: PathPattern
        public var file: String
        public var schema: JSONSchema
    }

    public var input: String
    public var schemas: [SchemaBinding] = []
    public var rules: RulesFile?
    public var auth: JSONValue = .null
    public var strict = false
    public var maxFindings = 1000
    /// Dumps up to this size are held in memory for rules, whose `root` lookups can reach anywhere.
    public var rulesMemoryLimit: Int64 = 2 << 30

    public init(input: String) { self.input = input }

    /// Compiles the schema at `file` for the records `pattern` matches; errors name the file.
    public static func loadSchema(pattern: String, file: String) throws -> SchemaBinding {
        let p = try PathPattern(pattern)
        let url = URL(fileURLWithPath: file).standardizedFileURL
        guard let data = FileManager.default.contents(atPath: url.path) else { throw InputError(file: file, message: "cannot read the schema") }
        let value = try JSONReader(source: MemoryByteSource([UInt8](data)), sourceName: file).readValue()
        let dir = url.deletingLastPathComponent()
        let base = "file://" + dir.path + "/"
        do {
            let schema = try JSONSchema.compile(value, baseURI: base + url.lastPathComponent, resolver: .directory(dir, servedAs: base))
            return SchemaBinding(pattern: p, file: file, schema: schema)
        } catch {
            throw InputError(file: file, message: "invalid schema: \(error)")
        }
    }

    /// Reads a schema map (JSON or YAML: `{"/v1/todolist/{id}": "todolist.schema.json"}`), with
    /// files relative to the map.
    public static func loadSchemaMap(_ path: String) throws -> [SchemaBinding] {
        guard let data = FileManager.default.contents(atPath: path) else { throw InputError(file: path, message: "cannot read the schema map") }
        let dir = URL(fileURLWithPath: path).deletingLastPathComponent()
        let parsed: Any?
        do {
            parsed = try Yams.load(yaml: String(decoding: data, as: UTF8.self))
        } catch {
            throw InputError(file: path, message: "not a YAML or JSON map: \(error)")
        }
        guard let map = parsed as? [String: Any] else {
            throw InputError(file: path, message: "expected a map of path patterns to schema files")
        }
        return try map.keys.sorted().map { pattern in
            guard let file = map[pattern] as? String else { throw InputError(file: path, message: "the schema for \(pattern) must be a file name") }
            let full = file.hasPrefix("/") ? file : dir.appendingPathComponent(file).path
            return try loadSchema(pattern: pattern, file: full)
        }
    }

    /// Reads the dump once and gathers every finding.
    public func run(progress: ProgressMeter? = nil) throws -> FindingsReport {
        let file = try InputFile(path: input)
        progress?.attach(file)
        var report = FindingsReport(source: file.name, maxFindings: maxFindings)
        report.checkedRules = Self.limitRules + schemas.map { "schema:\($0.file)" } + (rules.map { _ in ["rules:.validate"] } ?? [])
        var findings: [Finding] = []
        let limits = DatabaseLimitsChecker(patterns: schemas.map(\.pattern)) { findings.append($0) }

        if let rules {
            if let size = file.size, size > rulesMemoryLimit {
                throw UsageError("\(file.name) is \(ProgressMeter.format(bytes: size)); rules are checked with the dump in memory, up to \(ProgressMeter.format(bytes: rulesMemoryLimit)) (--rules-memory-limit)")
            }
            // The whole dump as one record: rules may look anywhere through root and parent().
            let reader = DumpReader(source: file, patterns: [try PathPattern("/")], sourceName: file.name)
            reader.reader.tokenObserver = { limits.observe($0, $1) }
            guard let record = try reader.next(passThrough: nil), let dump = record.value else { return report }
            _ = try reader.next(passThrough: nil)
            for binding in schemas {
                Self.forEachMatch(of: binding.pattern, in: dump) { path, value in
                    findings += binding.schema.validate(value, pointerPrefix: JSONPointer.string(path)).map { Self.tagged($0, binding) }
                }
            }
            findings += RulesEvaluator(rules: rules, auth: auth, now: Date().timeIntervalSince1970 * 1000)
                .validateDump(InMemoryRulesSource(dump), strict: strict)
        } else {
            let reader = DumpReader(source: file, patterns: schemas.map(\.pattern), sourceName: file.name)
            reader.reader.tokenObserver = { limits.observe($0, $1) }
            let discard = DiscardingPassThrough()
            while let record = try reader.next(passThrough: discard) {
                progress?.recordDone()
                guard let value = record.value, let binding = schemas.first(where: { $0.pattern.match(record.path) != nil }) else { continue }
                let location = reader.lastRecordLocation
                for var f in binding.schema.validate(value, pointerPrefix: record.pointer) {
                    if f.line == nil {
                        f.line = location.line
                        f.column = location.column
                    }
                    findings.append(Self.tagged(f, binding))
                }
                flush(&findings, into: &report)
            }
        }
        flush(&findings, into: &report)
        progress?.finish()
        return report
    }

    private func flush(_ findings: inout [Finding], into report: inout FindingsReport) {
        for f in findings { report.add(f) }
        findings.removeAll(keepingCapacity: true)
    }

    /// The limit checks, each a test case in JUnit output.
    static let limitRules = ["limits:key-characters", "limits:key-length", "limits:depth", "limits:string-size",
                             "limits:value-beside-children", "limits:server-value", "limits:non-finite"]

    /// Puts a schema finding in its schema's group.
    private static func tagged(_ f: Finding, _ binding: SchemaBinding) -> Finding {
        var f = f
        f.group = "schema:" + binding.file
        return f
    }

    /// Calls `body` with every subtree of `value` whose path `pattern` matches.
    static func forEachMatch(of pattern: PathPattern, in value: JSONValue, path: [String] = [], _ body: ([String], JSONValue) -> Void) {
        if path.count == pattern.depth {
            if pattern.match(path) != nil { body(path, value) }
            return
        }
        switch value {
        case .object(let o):
            for m in o where pattern.segmentMatches(m.key, at: path.count) {
                forEachMatch(of: pattern, in: m.value, path: path + [m.key], body)
            }
        case .array(let a):
            for (i, e) in a.enumerated() where pattern.segmentMatches(String(i), at: path.count) {
                forEachMatch(of: pattern, in: e, path: path + [String(i)], body)
            }
        default:
            return
        }
    }
}

/// Reads past content outside records without keeping it (validation writes no dump).
final class DiscardingPassThrough: PassThroughSink {
    func beginContainer(isObject: Bool) throws {}
    func endContainer() throws {}
    func name(_ key: String) throws {}
    func transferValue(from reader: JSONReader) throws { try reader.skipValue() }
}
