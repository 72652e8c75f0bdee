import JSONStream
import TestSupport
import XCTest

final class JSONReaderTests: XCTestCase {
    func testNumbersKeepTheirExactText() throws {
        let text = #"[1480000000000,-0,1.50,1e400,12345678901234567890,0.1e-7,-1E+2]"#
        XCTAssertEqual(try serialize(parse(text)), text)
    }

    func testStringsDecodeEveryEscapeAndSurrogatePair() throws {
        let v = try parse(#""\"\\\/\b\f\n\r\t\u0041\u00e9\u20AC\uD83D\uDE00\u0000""#)
        XCTAssertEqual(v, .string("\"\\/\u{8}\u{c}\n\r\tAé€😀\u{0}"))
        // Written back minimally escaped, and reading that gives the same value.
        let out = try serialize(v)
        XCTAssertEqual(out, #""\"\\/\b\f\n\r\tAé€😀\u0000""#)
        XCTAssertEqual(try parse(out), v)
    }

    func testObjectKeyOrderIsPreserved() throws {
        let text = #"{"b":1,"a":{"z":true,"y":null},"10":"x","2":[]}"#
        XCTAssertEqual(try serialize(parse(text)), text)
    }

    func testStrictnessErrors() {
        let bad: [(String, JSONError.Kind)] = [
            ("[1,]", .trailingComma),
            (#"{"a":1,}"#, .trailingComma),
            ("[NaN]", .unexpectedCharacter),
            ("// c\n1", .unexpectedCharacter),
            ("[1] x", .trailingData),
            ("\"a\u{1}b\"", .controlCharacter),
            (#""\uD800""#, .loneSurrogate),
            (#""\uDC00\uD800""#, .loneSurrogate),
            (#""\x""#, .invalidEscape),
            ("01", .invalidNumber),
            ("1.", .invalidNumber),
            ("-", .invalidNumber),
            ("", .emptyInput),
            ("   ", .emptyInput),
            ("[1", .unexpectedEnd),
            (#"{"a""#, .unexpectedEnd),
            (#""abc"#, .unexpectedEnd),
        ]
        for (text, kind) in bad {
            XCTAssertThrowsError(try parse(text), text) { e in
                XCTAssertEqual((e as? JSONError)?.kind, kind, "\(text): \(e)")
            }
        }
    }

    func testInvalidUTF8IsRejected() {
        for bytes: [UInt8] in [[0x22, 0xFF, 0x22], [0x22, 0xC0, 0xAF, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0xE2, 0x82, 0x22]] {
            let r = JSONReader(bytes: bytes)
            XCTAssertThrowsError(try r.readValue()) { e in XCTAssertEqual((e as? JSONError)?.kind, .invalidUTF8) }
        }
    }

    /// The string scanner's fast paths agree with the definition of string content: valid UTF-8
    /// without control characters is read as it is, anything else is an error at the same place in
    /// every chunking.
    func testStringContentMatchesTheDefinitionInEveryChunking() {
        let pieces: [[UInt8]] = [
            Array("a".utf8), Array("plain ASCII text".utf8), [0xC3, 0xA9], [0xE3, 0x81, 0x82], [0xE6, 0xBC, 0xA2],
            [0xE0, 0xA0, 0x80], [0xED, 0x9F, 0xBF], [0xEF, 0xBF, 0xBF], [0xF0, 0x9F, 0x98, 0x80], [0xF4, 0x8F, 0xBF, 0xBF],
            [0xC2, 0x80], [0xDF, 0xBF],
            // Invalid: surrogate, overlong forms, past U+10FFFF, stray and truncated bytes, a control character.
            [0xED, 0xA0, 0x80], [0xE0, 0x9F, 0xBF], [0xF0, 0x8F, 0xBF, 0xBF], [0xF4, 0x90, 0x80, 0x80], [0xC0, 0xAF],
            [0xC1, 0xBF], [0x80], [0xFF], [0xF5, 0x80, 0x80, 0x80], [0xE3, 0x81], [0xF0, 0x9F, 0x98], [0x01],
        ]
        var rng = SplitMix64(seed: 7)
        for round in 0..<4000 {
            var content: [UInt8] = []
            // Mostly valid CJK-like runs; every 4th string may have anything.
            let choices = round % 4 == 0 ? pieces.count : 12
            for _ in 0..<Int(rng.next() % 14) { content += pieces[Int(rng.next() % UInt64(choices))] }
            let doc = [0x22] + content + [0x22]
            let valid = String(validating: content, as: UTF8.self) != nil && !content.contains(where: { $0 < 0x20 })
            let whole = trace(MemoryByteSource(doc))
            if valid {
                XCTAssertEqual(whole, "string(\(content)) end", "\(content)")
            } else {
                XCTAssertTrue(whole.hasPrefix("ERROR invalidUTF8") || whole.hasPrefix("ERROR controlCharacter"), "\(content): \(whole)")
            }
            XCTAssertEqual(trace(MemoryByteSource(doc, chunkSize: 1)), whole, "\(content) in 1-byte chunks")
            XCTAssertEqual(trace(MemoryByteSource(doc), options: .init(bufferSize: 64)), whole, "\(content) with a 64-byte buffer")
            let split = Int(rng.next() % UInt64(doc.count + 1))
            XCTAssertEqual(trace(MemoryByteSource(doc, splitAt: [split])), whole, "\(content) split at \(split)")
        }
    }

    /// Long plain runs are scanned 64 bytes at a time where the CPU can: whatever ends the run, at
    /// any place in a long string, is found where the byte-by-byte reading finds it.
    func testTheEndOfALongPlainRunIsFoundAnywhere() {
        let ascii: [UInt8] = (0..<200).map { (i: Int) -> UInt8 in
            let c = UInt8(0x20 + (i * 7) % 95)
            return c == 0x22 || c == 0x5C ? UInt8(ascii: "x") : c
        }
        let inserts: [(bytes: [UInt8], decoded: [UInt8]?)] = [
            (Array(#"\n"#.utf8), [0x0A]), (Array(#"\u00e9"#.utf8), [0xC3, 0xA9]), ([0xC3, 0xA9], [0xC3, 0xA9]),
            ([0xE6, 0xBC, 0xA2], [0xE6, 0xBC, 0xA2]), ([0x7F], [0x7F]), ([0x01], nil), ([0x1F], nil), ([0xFF], nil), ([0x80], nil),
        ]
        for (bytes, decoded) in inserts {
            for place in 0...ascii.count {
                let doc: [UInt8] = [0x22] + Array(ascii[..<place]) + bytes + Array(ascii[place...]) + [0x22]
                let whole = trace(MemoryByteSource(doc))
                if let decoded {
                    let content: [UInt8] = Array(ascii[..<place]) + decoded + Array(ascii[place...])
                    XCTAssertEqual(whole, "string(\(content)) end", "\(bytes) at \(place)")
                } else {
                    XCTAssertTrue(whole.hasPrefix("ERROR"), "\(bytes) at \(place): \(whole)")
                }
                XCTAssertEqual(trace(MemoryByteSource(doc, chunkSize: 1)), whole, "\(bytes) at \(place) in 1-byte chunks")
            }
        }
        // The closing quote at any place, with more JSON after it.
        for place in 0...ascii.count {
            let doc: [UInt8] = [0x5B, 0x22] + Array(ascii[..<place]) + Array(#"",1]"#.utf8)
            XCTAssertEqual(
                trace(MemoryByteSource(doc)), "beginArray string(\(Array(ascii[..<place]))) number([49]) endArray end", "quote at \(place)")
        }
    }

    func testErrorsSayWhere() {
        let text = "{\n  \"users\": {\n    \"u1\": {\"name\": \"A\", \"age\": 1x}\n  }\n}"
        XCTAssertThrowsError(try parse(text)) { e in
            let j = e as! JSONError
            XCTAssertEqual(j.line, 3)
            XCTAssertEqual(j.column, 33)
            XCTAssertEqual(j.offset, 47)
            XCTAssertEqual(j.pointer, "/users/u1/age")
            XCTAssertTrue(j.description.hasPrefix("3:33 (byte 47) at /users/u1/age: unexpected 'x'"), j.description)
        }
        XCTAssertThrowsError(try parse(#"{"a":[1,2,{"b~/c":"\q"}]}"#)) { e in
            XCTAssertEqual((e as! JSONError).pointer, "/a/2/b~0~1c")
        }
    }

    /// The pointer in an error names the keys of every open object, plain or escaped, however the
    /// input was cut into reads and wherever the read buffer moved in between.
    func testErrorPointersSurviveBufferMoves() {
        let filler = String(repeating: "\"pad\":\"" + String(repeating: "x", count: 90) + "\",", count: 3)
        let text = "{" + filler + #""plain":{"# + filler + #""esc\u00e9aped~/":[1,{"# + filler + #""last":"ok","bad":tru}]}}"#
        let bytes = Array(text.utf8)
        for (chunk, size) in [(Int.max, 1 << 20), (1, 1 << 20), (7, 64), (64, 64), (1, 64)] {
            let r = JSONReader(source: MemoryByteSource(bytes, chunkSize: chunk), options: .init(bufferSize: size))
            XCTAssertThrowsError(try r.readValue(), "chunk \(chunk), buffer \(size)") { e in
                XCTAssertEqual((e as? JSONError)?.pointer, "/plain/esc\u{e9}aped~0~1/1/bad", "chunk \(chunk), buffer \(size)")
            }
        }
    }

    /// A string longer than the buffer is gathered in the scratch buffer and moved out of it into
    /// the value (held once): the same string, with escapes, and the reader goes on reading.
    func testAStringLongerThanTheBufferReadsWhole() throws {
        let unit = "plain é😀 \\\"q\\\" \\u00e9\\ud83d\\ude00\\n" + String(repeating: "z", count: 500)
        let decoded = "plain é😀 \"q\" é😀\n" + String(repeating: "z", count: 500)
        let count = 4000  // about 2 MiB
        let text = "[\"" + String(repeating: unit, count: count) + "\", \"after\", {\"k\": \"short\"}]"
        for (chunk, buffer) in [(Int.max, 1 << 20), (4099, 4096)] {
            let reader = JSONReader(source: MemoryByteSource(Array(text.utf8), chunkSize: chunk), options: .init(bufferSize: buffer))
            let value = try reader.readValue()
            XCTAssertEqual(
                value, .array([.string(String(repeating: decoded, count: count)), .string("after"), .object(["k": .string("short")])]))
        }
    }

    func testDeepNestingGivesACleanError() {
        let text = String(repeating: "[", count: 100_000)
        XCTAssertThrowsError(try parse(text)) { e in
            XCTAssertEqual((e as? JSONError)?.kind, .depthLimit)
        }
        let ok = String(repeating: "[", count: 30) + String(repeating: "]", count: 30)
        XCTAssertThrowsError(try parse(ok, options: .init(maxDepth: 29)))
        XCTAssertNoThrow(try parse(ok, options: .init(maxDepth: 30)))
    }

    func testByteOrderMarkIsSkipped() throws {
        XCTAssertEqual(try JSONReader(bytes: [0xEF, 0xBB, 0xBF] + Array("{}".utf8)).readValue(), .object([:]))
    }

    func testRelaxedModeAcceptsCommentsAndLineBreaksInStrings() throws {
        let text = "{\n // rules\n \"a\": /* x */ \"auth != null &&\n   true\"\n}"
        XCTAssertThrowsError(try parse(text))
        let v = try parse(text, options: .init(relaxed: true))
        XCTAssertEqual(v, .object(["a": .string("auth != null &&\n   true")]))
    }

    func testHugeStringsCanBeReadInChunks() throws {
        let payload = String(repeating: "abcdefgh", count: 300_000) + "\\n" + String(repeating: "é", count: 1000)
        let text = "[\"" + payload + "\", 1]"
        let r = JSONReader(source: MemoryByteSource(Array(text.utf8), chunkSize: 4099), options: .init(bufferSize: 4096))
        XCTAssertEqual(try r.next(), .beginArray)
        var collected: [UInt8] = []
        var pieces = 0
        try r.readStringChunks {
            collected.append(contentsOf: $0); pieces += 1
        }
        XCTAssertEqual(
            String(decoding: collected, as: UTF8.self),
            String(repeating: "abcdefgh", count: 300_000) + "\n" + String(repeating: "é", count: 1000))
        XCTAssertGreaterThan(pieces, 10)
        XCTAssertEqual(try r.next(), .number)
        XCTAssertEqual(try r.next(), .endArray)
        XCTAssertEqual(try r.next(), .end)
    }

    func testStringsAreReadWholeWithinTheBufferAndInPiecesPastIt() throws {
        // Strings that end within the buffer (with or without escapes) are read whole; one that runs
        // past its end comes in pieces, escapes and multi-byte characters cut anywhere; the reader
        // goes on after each. A source that gives a few bytes at a time ends the buffer everywhere.
        let long = String(repeating: "abcdefgh", count: 3000) + "\\n\\/" + String(repeating: "é", count: 1000) + "x"
        let expectedLong = String(repeating: "abcdefgh", count: 3000) + "\n/" + String(repeating: "é", count: 1000) + "x"
        let text = #"["short","esc\"aped",""# + long + #"",{"k":"v"},"tail\u00e9"]"#
        for chunk in [1, 7, 4099] {
            let r = JSONReader(source: MemoryByteSource(Array(text.utf8), chunkSize: chunk), options: .init(bufferSize: 4096))
            var wholes: [Bool] = []
            var pieces = 0
            func read() throws -> String {
                var collected: [UInt8] = []
                let whole = try r.readString {
                    collected.append(contentsOf: $0); pieces += 1
                }
                wholes.append(whole)
                return whole ? r.stringValue : String(decoding: collected, as: UTF8.self)
            }
            XCTAssertEqual(try r.next(), .beginArray)
            XCTAssertEqual(try [read(), read(), read()], ["short", "esc\"aped", expectedLong], "chunk \(chunk)")
            XCTAssertEqual(try r.next(), .beginObject)
            XCTAssertEqual(try r.next(), .name)
            XCTAssertEqual(try read(), "v")
            XCTAssertEqual(try r.next(), .endObject)
            XCTAssertEqual(try read(), "tailé")
            XCTAssertEqual(try r.next(), .endArray)
            XCTAssertEqual(try r.next(), .end)
            XCTAssertFalse(wholes[2], "the long string is longer than the buffer")
            XCTAssertGreaterThan(pieces, 3)
            if chunk == 4099 { XCTAssertEqual(Array(wholes.prefix(3)), [true, true, false]) }
        }
        // Not a string: a clear error.
        let r = JSONReader(source: MemoryByteSource("[1]"))
        XCTAssertEqual(try r.next(), .beginArray)
        XCTAssertThrowsError(try r.readString { _ in })
    }

    func testSizeLimitStopsHugeValues() {
        let text = "\"" + String(repeating: "x", count: 10_000) + "\""
        XCTAssertThrowsError(try parse(text, options: .init(maxValueBytes: 1000, bufferSize: 256))) { e in
            XCTAssertEqual((e as? JSONError)?.kind, .sizeLimit)
        }
    }

    func testSkipValueAndTransfer() throws {
        let text = #"{"skip":{"a":[1,{"b":"\u00e9"}]},"keep":{"x":[true,false,null,"s\"q"],"n":-1.5e3}}"#
        let r = JSONReader(source: MemoryByteSource(text))
        let sink = MemoryByteSink()
        let w = JSONWriter(sink: sink)
        XCTAssertEqual(try r.next(), .beginObject)
        XCTAssertEqual(try r.next(), .name)
        XCTAssertEqual(r.stringValue, "skip")
        try r.skipValue()
        XCTAssertEqual(try r.next(), .name)
        try r.transfer(to: w)
        try w.flush()
        XCTAssertEqual(sink.string, #"{"x":[true,false,null,"s\"q"],"n":-1.5e3}"#)
        XCTAssertEqual(try r.next(), .endObject)
        XCTAssertEqual(try r.next(), .end)
        XCTAssertThrowsError(try r.readValue())
    }

    func testMultipleDocuments() throws {
        let r = JSONReader(source: MemoryByteSource("{\"a\":1}\n[2]\n\n3\n"), options: .init(multipleDocuments: true))
        XCTAssertEqual(try r.readValue(), .object(["a": .number("1")]))
        XCTAssertEqual(try r.readValue(), .array([.number("2")]))
        XCTAssertEqual(try r.readValue(), .number("3"))
        XCTAssertEqual(try r.next(), .end)
    }

    func testTokenObserverSeesEveryTokenWhateverConsumesThem() throws {
        let text = #"{"a":[1,{"b":"x"}],"c":{"d":null},"e":true}"#
        let r = JSONReader(source: MemoryByteSource(text))
        var seen: [JSONToken] = []
        r.tokenObserver = { k, _ in seen.append(k) }
        XCTAssertEqual(try r.next(), .beginObject)
        XCTAssertEqual(try r.next(), .name)
        try r.skipValue()
        XCTAssertEqual(try r.next(), .name)
        try r.transfer(to: JSONWriter(sink: MemoryByteSink()))
        XCTAssertEqual(try r.next(), .name)
        _ = try r.readValue()
        XCTAssertEqual(try r.next(), .endObject)
        XCTAssertEqual(
            seen,
            [
                .beginObject, .name, .beginArray, .number, .beginObject, .name, .string, .endObject, .endArray,
                .name, .beginObject, .name, .null, .endObject, .name, .true, .endObject,
            ])
    }
}
