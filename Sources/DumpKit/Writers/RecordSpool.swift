import JSONStream

/// Values set aside with their paths in an anonymous temporary file, to be read back once, in order.
///
/// A frame is the path (`u32` segment count, then each segment as `u32` byte count and UTF-8) and the
/// value as compact JSON in pieces (`u32` byte count and bytes) ended by an empty piece. Values are
/// written through `writer` (compact, its sink is the spool), so they never need to be built in
/// memory; read back, they can be copied to a compact output as they are.
final class RecordSpool: JSONByteSink {
    private let file: TemporaryFile
    private var pending: [UInt8] = []
    private let writeLimit = 1 << 20
    /// Writes the current frame's value; its flushes become the frame's pieces.
    private(set) lazy var writer = JSONWriter(sink: self)

    init(temporaryDirectory: String?) throws {
        file = try TemporaryFile(directory: temporaryDirectory)
        pending.reserveCapacity(writeLimit + (1 << 18))
    }

    // MARK: - Writing

    /// Starts a frame at `path`; write the value with `writer`, then call `endFrame()`.
    func beginFrame(_ path: [String]) throws {
        appendLength(path.count)
        for segment in path {
            var s = segment
            s.withUTF8 { u in
                appendLength(u.count)
                pending.append(contentsOf: u)
            }
        }
    }

    func endFrame() throws {
        try writer.flush()
        appendLength(0)
        if pending.count >= writeLimit { try writePending() }
    }

    /// Takes a piece of the current frame's value (the writer's flushes).
    func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard !bytes.isEmpty else { return }
        appendLength(bytes.count)
        pending.append(contentsOf: bytes)
        if pending.count >= writeLimit { try writePending() }
    }

    private func appendLength(_ n: Int) {
        precondition(n <= Int(UInt32.max), "spool piece too large")
        withUnsafeBytes(of: UInt32(n).littleEndian) { pending.append(contentsOf: $0) }
    }

    private func writePending() throws {
        try pending.withUnsafeBytes { try file.write($0) }
        pending.removeAll(keepingCapacity: true)
    }

    // MARK: - Reading

    private var buffer: [UInt8] = []
    private var position = 0
    /// Bytes of the current frame's current piece not read yet.
    private var pieceLeft = 0
    private var valueEnded = true

    /// Ends writing; frames are then read from the start.
    func finishWriting() throws {
        try writePending()
        pending = []
        buffer = []
    }

    /// The next frame's path, or nil at the end; read its value with `readValuePiece` or
    /// `valueSource` before asking for the next frame.
    func nextFrame() throws -> [String]? {
        while !valueEnded { _ = try readValuePiece { _ in } }
        guard try fill(1) else { return nil }
        let count = try readLength()
        var path: [String] = []
        path.reserveCapacity(count)
        for _ in 0..<count {
            let n = try readLength()
            guard try fill(n) else { throw truncated() }
            path.append(buffer.withUnsafeBufferPointer { String(decoding: UnsafeBufferPointer(rebasing: $0[position..<(position + n)]), as: UTF8.self) })
            position += n
        }
        valueEnded = false
        pieceLeft = 0
        return path
    }

    /// Calls `body` with the next bytes (at most `limit`) of the current frame's value; false once
    /// the value ended.
    func readValuePiece(upTo limit: Int = .max, _ body: (UnsafeRawBufferPointer) throws -> Void) throws -> Bool {
        guard !valueEnded else { return false }
        if pieceLeft == 0 {
            pieceLeft = try readLength()
            if pieceLeft == 0 {
                valueEnded = true
                return false
            }
        }
        if position == buffer.count { guard try fill(1) else { throw truncated() } }
        let n = min(pieceLeft, buffer.count - position, limit)
        try buffer.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[position..<(position + n)])) }
        position += n
        pieceLeft -= n
        return true
    }

    /// The current frame's value as a byte source (it ends with the value).
    var valueSource: JSONByteSource { ValueSource(spool: self) }

    private func readLength() throws -> Int {
        guard try fill(4) else { throw truncated() }
        let n = buffer.withUnsafeBytes { Int($0.loadUnaligned(fromByteOffset: position, as: UInt32.self).littleEndian) }
        position += 4
        return n
    }

    /// Makes at least `n` unread bytes available in `buffer`; false if the file ends before any.
    private func fill(_ n: Int) throws -> Bool {
        if buffer.count - position >= n { return true }
        buffer.removeSubrange(0..<position)
        position = 0
        let chunk = max(n, writeLimit)
        while buffer.count < n {
            let start = buffer.count
            var got = 0
            buffer.append(contentsOf: repeatElement(0, count: chunk))
            got = try buffer.withUnsafeMutableBytes { try file.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[start...])) }
            buffer.removeLast(chunk - got)
            if got == 0 {
                if buffer.isEmpty { return false }
                throw truncated()
            }
        }
        return true
    }

    private func truncated() -> Error { InputError(file: "spool", message: "truncated spool frame") }

    /// The bytes of one frame's value.
    private final class ValueSource: JSONByteSource {
        let spool: RecordSpool
        init(spool: RecordSpool) { self.spool = spool }

        func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
            var n = 0
            while n < buffer.count {
                let limit = buffer.count - n
                var copied = 0
                // A piece can be longer than the room left: take what fits, leave the rest.
                let more = try spool.readValuePiece(upTo: limit) { bytes in
                    UnsafeMutableRawBufferPointer(rebasing: buffer[n..<(n + bytes.count)]).copyMemory(from: bytes)
                    copied = bytes.count
                }
                if !more { break }
                n += copied
            }
            return n
        }
    }
}
