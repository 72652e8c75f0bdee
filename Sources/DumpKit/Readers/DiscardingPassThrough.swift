import JSONStream

/// A pass-through sink that reads past the content outside records without keeping it: with it,
/// `DumpReader.next(passThrough:)` yields only the records its patterns match (without a sink, the
/// content around them comes back as records of its own). Validation uses it, since it writes no dump.
public final class DiscardingPassThrough: PassThroughSink {
    public init() {}
    public func beginContainer(isObject: Bool) throws {}
    public func endContainer() throws {}
    public func name(_ key: String) throws {}
    public func transferValue(from reader: JSONReader) throws { try reader.skipValue() }
    public func value(compactJSON json: UnsafeRawBufferPointer) throws {}
}
