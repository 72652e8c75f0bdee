import JSONStream

extension DumpStats {
    /// The statistics as a JSON value (for `dumpkit stats --json`).
    public var jsonValue: JSONValue {
        .object([
            "bytes": .number(JSONNumber(totalBytes)),
            "maxDepth": .number(JSONNumber(maxDepth)),
            "maxDepthPointer": .string(maxDepthPointer),
            "longestKey": .object(["bytes": .number(JSONNumber(longestKeyBytes)), "pointer": .string(longestKeyPointer)]),
            "forbiddenKeys": .object(["count": .number(JSONNumber(forbiddenKeyCount)), "first": .array(forbiddenKeys.map { .string($0) })]),
            "base64Images": .object(["count": .number(JSONNumber(base64Images)), "bytes": .number(JSONNumber(base64ImageBytes))]),
            "recordPatterns": .array(recordPatterns.map { .string($0) }),
            "largestRecords": .array(
                largestRecords.map { .object(["pointer": .string($0.pointer), "bytes": .number(JSONNumber($0.bytes))]) }),
            "patterns": .array(
                patterns.map { p in
                    var members: JSONObject = [
                        "pattern": .string(p.pattern),
                        "count": .number(JSONNumber(p.count)),
                        "bytes": .number(JSONNumber(p.bytes)),
                        "types": .object(
                            JSONObject(p.types.keys.sorted().map { .init(key: $0, value: .number(JSONNumber(p.types[$0]!))) })),
                    ]
                    if p.files > 0 {
                        members["base64Files"] = .object(["count": .number(JSONNumber(p.files)), "bytes": .number(JSONNumber(p.fileBytes))])
                    }
                    return .object(members)
                }),
        ])
    }

    /// A report for people: a table of patterns and the notable findings. Control characters in
    /// keys are written as `\u001B`.
    public var text: String {
        var lines: [String] = []
        lines.append(
            "\(ProgressMeter.format(bytes: totalBytes)) in all, depth \(maxDepth)"
                + (maxDepthPointer.isEmpty ? "" : " (at \(maxDepthPointer))"))
        let shown = patterns.map(\.pattern.escapingControlCharacters)
        let width = min(70, shown.map(\.count).max() ?? 10)
        lines.append("")
        lines.append("pattern".padding(width) + "       count        bytes  types")
        for (p, pattern) in zip(patterns, shown) {
            let types = p.types.keys.sorted().map { "\($0) \(p.types[$0]!)" }.joined(separator: ", ")
            lines.append(
                pattern.padding(width) + " " + String(p.count).leftPadding(11) + " "
                    + ProgressMeter.format(bytes: p.bytes).leftPadding(12) + "  " + types)
        }
        lines.append("")
        lines.append("longest key: \(longestKeyBytes) bytes" + (longestKeyPointer.isEmpty ? "" : " at \(longestKeyPointer)"))
        if forbiddenKeyCount > 0 {
            lines.append(
                "keys the Realtime Database forbids: \(forbiddenKeyCount), e.g. " + forbiddenKeys.prefix(5).joined(separator: ", "))
        } else {
            lines.append("keys the Realtime Database forbids: none")
        }
        lines.append("strings that look like base64 files: \(base64Images) (\(ProgressMeter.format(bytes: base64ImageBytes)))")
        if !recordPatterns.isEmpty { lines.append("record patterns: " + recordPatterns.joined(separator: " ")) }
        return lines.map(\.escapingControlCharacters).joined(separator: "\n")
    }
}

extension String {
    fileprivate func padding(_ n: Int) -> String { count >= n ? self : self + String(repeating: " ", count: n - count) }
    fileprivate func leftPadding(_ n: Int) -> String { count >= n ? self : String(repeating: " ", count: n - count) + self }
}
