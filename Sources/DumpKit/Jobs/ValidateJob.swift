import FirebaseRules
import Foundation
import JSONSchema
import JSONStream

/// `dumpkit validate`: the database's limits, JSON Schemas per record pattern and security rules,
/// checked over a dump, reported as findings.
public struct ValidateJob {
    /// The blob store to cross-check the dump's references against (`--blobs`), see
    /// `BlobReferenceChecker`.
    public struct BlobCheck {
        /// The store's location (only read).
        public var store: String
        /// Opens the store (`DirectoryBlobStore.openDirectory` unless the caller opens buckets too).
        public var openStore: BlobStoreOpener = DirectoryBlobStore.openDirectory
        public var style: BlobReferenceStyle = .object
        /// Only references at or below these patterns (none: all).
        public var match: [PathPattern] = []

        public init(store: String) { self.store = store }
    }

    public var input: String
    public var schemas: [SchemaBinding] = []
    public var rules: RulesFile?
    public var auth: JSONValue = .null
    public var strict = false
    public var blobs: BlobCheck?
    public var maxFindings = 1000
    /// Accept schema patterns that match no record; otherwise each is a `schema:unmatched` error
    /// (a typo in a pattern would make its schema check nothing).
    public var allowUnmatched = false
    /// Dumps up to this size (decompressed) are held in memory for rules; larger ones are indexed in
    /// the same pass as the other checks and read back from the file (`OnDiskRulesSource`).
    public var rulesMemoryLimit: Int64 = 512 << 20
    /// With the on-disk source: containers up to this size are read whole when rules look into them.
    public var rulesExpandBytes = OnDiskRulesSource.defaultExpandBytes

    public init(input: String) { self.input = input }

    /// Reads the dump and gathers every finding: limits, schemas and (large dumps) the rules index in
    /// one streaming pass, then the rules, then the blob references in a pass of their own. A dump
    /// that cannot be read at any offset (standard input, compressed) is copied to a temporary file
    /// first when rules are checked, and standard input also for the blob check.
    public func run(progress: ProgressMeter? = nil) throws -> FindingsReport {
        let file = try InputFile(path: input)
        let store = try blobs.map { try $0.openStore($0.store, false) }
        progress?.attach(file)
        var report = FindingsReport(source: file.name, maxFindings: maxFindings)
        report.checkedRules =
            Self.limitRules + schemas.map { "schema:\($0.file)" } + (rules.map { _ in ["rules:.validate"] } ?? [])
            + (blobs.map { Self.blobRules(style: $0.style) } ?? [])
        let spool = (rules != nil && !file.isSeekable) || (blobs != nil && file.size == nil) ? try TemporaryFile.spool(file) : nil
        let source: JSONByteSource = spool?.stream() ?? file
        let rulesOnDisk = rules != nil && (spool?.size ?? file.size ?? 0) > rulesMemoryLimit
        var findings: [Finding] = []
        // The schemas whose pattern has matched no record yet.
        var unmatched = Set(schemas.indices)
        let limits = DatabaseLimitsChecker(patterns: schemas.map(\.pattern)) { findings.append($0) }

        if let rules, !rulesOnDisk {
            // The whole dump as one record: rules may look anywhere through root and parent().
            let reader = DumpReader(source: source, patterns: [try PathPattern("/")], sourceName: file.name)
            reader.reader.tokenObserver = { limits.observe($0, $1) }
            if let record = try reader.next(passThrough: nil), let dump = record.value {
                _ = try reader.next(passThrough: nil)
                for (i, binding) in schemas.enumerated() {
                    Self.forEachMatch(of: binding.pattern, in: dump) { path, value in
                        unmatched.remove(i)
                        findings += binding.schema.validate(value, pointerPrefix: JSONPointer.string(path)).map {
                            binding.tagged(Finding($0))
                        }
                    }
                }
                findings += evaluator(rules).validateDump(InMemoryRulesSource(dump), strict: strict).map(Finding.init)
            }
        } else {
            let index = rulesOnDisk ? RulesDumpIndex(expandBytes: rulesExpandBytes) : nil
            let reader = DumpReader(source: source, patterns: schemas.map(\.pattern), sourceName: file.name)
            reader.readsRecordValues = false
            reader.readsRecordCaptures = false
            if let index {
                reader.reader.tokenObserver = { token, r in
                    limits.observe(token, r)
                    index.observe(token, r)
                }
            } else {
                reader.reader.tokenObserver = limits.observe
            }
            let discard = DiscardingPassThrough()
            // Each record is read onto a tape (with every value's line and column), not built, and
            // checked against its schema on a thread of its own.
            let checker = RecordSchemaChecker(schemas: schemas) { report.add($0) }
            defer { checker.finish() }
            while let record = try reader.next(passThrough: discard) {
                try reader.reader.readValue(into: checker.nextTape())
                progress?.recordDone()
                checker.submit(path: record.path, findingsBefore: &findings)
            }
            // The findings after the last record follow its schema findings.
            checker.finish()
            unmatched = Set(schemas.indices.filter { !checker.applied[$0] })
            if let rules, let index {
                let positional: PositionalByteSource = try spool ?? ReadOnlyFile(path: input)
                let dump = OnDiskRulesSource(file: positional, name: file.name, index: index)
                findings += evaluator(rules).validateDump(dump, strict: strict).map(Finding.init)
                if let error = dump.readError { throw error }
            }
        }
        if rules != nil {
            // Rules (and schemas over a dump held whole) were checked after reading: find their values.
            try locate(&findings, in: try spool?.stream() ?? InputFile(path: input), name: file.name)
        }
        if !allowUnmatched {
            findings += unmatched.sorted().map { Self.unmatchedFinding(schemas[$0]) }
        }
        findings += Self.unknownKeywordFindings(schemas)
        flush(&findings, into: &report)
        progress?.finish()
        if let blobs, let store {
            let again: JSONByteSource = try spool?.stream() ?? InputFile(path: input)
            let checked = try BlobReferenceChecker.findings(
                in: again, sourceName: file.name, store: store, style: blobs.style, match: blobs.match)
            findings += checked.findings
            flush(&findings, into: &report)
        }
        return report
    }

    /// Gives the findings without a line:column that of their value, in one more pass over the input.
    private func locate(_ findings: inout [Finding], in source: JSONByteSource, name: String) throws {
        let unplaced = findings.indices.filter { findings[$0].line == nil }
        guard !unplaced.isEmpty else { return }
        let located = try PointerLocator.locate(
            Set(unplaced.compactMap { JSONPointer.segments(findings[$0].pointer) }), in: source, sourceName: name)
        for i in unplaced {
            guard let path = JSONPointer.segments(findings[i].pointer), let at = located[path] else { continue }
            findings[i].line = at.line
            findings[i].column = at.column
        }
    }

    private func evaluator(_ rules: RulesFile) -> RulesEvaluator {
        RulesEvaluator(rules: rules, auth: auth, now: Date().timeIntervalSince1970 * 1000)
    }

    private func flush(_ findings: inout [Finding], into report: inout FindingsReport) {
        for f in findings { report.add(f) }
        findings.removeAll(keepingCapacity: true)
    }

    /// The limit checks, each a test case in JUnit output.
    static let limitRules = [
        "limits:key-characters", "limits:key-length", "limits:depth", "limits:string-size",
        "limits:value-beside-children", "limits:server-value", "limits:non-finite", "json:duplicate-key",
    ]

    /// The blob checks of a reference style, each a test case in JUnit output.
    static func blobRules(style: BlobReferenceStyle) -> [String] {
        ["blobs:missing", "blobs:size", "blobs:sha256", "blobs:md5", "blobs:metadata", "blobs:content-type", "blobs:orphan"]
            + (style.needsBucket ? ["blobs:token"] : [])
    }

    /// The error for a schema whose pattern matched no record (a typo would make it check nothing).
    static func unmatchedFinding(_ binding: SchemaBinding) -> Finding {
        let message =
            "no record matches \(binding.pattern): the schema \(binding.file) checked nothing "
            + "(check the pattern, or pass --allow-unmatched)"
        return binding.tagged(Finding(severity: .error, rule: "schema:unmatched", pointer: "", message: message))
    }

    /// A warning per unknown keyword in each schema file (once per file, however many patterns use it).
    static func unknownKeywordFindings(_ bindings: [SchemaBinding]) -> [Finding] {
        var seen = Set<String>()
        return bindings.filter { seen.insert($0.file).inserted }.flatMap { binding in
            binding.schema.unknownKeywords.map { unknown in
                let hint = unknown.suggestion.map { "; did you mean \"\($0)\"?" } ?? ""
                var f = Finding(
                    severity: .warning, rule: "schema:unknown-keyword", pointer: "",
                    message: "\(binding.file): \(unknown.schemaPath): unknown keyword \"\(unknown.name)\" checks nothing\(hint)")
                f.schemaPath = unknown.schemaPath
                return binding.tagged(f)
            }
        }
    }

    /// Calls `body` with every subtree of `value` whose path `pattern` matches.
    static func forEachMatch(of pattern: PathPattern, in value: JSONValue, path: [String] = [], _ body: ([String], JSONValue) -> Void) {
        if path.count == pattern.depth {
            if pattern.matches(path) { body(path, value) }
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
