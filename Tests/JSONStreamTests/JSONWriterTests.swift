import JSONStream
import XCTest

final class JSONWriterTests: XCTestCase {
    private let sample = #"{"b":{"y":[1,{"q":2,"p":3}],"x":{}},"10":"ten","a":[],"2":null,"-1":true,"-Kz":"z"}"#

    func testPrettyOutput() throws {
        let out = try serialize(parse(#"{"a":[1,{"b":null}],"c":{},"d":[]}"#), .init(pretty: true))
        XCTAssertEqual(out, """
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
        XCTAssertEqual(out, """
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
            let key = i % 3 == 0 ? String(Int.random(in: -50_000...50_000, using: &rng)) : "k\(UInt32.random(in: 0...UInt32.max, using: &rng))"
            let inner: JSONValue = .object(["z": .number(JSONNumber(i)), "a": .array([.string("v\(i)"), .object(["d": .null, "c": .bool(true)])])])
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

    func testEscapesControlCharacters() throws {
        XCTAssertEqual(try serialize(.string("a\u{1}\u{1F}\u{7F}\u{2028}")), "\"a\\u0001\\u001f\u{7F}\u{2028}\"")
    }

    func testMisuseIsAnError() {
        let w = JSONWriter(sink: MemoryByteSink())
        XCTAssertThrowsError(try w.endObject())
        XCTAssertThrowsError(try w.name("a"))
        XCTAssertNoThrow(try w.beginObject())
        XCTAssertThrowsError(try w.string("no name"))
    }
}
