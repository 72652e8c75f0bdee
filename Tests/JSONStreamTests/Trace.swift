import JSONStream

/// Reads a whole input and describes it as a token trace, or as the error it ends with, so that
/// readings of the same bytes in different chunkings can be compared exactly.
func trace(_ source: JSONByteSource, options: JSONReader.Options = .init()) -> String {
    let r = JSONReader(source: source, options: options)
    var out: [String] = []
    do {
        while true {
            let k = try r.next()
            switch k {
            case .name, .string, .number: out.append("\(k)(\(Array(r.bytes)))")
            default: out.append("\(k)")
            }
            if k == .end { return out.joined(separator: " ") }
        }
    } catch let e as JSONError {
        return "ERROR \(e.kind) @\(e.offset) \(e.line):\(e.column) \(e.pointer)"
    } catch {
        return "ERROR \(error)"
    }
}

/// Parses `text` whole and returns the value.
func parse(_ text: String, options: JSONReader.Options = .init()) throws -> JSONValue {
    let r = JSONReader(source: MemoryByteSource(text), options: options)
    let v = try r.readValue()
    guard try r.next() == .end else { throw r.error(.trailingData, "trailing data") }
    return v
}

/// Serializes a value with the given writer options.
func serialize(_ v: JSONValue, _ options: JSONWriter.Options = .compact) throws -> String {
    let sink = MemoryByteSink()
    let w = JSONWriter(sink: sink, options: options)
    try w.value(v)
    try w.flush()
    return sink.string
}
