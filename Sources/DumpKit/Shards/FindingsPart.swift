import JSONStream

/// The part a `validate` shard writes: a first line `{"report": {...}}` (the source's name, the
/// checks, `maxFindings`), then one JSON line per item, in the order the unsharded run reports
/// them: `{"finding": {...}}`, or `{"end": {...}}` where a container the shard did not open
/// ends (its names in this shard; `merge` adds those of the shards before and checks it), then a
/// last line `{"shard": {...}}` with the open containers at the shard's end, which schemas were
/// applied, the findings merge adds at the end, and the findings past `maxFindings` (counted only:
/// the merged report keeps the first `maxFindings`, and a shard's later ones cannot be among them).
enum FindingsPart {
    /// The rule of the stand-in finding that carries a container's end through the ordered findings.
    static let containerEndRule = "shard:container-end"

    /// A container's end as a stand-in finding (its state in the message), to keep its place among
    /// the limit findings.
    static func containerEnd(_ s: DatabaseLimitsChecker.ContainerState, pointer: String, location: (line: Int, column: Int)) -> Finding {
        Finding(severity: .info, rule: containerEndRule, pointer: pointer, message: "", line: location.line, column: location.column)
            .carrying(s)
    }

    static func json(_ s: DatabaseLimitsChecker.ContainerState) -> JSONValue {
        .array([
            .bool(s.isObject), .bool(s.hasValueKey), .bool(s.hasOtherKeys), .bool(s.integerKeysOnly), .number(JSONNumber(s.count)),
            .number(JSONNumber(s.maxIntegerKey)),
        ])
    }

    static func state(_ v: JSONValue?) -> DatabaseLimitsChecker.ContainerState? {
        guard let a = v?.arrayValue, a.count == 6, let isObject = a[0].boolValue, let hasValueKey = a[1].boolValue,
            let hasOtherKeys = a[2].boolValue, let integerKeysOnly = a[3].boolValue, let count = a[4].numberValue?.int64Value,
            let max = a[5].numberValue?.int64Value
        else { return nil }
        var s = DatabaseLimitsChecker.ContainerState(isObject: isObject)
        s.hasValueKey = hasValueKey
        s.hasOtherKeys = hasOtherKeys
        s.integerKeysOnly = integerKeysOnly
        s.count = Int(count)
        s.maxIntegerKey = Int(max)
        return s
    }

    static func json(_ f: Finding) -> JSONValue {
        var o = JSONObject()
        o["severity"] = .string(f.severity.rawValue)
        o["rule"] = .string(f.rule)
        o["pointer"] = .string(f.pointer)
        o["message"] = .string(f.message)
        if let line = f.line { o["line"] = .number(JSONNumber(line)) }
        if let column = f.column { o["column"] = .number(JSONNumber(column)) }
        if let group = f.group { o["group"] = .string(group) }
        if let schemaPath = f.schemaPath { o["schemaPath"] = .string(schemaPath) }
        return .object(o)
    }

    static func finding(_ v: JSONValue?) -> Finding? {
        guard let o = v?.objectValue, let severity = o["severity"]?.stringValue.flatMap(Finding.Severity.init(rawValue:)),
            let rule = o["rule"]?.stringValue, let pointer = o["pointer"]?.stringValue, let message = o["message"]?.stringValue
        else { return nil }
        var f = Finding(
            severity: severity, rule: rule, pointer: pointer, message: message, line: o["line"]?.numberValue?.int64Value.map { Int($0) },
            column: o["column"]?.numberValue?.int64Value.map { Int($0) })
        f.group = o["group"]?.stringValue
        f.schemaPath = o["schemaPath"]?.stringValue
        return f
    }

    /// Writes a shard's items; `add` is called from the schema checker's thread, then (after it
    /// finished) from the shard's, never from both at once. The first write error is kept for `finish`.
    final class Writer: @unchecked Sendable {
        private let writer: JSONWriter
        private let maxFindings: Int
        /// Findings written (container ends not counted).
        private(set) var count = 0
        private var dropped: [String: (severity: Finding.Severity, rule: String, count: Int)] = [:]
        private var error: Error?

        /// What to add to findings' lines, and to their columns on line 1, for the dump's (the
        /// shard's reader starts on line 1: `ShardUnitSource.lineShift`).
        private let lineShift: Int
        private let firstLineColumnShift: Int

        init(writer: JSONWriter, source: String, checkedRules: [String], maxFindings: Int, lineShift: Int, firstLineColumnShift: Int) throws
        {
            self.writer = writer
            self.maxFindings = maxFindings
            self.lineShift = lineShift
            self.firstLineColumnShift = firstLineColumnShift
            try line([
                "report": .object([
                    "source": .string(source), "checkedRules": .array(checkedRules.map { .string($0) }),
                    "maxFindings": .number(JSONNumber(maxFindings)),
                ])
            ])
        }

        func add(_ finding: Finding) {
            guard error == nil else { return }
            var f = finding
            if let line = f.line {
                if line == 1, let column = f.column { f.column = column + firstLineColumnShift }
                f.line = line + lineShift
            }
            do {
                if f.rule == FindingsPart.containerEndRule {
                    try line([
                        "end": .object([
                            "pointer": .string(f.pointer), "line": .number(JSONNumber(f.line ?? 1)),
                            "column": .number(JSONNumber(f.column ?? 1)), "state": f.carried.map(FindingsPart.json) ?? .null,
                        ])
                    ])
                } else if count < maxFindings {
                    count += 1
                    try line(["finding": FindingsPart.json(f)])
                } else {
                    dropped["\(f.severity.rawValue) \(f.rule)", default: (f.severity, f.rule, 0)].count += 1
                }
            } catch {
                self.error = error
            }
        }

        /// Writes the last line.
        func finish(
            open: [DatabaseLimitsChecker.ContainerState], applied: [Bool], unmatched: [Finding], unknownKeywords: [Finding]
        ) throws {
            if let error { throw error }
            try line([
                "shard": .object([
                    "open": .array(open.map(FindingsPart.json)), "applied": .array(applied.map { .bool($0) }),
                    "unmatched": .array(unmatched.map(FindingsPart.json)),
                    "unknownKeywords": .array(unknownKeywords.map(FindingsPart.json)),
                    "dropped": .array(
                        dropped.keys.sorted().map { key in
                            let d = dropped[key]!
                            return .array([.string(d.severity.rawValue), .string(d.rule), .number(JSONNumber(d.count))])
                        }),
                ])
            ])
        }

        private func line(_ o: JSONObject) throws {
            try writer.value(.object(o))
            try writer.raw("\n")
        }
    }

    /// Joins the parts of a sharded validation into the report the unsharded run makes.
    static func merge(parts: [String]) throws -> FindingsReport {
        var report: FindingsReport!
        // The containers open between shards, outermost first: their names in the shards so far.
        var carried: [DatabaseLimitsChecker.ContainerState] = []
        var applied: [Bool]?
        var unmatched: [Finding] = []
        var unknownKeywords: [Finding] = []
        var dropped: [(Finding.Severity, String, Int)] = []
        for path in parts {
            func bad(_ why: String) -> ShardError { ShardError(message: "\(path): not a validate part (\(why)); run that shard again") }
            let reader = JSONReader(source: try InputFile(path: path), options: .init(multipleDocuments: true), sourceName: path)
            var last: JSONObject?
            while try reader.peek() != .end {
                guard last == nil, let o = try reader.readValue().objectValue else { throw bad("a line after the last") }
                if let header = o["report"]?.objectValue {
                    guard report == nil else { continue }
                    guard let source = header["source"]?.stringValue, let rules = header["checkedRules"]?.arrayValue,
                        let max = header["maxFindings"]?.numberValue?.int64Value
                    else { throw bad("its first line is not a report's") }
                    report = FindingsReport(source: source, maxFindings: Int(max))
                    report.checkedRules = rules.compactMap(\.stringValue)
                } else if report == nil {
                    throw bad("its first line is not a report's")
                } else if let f = o["finding"] {
                    guard let f = finding(f) else { throw bad("a finding without its fields") }
                    report.add(f)
                } else if let end = o["end"]?.objectValue {
                    guard let s = state(end["state"]), let pointer = end["pointer"]?.stringValue,
                        let line = end["line"]?.numberValue?.int64Value, let column = end["column"]?.numberValue?.int64Value,
                        var total = carried.popLast()
                    else { throw bad("a container's end that no shard before opened") }
                    total.add(s)
                    for f in DatabaseLimitsChecker.endFindings(total, pointer: pointer, line: Int(line), column: Int(column)) {
                        report.add(f)
                    }
                } else if let shard = o["shard"]?.objectValue {
                    last = shard
                } else {
                    throw bad("an unknown line")
                }
            }
            guard let last, let open = last["open"]?.arrayValue, let shardApplied = last["applied"]?.arrayValue?.compactMap(\.boolValue)
            else { throw bad("its last line is missing") }
            for (i, v) in open.enumerated() {
                guard let s = state(v) else { throw bad("an open container without its state") }
                if i < carried.count { carried[i].add(s) } else { carried.append(s) }
            }
            applied = applied.map { zip($0, shardApplied).map { $0 || $1 } } ?? shardApplied
            if path == parts.first {
                unmatched = last["unmatched"]?.arrayValue?.compactMap(finding) ?? []
                unknownKeywords = last["unknownKeywords"]?.arrayValue?.compactMap(finding) ?? []
            }
            for d in last["dropped"]?.arrayValue ?? [] {
                guard let a = d.arrayValue, a.count == 3, let severity = a[0].stringValue.flatMap(Finding.Severity.init(rawValue:)),
                    let rule = a[1].stringValue, let n = a[2].numberValue?.int64Value
                else { throw bad("a count of findings past the limit without its fields") }
                dropped.append((severity, rule, Int(n)))
            }
        }
        guard report != nil else { throw ShardError(message: "no validate parts to merge") }
        for (i, f) in unmatched.enumerated() where !(applied?[i] ?? false) { report.add(f) }
        for f in unknownKeywords { report.add(f) }
        for (severity, rule, n) in dropped { report.countUnkept(rule: rule, severity: severity, count: n) }
        return report
    }
}

extension Finding {
    /// A container's state riding in a stand-in finding's message (`FindingsPart.containerEnd`).
    fileprivate func carrying(_ s: DatabaseLimitsChecker.ContainerState) -> Finding {
        var f = self
        f.message =
            [s.isObject, s.hasValueKey, s.hasOtherKeys, s.integerKeysOnly].map { $0 ? "1" : "0" }.joined()
            + " \(s.count) \(s.maxIntegerKey)"
        return f
    }

    fileprivate var carried: DatabaseLimitsChecker.ContainerState? {
        let parts = message.split(separator: " ")
        guard parts.count == 3, parts[0].count == 4, let count = Int(parts[1]), let max = Int(parts[2]) else { return nil }
        let flags = parts[0].map { $0 == "1" }
        var s = DatabaseLimitsChecker.ContainerState(isObject: flags[0])
        s.hasValueKey = flags[1]
        s.hasOtherKeys = flags[2]
        s.integerKeysOnly = flags[3]
        s.count = count
        s.maxIntegerKey = max
        return s
    }
}
