import JSONStream

/// Hands values that a reader has already consumed to a `PassThroughSink`, which only takes values
/// from a `JSONReader`: each value is written as JSON and served to a reusable reader of consecutive
/// documents, so nothing is allocated per value. The source never ends; between values it serves
/// spaces.
final class ValueReplay: JSONByteSource, JSONByteSink {
    private var pending: [UInt8] = []
    private var offset = 0
    private lazy var writer = JSONWriter(sink: self)
    private lazy var reader = JSONReader(source: self, options: .init(multipleDocuments: true, bufferSize: 1 << 16))

    /// Passes a string (its unescaped UTF-8) through to `sink`.
    func transferString(_ utf8: UnsafeRawBufferPointer, to sink: PassThroughSink) throws {
        try writer.raw(" ")  // the reader looks at 3 bytes before its first document
        try writer.string(utf8: utf8)
        try transfer(to: sink)
    }

    /// Passes a whole value through to `sink`.
    func transfer(_ value: JSONValue, to sink: PassThroughSink) throws {
        try writer.raw(" ")
        try writer.value(value)
        try transfer(to: sink)
    }

    private func transfer(to sink: PassThroughSink) throws {
        try writer.flush()
        try sink.transferValue(from: reader)
        pending.removeAll(keepingCapacity: true)
        offset = 0
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        pending.append(contentsOf: bytes)
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let n = min(buffer.count, pending.count - offset)
        guard n > 0 else {
            // Never the end of the input: the reader may look a few bytes past a value (to check
            // UTF-8), and must still be able to read the next one. Whitespace between documents is
            // harmless.
            let spaces = min(buffer.count, 8)
            buffer.baseAddress!.initializeMemory(as: UInt8.self, repeating: UInt8(ascii: " "), count: spaces)
            return spaces
        }
        pending.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + offset, byteCount: n) }
        offset += n
        return n
    }
}
