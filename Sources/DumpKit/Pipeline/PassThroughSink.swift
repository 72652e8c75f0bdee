import JSONStream

/// Receives the parts of a dump that lie outside records, as `DumpReader` streams past them.
public protocol PassThroughSink: AnyObject {
    /// An object or array on the way to records opens.
    func beginContainer(isObject: Bool) throws
    /// The innermost open container closes.
    func endContainer() throws
    /// The name of the next member (not called for records, whose key is in their path).
    func name(_ key: String) throws
    /// Copies the next value (a whole subtree) from `reader` unchanged.
    func transferValue(from reader: JSONReader) throws
    /// Writes the next value, which the reader has already read into memory, given as compact JSON
    /// (as a compact `JSONWriter` writes it).
    func value(compactJSON json: UnsafeRawBufferPointer) throws
}
