import JSONStream

extension JSONValue {
    /// Whether two values hold the same data as the database sees it: object members in any order,
    /// numbers by exact decimal value (`1.50` equals `1.5`), strings by their text.
    func isEquivalent(to other: JSONValue) -> Bool {
        switch (self, other) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.string(let a), .string(let b)): return a == b
        case (.number(let a), .number(let b)):
            if a.text == b.text { return true }
            guard let x = DecimalNumber(a.text), let y = DecimalNumber(b.text) else { return false }
            return x == y
        case (.array(let a), .array(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.isEquivalent(to: $1) }
        case (.object(let a), .object(let b)):
            guard a.count == b.count else { return false }
            return a.members.allSatisfy { m in b[m.key].map { m.value.isEquivalent(to: $0) } ?? false }
        default: return false
        }
    }

    /// A short rendering for messages: compact JSON cut to about `limit` characters.
    func preview(limit: Int = 80) -> String {
        let text = compactText
        guard text.count > limit else { return text }
        return String(text.prefix(limit)) + "…"
    }

    /// The value as compact JSON text.
    var compactText: String {
        let sink = MemoryByteSink()
        let writer = JSONWriter(sink: sink, options: .compact)
        // Writing a complete value to memory cannot fail.
        try! writer.value(self)
        try! writer.flush()
        return sink.string
    }
}
