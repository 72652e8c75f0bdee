import JSONStream
import XCTest

/// `JSONReader.readValue(into:)` and `JSONTape`: the tape holds exactly what `readValue` builds, with
/// every value's position, across buffer refills and reuse.
final class JSONTapeTests: XCTestCase {
    /// Documents with the awkward parts: nesting, empty containers, duplicate and non-ASCII keys
    /// (precomposed and decomposed), escapes, numbers at the edges, scalars at the top.
    static let documents: [String] = [
        #"{"a":1,"b":[true,false,null,{"c":"d"}],"e":{},"f":[]}"#,
        #"{"dup":1,"dup":2,"x":{"dup":[3],"dup":{"y":4}}}"#,
        #"{"caf\u00e9":"é","café":"e\u0301","日本語":{"キー":"値"},"\ud83d\ude00":"😀"}"#,
        #"[1e400,-1e400,-0,0.0,1.0,1,1E2,-0.0e-0,123456789012345678901234567890,0.1e-400]"#,
        #"{"s":"line\nbreak \"quoted\" \\ \/ \t \u0000 \u001f end"}"#,
        #""just a string""#,
        "-12.5e3",
        "null",
        "[]",
        "{}",
        "[[[[[[[[[[{\"deep\":[[[[[[[[[[1]]]]]]]]]]}]]]]]]]]]]",
        " \n {\n  \"pretty\": [\n    1,\n    \"two\"\n  ],\n  \"k\": {\"n\": null}\n}\n",
    ]

    private func readValue(_ text: String, bufferSize: Int) throws -> JSONValue {
        try JSONReader(source: MemoryByteSource(Array(text.utf8), chunkSize: 7), options: .init(bufferSize: bufferSize)).readValue()
    }

    private func readTape(_ text: String, bufferSize: Int, into tape: JSONTape = JSONTape()) throws -> JSONTape {
        let reader = JSONReader(source: MemoryByteSource(Array(text.utf8), chunkSize: 7), options: .init(bufferSize: bufferSize))
        try reader.readValue(into: tape)
        XCTAssertEqual(try reader.next(), .end)
        return tape
    }

    func testTapeHoldsWhatReadValueBuilds() throws {
        // 64 bytes: most tokens and every document cross buffer refills (the source also hands out
        // 7 bytes per read).
        for bufferSize in [64, 1 << 20] {
            for text in Self.documents {
                let tape = try readTape(text, bufferSize: bufferSize)
                XCTAssertEqual(tape.value(at: 0), try readValue(text, bufferSize: bufferSize), text)
                XCTAssertEqual(Int(tape[0].next), tape.count, text)
            }
        }
    }

    func testTapeBuiltFromAValueMatchesTheReadOne() throws {
        for text in Self.documents {
            let read = try readTape(text, bufferSize: 64)
            let built = JSONTape()
            built.fill(read.value(at: 0))
            XCTAssertEqual(built.count, read.count, text)
            for i in 0..<read.count {
                XCTAssertEqual(built[i].kind, read[i].kind, text)
                XCTAssertEqual(built[i].next, read[i].next, text)
                XCTAssertEqual(built[i].count, read[i].count, text)
                XCTAssertEqual(built[i].isASCII, read[i].isASCII, text)
                XCTAssertEqual(Array(built.bytes(i)), Array(read.bytes(i)), text)
            }
        }
    }

    func testOneTapeIsReusedAcrossRecords() throws {
        let records = [#"{"big":"\#(String(repeating: "x", count: 100_000))","n":[1,2,3]}"#, "7", #"{"small":true}"#, "[]"]
        let text = "[" + records.joined(separator: ",") + "]"
        let reader = JSONReader(source: MemoryByteSource(Array(text.utf8), chunkSize: 1000), options: .init(bufferSize: 64))
        XCTAssertEqual(try reader.next(), .beginArray)
        let tape = JSONTape()
        for record in records {
            try reader.readValue(into: tape)
            XCTAssertEqual(tape.value(at: 0), try readValue(record, bufferSize: 1 << 20))
        }
        XCTAssertEqual(try reader.next(), .endArray)
    }

    func testHugeStringsAndDeepNesting() throws {
        let huge = String(repeating: "ab€😀", count: 300_000)  // 3.3 MB of UTF-8
        let hugeText = #"{"k":"\#(huge)","tail":1}"#
        let tape = try readTape(hugeText, bufferSize: 64)
        XCTAssertEqual(tape.value(at: 0), .object(["k": .string(huge), "tail": .number("1")]))
        XCTAssertEqual(tape.bytes(2).count, huge.utf8.count)

        let depth = 500
        let deep = String(repeating: "[", count: depth) + #"{"x":"y"}"# + String(repeating: "]", count: depth)
        let deepTape = try readTape(deep, bufferSize: 64)
        XCTAssertEqual(deepTape.count, depth + 3)
        XCTAssertEqual(deepTape.value(at: 0), try readValue(deep, bufferSize: 1 << 20))
        XCTAssertThrowsError(try readTape(String(repeating: "[", count: 600) + String(repeating: "]", count: 600), bufferSize: 64)) { e in
            XCTAssertEqual((e as? JSONError)?.kind, .depthLimit)
        }
    }

    func testValuesLargerThanTheLimitFailAsReadValueDoes() throws {
        let text = #"{"a":"\#(String(repeating: "x", count: 5000))"}"#
        let options = JSONReader.Options(maxValueBytes: 1000, bufferSize: 64)
        XCTAssertThrowsError(try JSONReader(bytes: Array(text.utf8), options: options).readValue(into: JSONTape())) { e in
            XCTAssertEqual((e as? JSONError)?.kind, .sizeLimit)
        }
        XCTAssertThrowsError(try JSONReader(bytes: Array(text.utf8), options: options).readValue()) { e in
            XCTAssertEqual((e as? JSONError)?.kind, .sizeLimit)
        }
    }

    /// Each entry's line and column are where the reader saw the value's first token.
    func testEntriesKnowWhereTheirValuesStart() throws {
        for text in Self.documents {
            let reader = JSONReader(source: MemoryByteSource(Array(text.utf8), chunkSize: 7), options: .init(bufferSize: 64))
            var seen: [(Int, Int)] = []
            reader.tokenObserver = { token, r in
                switch token {
                case .endObject, .endArray, .end: return
                default: seen.append(r.location)
                }
            }
            let tape = JSONTape()
            try reader.readValue(into: tape)
            XCTAssertEqual(tape.count, seen.count, text)
            for i in 0..<min(tape.count, seen.count) {
                XCTAssertEqual(Int(tape[i].line), seen[i].0, "\(text) entry \(i)")
                XCTAssertEqual(Int(tape[i].column), seen[i].1, "\(text) entry \(i)")
            }
        }
        let pretty = try readTape(Self.documents.last!, bufferSize: 64)
        let two = try XCTUnwrap(pretty.index(at: ["pretty", "1"]))
        XCTAssertEqual(pretty[two].line, 5)
        XCTAssertEqual(pretty[two].column, 5)
    }

    /// Pointer segments resolve as `JSONValue.value(at:)` does: the first of duplicate keys, keys
    /// compared as Swift compares strings, array indices only in canonical form.
    func testIndexAtResolvesPointersAsJSONValueDoes() throws {
        let paths: [[String]] = [
            ["dup"], ["x", "dup"], ["x", "dup", "0"], ["café"], ["cafe\u{301}"], ["日本語", "キー"],
            ["b", "3", "c"], ["b", "03"], ["b", "-1"], ["b", "4"], ["missing"], ["a", "x"], [], ["\u{1F600}"],
        ]
        for text in Self.documents {
            let tape = try readTape(text, bufferSize: 64)
            let value = tape.value(at: 0)
            for path in paths {
                XCTAssertEqual(tape.index(at: path).map { tape.value(at: $0) }, value.value(at: path), "\(text) at \(path)")
            }
        }
    }
}
