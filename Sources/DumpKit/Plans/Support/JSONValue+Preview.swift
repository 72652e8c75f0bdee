import JSONStream

extension JSONValue {
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
