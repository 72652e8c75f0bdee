import Foundation
import JSONStream
import TestSupport
import XCTest

final class JSONWriterTests: XCTestCase {
    private let sample = #"{"b":{"y":[1,{"q":2,"p":3}],"x":{}},"10":"ten","a":[],"2":null,"-1":true,"-Kz":"z"}"#

    func testPrettyOutput() throws {
        let out = try serialize(parse(#"{"a":[1,{"b":null}],"c":{},"d":[]}"#), .init(pretty: true))
        XCTAssertEqual(
            out,
            """
            {
              "a": [
                1,
                {
                  "b": null
                }
              ],
              "c": {},
              "d": []
            }
            """)
    }

    func testCanonicalOrderIsTheDatabaseOrder() throws {
        let out = try serialize(parse(sample), .canonical)
        XCTAssertEqual(out, #"{"-1":true,"2":null,"10":"ten","-Kz":"z","a":[],"b":{"x":{},"y":[1,{"p":3,"q":2}]}}"#)
        // The same data in another order gives the same bytes.
        let shuffled = #"{"-Kz":"z","a":[],"2":null,"b":{"x":{},"y":[1,{"p":3,"q":2}]},"-1":true,"10":"ten"}"#
        XCTAssertEqual(try serialize(parse(shuffled), .canonical), out)
    }

    func testPrettyCanonical() throws {
        let out = try serialize(parse(#"{"b":[{"z":1,"y":2}],"a":{}}"#), .init(pretty: true, sortKeys: true))
        XCTAssertEqual(
            out,
            """
            {
              "a": {},
              "b": [
                {
                  "y": 2,
                  "z": 1
                }
              ]
            }
            """)
    }

    /// A tiny sort budget forces runs to the spill file and a merge; the bytes must not change.
    func testSpillingSortGivesTheSameBytes() throws {
        var members: [JSONObject.Member] = []
        var rng = SystemRandomNumberGenerator()
        for i in 0..<3000 {
            let key =
                i % 3 == 0 ? String(Int.random(in: -50_000...50_000, using: &rng)) : "k\(UInt32.random(in: 0...UInt32.max, using: &rng))"
            let inner: JSONValue = .object([
                "z": .number(JSONNumber(i)), "a": .array([.string("v\(i)"), .object(["d": .null, "c": .bool(true)])]),
            ])
            members.append(.init(key: key, value: i % 5 == 0 ? inner : .string(String(repeating: "x", count: i % 50))))
        }
        // Unique keys only (a JSON object with duplicate names has no canonical form).
        var seen = Set<String>()
        members = members.filter { seen.insert($0.key).inserted }
        let value = JSONValue.object(["outer": .object(JSONObject(members)), "list": .array([.object(JSONObject(members.reversed()))])])
        let inMemory = try serialize(value, .canonical)
        let spilled = try serialize(value, .init(sortKeys: true, sortBudget: 512))
        XCTAssertEqual(spilled, inMemory)
        let prettyInMemory = try serialize(value, .init(pretty: true, sortKeys: true))
        let prettySpilled = try serialize(value, .init(pretty: true, sortKeys: true, sortBudget: 700))
        XCTAssertEqual(prettySpilled, prettyInMemory)
        // And the canonical text reads back as the sorted value.
        let back = try parse(inMemory)
        XCTAssertEqual(back.objectValue?["outer"]?.objectValue?.keys, JSONObject(members).sortedByDatabaseOrder().keys)
    }

    /// Random nested objects, some with members in order, some with large members: every sort
    /// budget (spilled runs, members moved to the spill file as they grow, merged or concatenated
    /// runs) gives the bytes of the in-memory sort, streamed or written from values.
    func testSpillingSortAgreesForRandomDocuments() throws {
        var rng = SplitMix64(seed: 11)
        func key(_ i: Int, ordered: Bool) -> String {
            if ordered { return String(format: "k%05d", i) }
            switch rng.next() % 4 {
            case 0: return String(Int(rng.next() % 2000) - 1000)
            case 1: return "k\(rng.next() % 100_000)"
            case 2: return "-K\(rng.next() % 1000)é"
            default: return String(repeating: "z", count: Int(rng.next() % 40))
            }
        }
        func value(depth: Int) -> JSONValue {
            switch depth > 3 ? rng.next() % 3 : rng.next() % 6 {
            case 0: return .number(JSONNumber(Int(rng.next() % 1_000_000)))
            case 1: return .string(String(repeating: "ab\"c", count: Int(rng.next() % 300)))
            case 2: return .null
            case 3: return .array((0..<Int(rng.next() % 4)).map { _ in value(depth: depth + 1) })
            default:
                let ordered = rng.next() % 2 == 0
                var seen = Set<String>()
                var members: [JSONObject.Member] = []
                for i in 0..<Int(rng.next() % (depth == 0 ? 80 : 12)) {
                    let k = key(i, ordered: ordered)
                    if seen.insert(k).inserted { members.append(.init(key: k, value: value(depth: depth + 1))) }
                }
                return .object(JSONObject(members))
            }
        }
        for _ in 0..<30 {
            let v = value(depth: 0)
            let expected = try serialize(v, .canonical)
            let text = try serialize(v)
            for budget in [64, 300, 1000, 5000] {
                XCTAssertEqual(try serialize(v, .init(sortKeys: true, sortBudget: budget)), expected, "budget \(budget)")
                let sink = MemoryByteSink()
                let w = JSONWriter(sink: sink, options: .init(sortKeys: true, sortBudget: budget))
                try JSONReader(source: MemoryByteSource(text, chunkSize: 777)).transfer(to: w)
                try w.flush()
                XCTAssertEqual(sink.string, expected, "streamed, budget \(budget)")
            }
        }
    }

    func testEscapesControlCharacters() throws {
        XCTAssertEqual(try serialize(.string("a\u{1}\u{1F}\u{7F}\u{2028}")), "\"a\\u0001\\u001f\u{7F}\u{2028}\"")
    }

    func testCompactJSONValueIsCopiedOrRewrittenForEveryForm() throws {
        // A value handed over as compact JSON comes out as if written value by value, in compact,
        // pretty and canonical writers alike.
        let inner = Array(#"{"b":[1,{"q":"\"x\"","p":null}],"a":"\u00e9\n"}"#.utf8)
        for options in [JSONWriter.Options.compact, .init(pretty: true), .canonical, .init(pretty: true, sortKeys: true)] {
            let expected = try serialize(parse(#"{"k":[true,"# + String(decoding: inner, as: UTF8.self) + "]}"), options)
            let sink = MemoryByteSink()
            let w = JSONWriter(sink: sink, options: options)
            try w.beginObject()
            try w.name("k")
            try w.beginArray()
            try w.bool(true)
            try Array(try serialize(parse(String(decoding: inner, as: UTF8.self))).utf8).withUnsafeBytes { try w.value(compactJSON: $0) }
            try w.endArray()
            try w.endObject()
            try w.flush()
            XCTAssertEqual(sink.string, expected, "pretty \(options.pretty), sorted \(options.sortKeys)")
        }
    }

    func testBytesWrittenCountsFlushedAndBufferedBytesAndResetStartsOver() throws {
        let sink = MemoryByteSink()
        let w = JSONWriter(sink: sink)
        try w.beginArray()
        try w.string(String(repeating: "x", count: 300_000))  // past the flush threshold
        XCTAssertEqual(w.bytesWritten, 1 + 300_002)
        try w.bool(false)
        XCTAssertEqual(w.bytesWritten, 1 + 300_002 + 6)
        w.reset()
        sink.removeAll()
        XCTAssertEqual(w.bytesWritten, 0)
        try w.beginObject()  // no comma or error from the abandoned array
        try w.name("a")
        try w.null()
        try w.endObject()
        XCTAssertEqual(w.bytesWritten, 10)
        try w.flush()
        XCTAssertEqual(sink.string, #"{"a":null}"#)
        // A value given as compact JSON past the flush threshold goes to the sink directly: counted.
        w.reset()
        sink.removeAll(keepingCapacityUpTo: 0)
        let big = Array(("\"" + String(repeating: "y", count: 300_000) + "\"").utf8)
        try w.beginArray()
        try w.null()
        try big.withUnsafeBytes { try w.value(compactJSON: $0) }
        try w.endArray()
        XCTAssertEqual(w.bytesWritten, 1 + 4 + 1 + big.count + 1)
        try w.flush()
        XCTAssertEqual(sink.bytes.count, w.bytesWritten)
    }

    /// A string longer than the output buffer goes to the sink in pieces (it is not held a second
    /// time in the buffer): the same bytes as written whole, with escapes and multi-byte characters
    /// across the pieces' boundaries, in compact, pretty and sorted writers.
    func testAStringLongerThanTheBufferIsWrittenInPiecesWithTheSameBytes() throws {
        let unit = "ab\"c\\\n\u{1}é€😀" + String(repeating: "x", count: 1000)
        let long = String(repeating: unit, count: 3000)
        let value = JSONValue.object(["a": .array([.string("short"), .string(long)]), "b": .string(long)])
        for options in [JSONWriter.Options.compact, .init(pretty: true), .canonical] {
            let text = try serialize(value, options)
            XCTAssertEqual(try parse(text), value)
            let sink = PieceCountingSink()
            let writer = JSONWriter(sink: sink, options: options)
            try writer.value(value)
            try writer.flush()
            XCTAssertEqual(String(decoding: sink.bytes, as: UTF8.self), text)
            // No piece the size of the string: it was not buffered whole.
            if !options.sortKeys { XCTAssertLessThan(sink.largestWrite, 1 << 20) }
        }
    }

    private final class PieceCountingSink: JSONByteSink {
        var bytes: [UInt8] = []
        var largestWrite = 0
        func write(_ piece: UnsafeRawBufferPointer) throws {
            bytes.append(contentsOf: piece)
            largestWrite = max(largestWrite, piece.count)
        }
    }

    func testMisuseIsAnError() {
        let w = JSONWriter(sink: MemoryByteSink())
        XCTAssertThrowsError(try w.endObject())
        XCTAssertThrowsError(try w.name("a"))
        XCTAssertNoThrow(try w.beginObject())
        XCTAssertThrowsError(try w.string("no name"))
    }

    /// A run of members written after the structure before them, as sharded runs write them.
    func testAContinuedContainerWritesMembersWithoutItsBrackets() throws {
        let sink = MemoryByteSink()
        let w = JSONWriter(sink: sink)
        try w.raw("{\"x\":0,")
        try w.continueContainer(isObject: true)
        try w.name("a")
        try w.value(.array([.number(JSONNumber(1))]))
        try w.name("b\"")
        try w.null()
        try w.endContinued()
        try w.raw(",\"l\":[")
        try w.continueContainer(isObject: false)
        try w.number(JSONNumber(2))
        try w.string("s")
        try w.endContinued()
        try w.raw("]}")
        try w.flush()
        XCTAssertEqual(sink.string, #"{"x":0,"a":[1],"b\"":null,"l":[2,"s"]}"#)
        // Paired only with itself, and only at the top.
        XCTAssertThrowsError(try JSONWriter(sink: MemoryByteSink()).endContinued())
        let open = JSONWriter(sink: MemoryByteSink())
        try open.beginObject()
        XCTAssertThrowsError(try open.endContinued(), "an object this writer opened")
        XCTAssertThrowsError(try open.continueContainer(isObject: false), "inside a container")
        XCTAssertThrowsError(try JSONWriter(sink: MemoryByteSink(), options: .canonical).continueContainer(isObject: true))
    }
}
