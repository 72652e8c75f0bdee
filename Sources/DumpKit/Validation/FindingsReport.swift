import Foundation
import JSONStream

/// Collects findings and renders them for people (`text`) or CI (`json`, `junit`, `github`).
public struct FindingsReport: Sendable {
    /// Output formats of `dumpkit validate`.
    public enum Format: String, Sendable, CaseIterable {
        case text, json, junit, github
    }

    /// The input's name, used in annotations and test case names.
    public var source: String
    /// Findings kept for output (the first `maxFindings`); the counts below include all of them.
    public private(set) var findings: [Finding] = []
    /// Findings per rule, including those past the limit.
    public private(set) var countsByRule: [String: Int] = [:]
    public private(set) var errorCount = 0
    public private(set) var warningCount = 0
    /// Rules that were checked (so clean ones appear as passing test cases in JUnit).
    public var checkedRules: [String] = []
    public let maxFindings: Int

    public init(source: String, maxFindings: Int = 1000) {
        self.source = source
        self.maxFindings = maxFindings
    }

    /// Adds a finding.
    public mutating func add(_ f: Finding) {
        countsByRule[f.rule, default: 0] += 1
        if f.severity == .error { errorCount += 1 } else if f.severity == .warning { warningCount += 1 }
        if findings.count < maxFindings { findings.append(f) }
    }

    /// Counts findings that come after `maxFindings` kept ones (a sharded run's: each shard keeps
    /// its first `maxFindings` and counts the others).
    mutating func countUnkept(rule: String, severity: Finding.Severity, count: Int) {
        precondition(findings.count == maxFindings, "findings past the limit counted before the limit was reached")
        countsByRule[rule, default: 0] += count
        if severity == .error { errorCount += count } else if severity == .warning { warningCount += count }
    }

    public var total: Int { countsByRule.values.reduce(0, +) }

    /// The rendering in `format`.
    public func render(_ format: Format, firstPerRule: Int = 10) -> String {
        switch format {
        case .text: return text(firstPerRule: firstPerRule)
        case .json: return json()
        case .junit: return junit()
        case .github: return github()
        }
    }

    private func location(_ f: Finding) -> String {
        guard let line = f.line else { return "" }
        return "\(line):\(f.column ?? 1) "
    }

    private func text(firstPerRule: Int) -> String {
        var out: [String] = []
        let rules = countsByRule.keys.sorted()
        for rule in rules {
            let n = countsByRule[rule]!
            let list = findings.filter { $0.rule == rule }
            let severity = list.first?.severity.rawValue ?? "error"
            out.append("\(rule) (\(severity)): \(n) finding\(n == 1 ? "" : "s")")
            for f in list.prefix(firstPerRule) {
                out.append("  \(source):\(location(f))\(f.pointer.isEmpty ? "/" : f.pointer): \(f.message)".escapingControlCharacters)
            }
            let hidden = n - min(firstPerRule, list.count)
            if hidden > 0 {
                // `json` and the other formats list every kept finding: the first `maxFindings`.
                out.append(
                    "  ... and \(hidden) more (--json lists "
                        + (n > list.count ? "the first \(maxFindings) findings; --max-findings N keeps more)" : "them all)"))
            }
        }
        let summary =
            source.escapingControlCharacters
            + (total == 0
                ? ": no findings" + (checkedRules.isEmpty ? "" : " (\(checkedRules.count) checks)")
                : ": \(errorCount) error\(errorCount == 1 ? "" : "s"), \(warningCount) warning\(warningCount == 1 ? "" : "s")")
        out.append(summary)
        return out.joined(separator: "\n") + "\n"
    }

    private func json() -> String {
        var o = JSONObject()
        o["source"] = .string(source)
        o["errors"] = .number(JSONNumber(errorCount))
        o["warnings"] = .number(JSONNumber(warningCount))
        o["counts"] = .object(JSONObject(countsByRule.keys.sorted().map { .init(key: $0, value: .number(JSONNumber(countsByRule[$0]!))) }))
        o["findings"] = .array(
            findings.map { f in
                var m = JSONObject()
                m["severity"] = .string(f.severity.rawValue)
                m["rule"] = .string(f.rule)
                m["pointer"] = .string(f.pointer)
                if let line = f.line { m["line"] = .number(JSONNumber(line)) }
                if let column = f.column { m["column"] = .number(JSONNumber(column)) }
                if let schemaPath = f.schemaPath { m["schemaPath"] = .string(schemaPath) }
                m["message"] = .string(f.message)
                return .object(m)
            })
        o["truncated"] = .bool(total > findings.count)
        let sink = MemoryByteSink()
        let w = JSONWriter(sink: sink, options: .init(pretty: true))
        try? w.value(.object(o))
        try? w.flush()
        return sink.string + "\n"
    }

    /// JUnit XML: one test case per rule or schema; failures carry their findings.
    private func junit() -> String {
        let groups = Set(findings.map { $0.group ?? $0.rule })
        let rules = (Set(checkedRules).union(groups)).sorted()
        let failing = Set(findings.filter { $0.severity == .error }.map { $0.group ?? $0.rule })
        let failures = rules.filter { failing.contains($0) }.count
        var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        out += "<testsuites name=\"dumpkit validate\" tests=\"\(rules.count)\" failures=\"\(failures)\">\n"
        out += "  <testsuite name=\"\(xml(source))\" tests=\"\(rules.count)\" failures=\"\(failures)\">\n"
        for rule in rules {
            let list = findings.filter { ($0.group ?? $0.rule) == rule }
            out += "    <testcase classname=\"\(xml(source))\" name=\"\(xml(rule))\""
            let errors = list.filter { $0.severity == .error }
            if errors.isEmpty && list.isEmpty {
                out += "/>\n"
                continue
            }
            out += ">\n"
            let body = list.map { "\(location($0))\($0.pointer.isEmpty ? "/" : $0.pointer): \($0.rule): \($0.message)" }.joined(
                separator: "\n")
            let n = list.count
            if !errors.isEmpty {
                out += "      <failure message=\"\(n) finding\(n == 1 ? "" : "s")\" type=\"\(xml(rule))\">\(xml(body))</failure>\n"
            } else {
                out += "      <system-out>\(xml(body))</system-out>\n"
            }
            out += "    </testcase>\n"
        }
        out += "  </testsuite>\n</testsuites>\n"
        return out
    }

    /// GitHub Actions workflow commands (`::error file=...,line=...::message`).
    private func github() -> String {
        var out = ""
        for f in findings {
            let kind = f.severity == .error ? "error" : f.severity == .warning ? "warning" : "notice"
            var props = "file=\(escapeProperty(source.escapingControlCharacters))"
            if let line = f.line { props += ",line=\(line)" }
            if let column = f.column { props += ",col=\(column)" }
            props += ",title=\(escapeProperty(f.rule))"
            out += "::\(kind) \(props)::\(escapeData("\(f.pointer.isEmpty ? "/" : f.pointer): \(f.message)".escapingControlCharacters))\n"
        }
        return out
    }

    private func xml(_ s: String) -> String {
        var r = ""
        for c in s.unicodeScalars {
            switch c {
            case "&": r += "&amp;"
            case "<": r += "&lt;"
            case ">": r += "&gt;"
            case "\"": r += "&quot;"
            case "'": r += "&apos;"
            default:
                if c.value < 0x20 && c != "\n" && c != "\t" && c != "\r" { r += "?" } else { r.unicodeScalars.append(c) }
            }
        }
        return r
    }

    private func escapeData(_ s: String) -> String {
        s.replacingOccurrences(of: "%", with: "%25").replacingOccurrences(of: "\r", with: "%0D").replacingOccurrences(of: "\n", with: "%0A")
    }

    private func escapeProperty(_ s: String) -> String {
        escapeData(s).replacingOccurrences(of: ":", with: "%3A").replacingOccurrences(of: ",", with: "%2C")
    }
}
