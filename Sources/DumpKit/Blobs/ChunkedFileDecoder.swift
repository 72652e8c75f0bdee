/// Decodes a string that may embed a file from the pieces a `JSONReader` hands out one after another
/// (`readString(orChunks:)`), so that a long string is never held as text: each piece is decoded as
/// it comes. A string that is not a file comes back as its text, exactly.
///
/// It takes a file exactly when `EmbeddedFile.scan` would; everything else (text, invalid base64,
/// unknown types, files below `minimumBytes`) is given back as text for the caller to look at again.
/// One decoder is reused for string after string.
final class ChunkedFileDecoder {
    /// What a string turned out to be.
    enum Result {
        case file(EmbeddedFile)
        /// The string's UTF-8.
        case text([UInt8])
    }

    private enum Mode {
        /// Gathering the first bytes (up to `headLimit`) to tell a data URI from bare base64.
        case start
        /// Decoding base64; `head` holds the data URI header (empty for bare base64).
        case payload
        /// Not a file: collecting the text.
        case text
    }

    /// A data URI's header must end within this many bytes (as `Base64Sniffer.dataURIHeaderLength`).
    private static let headLimit = 256

    let minimumBytes: Int
    let dataURIsOnly: Bool
    private var mode = Mode.start
    private var head: [UInt8] = []
    /// Payload characters not decoded yet (at most 4): the last quad is always kept back for the end.
    private var carry: [UInt8] = []
    private var decoded: [UInt8] = []
    private var text: [UInt8] = []
    private var total = 0

    init(minimumBytes: Int, dataURIsOnly: Bool) {
        self.minimumBytes = minimumBytes
        self.dataURIsOnly = dataURIsOnly
    }

    /// Takes the next piece of the string's UTF-8.
    func append(_ piece: UnsafeRawBufferPointer) {
        total += piece.count
        var rest = piece
        if mode == .start {
            let take = min(rest.count, Self.headLimit - head.count)
            head.append(contentsOf: UnsafeRawBufferPointer(rebasing: rest[0..<take]))
            rest = UnsafeRawBufferPointer(rebasing: rest[take...])
            guard decideMode(final: false) else { return }
        }
        feed(rest)
    }

    /// Ends the string: its file, or its text. The decoder is then ready for the next string.
    func finish() -> Result {
        defer { reset() }
        if mode == .start { _ = decideMode(final: true) }
        guard mode == .payload else { return .text(text) }
        let header = head.isEmpty ? nil : String(decoding: head, as: UTF8.self)
        // Bare base64 is sniffed from its first 24 characters, which must hold no padding.
        let sniffable = total > 24 || (total == 24 && carry.last != UInt8(ascii: "="))
        // The last quad, with its padding; nothing at all or a partial quad is not base64.
        guard header != nil || sniffable, carry.count == 4, decode(last: true) else {
            becomeText()
            return .text(text)
        }
        if case .file(let file) = EmbeddedFile.classify(decoded, header: header, minimumBytes: minimumBytes, encodedBytes: total) {
            return .file(file)
        }
        becomeText()
        return .text(text)
    }

    private func reset() {
        mode = .start
        head = []
        carry = []
        decoded = []
        text = []
        total = 0
    }

    /// Tells from `head` what the string is, once it can; false while more bytes are needed.
    private func decideMode(final: Bool) -> Bool {
        let isDataURI = head.starts(with: "data:".utf8)
        if head.count < 5 && !final && "data:".utf8.starts(with: head) { return false }
        if isDataURI {
            if let length = head.withUnsafeBytes({ Base64Sniffer.dataURIHeaderLength($0) }) {
                let payload = Array(head[length...])
                head.removeSubrange(length...)
                mode = .payload
                payload.withUnsafeBytes { feed($0) }
                return true
            }
            // No header yet: wait while its comma may still come.
            let comma = head.dropFirst(5).contains(UInt8(ascii: ","))
            if !comma && head.count < Self.headLimit && !final { return false }
        } else if !dataURIsOnly {
            let payload = head
            head = []
            mode = .payload
            payload.withUnsafeBytes { feed($0) }
            return true
        }
        mode = .text
        text = head
        head = []
        return true
    }

    /// Decodes or collects `bytes`, by mode.
    private func feed(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        if mode == .text {
            text.append(contentsOf: bytes)
            return
        }
        // Complete the carried characters to whole quads, decode them unless they may be the last.
        var rest = bytes
        let fill = min(rest.count, (4 - carry.count % 4) % 4)
        carry.append(contentsOf: UnsafeRawBufferPointer(rebasing: rest[0..<fill]))
        rest = UnsafeRawBufferPointer(rebasing: rest[fill...])
        // Nothing after them: they may be the last quad.
        if rest.isEmpty { return }
        if !carry.isEmpty {
            guard decode(last: false) else { return becomeText(then: Array(rest)) }
        }
        // The bulk straight from the piece, keeping its last 1-4 characters back.
        var keep = rest.count % 4
        if keep == 0 { keep = 4 }
        let bulk = UnsafeRawBufferPointer(rebasing: rest[0..<(rest.count - keep)])
        if !bulk.isEmpty {
            let start = decoded.count
            decoded.append(contentsOf: repeatElement(0, count: bulk.count / 4 * 3 + 1))
            let ok = decoded.withUnsafeMutableBufferPointer { StrictBase64.decodeQuads(bulk, into: $0.baseAddress! + start) }
            decoded.removeLast()
            guard ok else {
                decoded.removeSubrange(start...)
                return becomeText(then: Array(rest))
            }
        }
        carry = Array(rest[(rest.count - keep)...])
        // Bare base64 is a file only when its first 18 bytes are a known type (`EmbeddedFile.scan`
        // sniffs them so): any other gives up now, not after decoding a long string whole.
        if head.isEmpty, decoded.count >= 18, MediaType.detect(Array(decoded.prefix(18))) == nil { becomeText() }
    }

    /// Decodes the carried quads (the last one with its padding when `last`); on failure nothing of
    /// them is decoded and they stay carried.
    private func decode(last: Bool) -> Bool {
        let start = decoded.count
        decoded.append(contentsOf: repeatElement(0, count: carry.count / 4 * 3 + 3))
        let ok = carry.withUnsafeBytes { quads in
            decoded.withUnsafeMutableBufferPointer { out in
                last
                    ? StrictBase64.decode(quads, into: out.baseAddress! + start)
                    : StrictBase64.decodeQuads(quads, into: out.baseAddress! + start)
            }
        }
        guard ok else {
            decoded.removeSubrange(start...)
            return false
        }
        var size = carry.count / 4 * 3
        if last { size -= carry.reversed().prefix { $0 == UInt8(ascii: "=") }.count }
        carry = []
        decoded.removeSubrange((start + size)...)
        return true
    }

    /// Gives up decoding: the text so far is the header, the decoded bytes encoded again (whole quads
    /// of canonical base64 re-encode to the same characters), and what was not decoded.
    private func becomeText(then more: [UInt8] = []) {
        text = head
        text.append(contentsOf: decoded.withUnsafeBytes { Base64.encode($0, after: "") }.utf8)
        text.append(contentsOf: carry)
        text.append(contentsOf: more)
        head = []
        carry = []
        decoded = []
        mode = .text
    }
}
