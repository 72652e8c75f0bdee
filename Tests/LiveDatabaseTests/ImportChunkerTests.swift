import DumpKit
import JSONStream
import LiveDatabase
import RTDBTestServer
import TestSupport
import XCTest

/// The chunk planner: entries at the right depth, chunk sizes, and chunks that, applied as PATCHes,
/// give the dump's content.
final class ImportChunkerTests: XCTestCase {
    private func chunks(_ json: String, size: Int, mode: ImportChunker.Mode) throws -> [ImportChunk] {
        let chunker = ImportChunker(reader: JSONReader(bytes: Array(json.utf8)), chunkSize: size, mode: mode)
        var result: [ImportChunk] = []
        while let c = try chunker.next() { result.append(c) }
        return result
    }

    private func bodies(_ chunks: [ImportChunk]) -> [String] {
        chunks.map { String(decoding: $0.body, as: UTF8.self) }
    }

    func testMergeWritesEveryLeafByItsPathAndLeavesOutNullsAndEmptyObjects() throws {
        let c = try chunks(#"{"a":{"b":1,"c":[1,null,"x"]},"d":"s\n","e":null,"f":{},"g":{"h":{}}}"#, size: 1 << 20, mode: .merge)
        XCTAssertEqual(bodies(c), [#"{"a/b":1,"a/c/0":1,"a/c/2":"x","d":"s\n"}"#])
        XCTAssertEqual(c.map(\.index), [0])
        XCTAssertEqual(c[0].pointers, ["/a/b", "/a/c/0", "/a/c/2", "/d"])
    }

    func testReplaceWritesTopLevelChildrenWholeWhenTheyFit() throws {
        let c = try chunks(#"{"a":{"b":1,"c":[1,null,"x"]},"d":"s"}"#, size: 1 << 20, mode: .replace)
        XCTAssertEqual(bodies(c), [#"{"a":{"b":1,"c":{"0":1,"2":"x"}},"d":"s"}"#])
        XCTAssertFalse(c[0].isBarrier)
    }

    func testReplaceDeletesALargeTopLevelChildFirstThenWritesItInPieces() throws {
        let big = (0..<20).map { #""k\#($0)":{"v":"\#(String(repeating: "x", count: 20))"}"# }.joined(separator: ",")
        let c = try chunks(#"{"small":1,"big":{\#(big)},"z":2}"#, size: 200, mode: .replace)
        let barriers = c.filter(\.isBarrier)
        XCTAssertEqual(barriers.count, 1)
        XCTAssertEqual(String(decoding: barriers[0].body, as: UTF8.self), #"{"big":null}"#)
        // The deletion comes before every write below "big".
        let barrierIndex = c.firstIndex(where: \.isBarrier)!
        for chunk in c[..<barrierIndex] {
            XCTAssertFalse(chunk.entries.contains { $0.path.first == "big" })
        }
        for chunk in c where !chunk.isBarrier {
            XCTAssertLessThanOrEqual(chunk.body.count, 200, String(decoding: chunk.body, as: UTF8.self))
        }
        XCTAssertEqual(c.map(\.index), Array(0..<c.count))
    }

    func testChunksStayUnderTheSizeUnlessOneValueIsLarger() throws {
        let long = String(repeating: "y", count: 500)
        let c = try chunks(#"{"a":{"1":"\#(long)","2":3,"3":4},"b":[5,6,7]}"#, size: 128, mode: .merge)
        for chunk in c {
            XCTAssertTrue(chunk.body.count <= 128 || chunk.entries.count == 1, String(decoding: chunk.body, as: UTF8.self))
        }
        XCTAssertEqual(c.flatMap(\.pointers), ["/a/1", "/a/2", "/a/3", "/b/0", "/b/1", "/b/2"])
    }

    func testTopLevelThatIsNotAnObjectIsRefused() {
        XCTAssertThrowsError(try chunks(#""just a string""#, size: 100, mode: .merge))
        XCTAssertThrowsError(try chunks(#"{"a":1} {"b":2}"#, size: 100, mode: .merge))
    }

    /// Generated dumps with nested containers, arrays with holes and keys that need escaping, cut
    /// so small that containers kept whole are opened up several levels deep at once (their text
    /// moved within the chunker's buffer), apply chunk by chunk to the dump's content.
    func testNestedContainersOpenedUpAtAnyPointApplyToTheDumpsContent() throws {
        var rng = SplitMix64(seed: 7)
        let keys = ["a", "b", "k\"q", "k\\b", "é", "0", "1", "3", "long-key-with-twenty-chars"]
        func value(_ depth: Int) -> String {
            let r = Int.random(in: 0..<10, using: &rng)
            if depth > 4 || r < 4 {
                return ["null", "true", "-12", #""s\n\u00e9\"""#, "\"" + String(repeating: "z", count: r * 9) + "\"", "1.5e3"]
                    .randomElement(using: &rng)!
            }
            if r < 6 { return "[" + (0..<Int.random(in: 0...4, using: &rng)).map { _ in value(depth + 1) }.joined(separator: ",") + "]" }
            let members = Set((0..<Int.random(in: 0...5, using: &rng)).map { _ in keys.randomElement(using: &rng)! })
            return "{"
                + members.sorted().map { k in
                    let escaped = k.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
                    return "\"\(escaped)\":\(value(depth + 1))"
                }.joined(separator: ",") + "}"
        }
        for i in 0..<300 {
            let dump = Array(("{\"top\":" + value(1) + ",\"next\":" + value(1) + "}").utf8)
            let expected = RTDBDatabase(configuration: .init())
            try expected.load(json: dump)
            for size in [64, 100, 180, 400] {
                for mode in [ImportChunker.Mode.merge, .replace] {
                    let db = RTDBDatabase(configuration: .init())
                    let chunker = ImportChunker(reader: JSONReader(bytes: dump), chunkSize: size, mode: mode)
                    while let chunk = try chunker.next() {
                        let body = String(decoding: chunk.body, as: UTF8.self)
                        XCTAssertTrue(chunk.body.count <= size || chunk.count == 1, "\(i) \(size) \(mode): \(body)")
                        let response = db.handle(RESTRequest(method: "PATCH", path: [], query: [:], body: chunk.body))
                        XCTAssertEqual(response.status, 200, "\(i) \(size) \(mode): \(body)")
                    }
                    XCTAssertEqual(
                        db.contents(), expected.contents(), "\(i) size \(size) \(mode): \(String(decoding: dump, as: UTF8.self))")
                }
            }
        }
    }

    /// Generated NDJSON records (each a value at its own path, priorities and `.value` leaves among
    /// them), cut small in both modes, write what the records say.
    func testRecordsCutSmallApplyToWhatTheySay() throws {
        var rng = SplitMix64(seed: 11)
        func value(_ depth: Int) -> String {
            let r = Int.random(in: 0..<10, using: &rng)
            if depth > 3 || r < 4 {
                return ["true", "-12", #""s\n\"""#, "\"" + String(repeating: "z", count: r * 11) + "\""].randomElement(using: &rng)!
            }
            if r == 4 { return #"{".priority":\#(value(9)),".value":\#(value(9))}"# }
            if r == 5 { return "[" + (0..<Int.random(in: 1...4, using: &rng)).map { _ in value(depth + 1) }.joined(separator: ",") + "]" }
            let keys = Set(
                (0..<Int.random(in: 1...4, using: &rng)).map { _ in ["a", "k\\\"q", "1", ".priority"].randomElement(using: &rng)! })
            // A priority is a leaf.
            return "{" + keys.sorted().map { "\"\($0)\":\($0 == ".priority" ? value(9) : value(depth + 1))" }.joined(separator: ",") + "}"
        }
        for i in 0..<200 {
            let paths = ["/r/a", "/r/b/c", "/s", "/t/0"].filter { _ in Bool.random(using: &rng) }
            let records = paths.map { (path: $0, value: value(1)) }
            let text = Array(records.map { #"{"path":"\#($0.path)","value":\#($0.value)}"# }.joined(separator: "\n").utf8)
            let expected = RTDBDatabase(configuration: .init())
            for record in records {
                try expected.load(json: Array(record.value.utf8), at: record.path.split(separator: "/").map(String.init))
            }
            for size in [64, 120, 300] {
                for mode in [ImportChunker.Mode.merge, .replace] {
                    let db = RTDBDatabase(configuration: .init())
                    let chunker = ImportChunker(records: NDJSONReader(source: MemoryByteSource(text)), chunkSize: size, mode: mode)
                    while let chunk = try chunker.next() {
                        let response = db.handle(RESTRequest(method: "PATCH", path: [], query: [:], body: chunk.body))
                        XCTAssertEqual(response.status, 200, "\(i) \(size) \(mode): \(String(decoding: chunk.body, as: UTF8.self))")
                    }
                    XCTAssertEqual(
                        String(decoding: db.contents(export: true), as: UTF8.self),
                        String(decoding: expected.contents(export: true), as: UTF8.self),
                        "\(i) size \(size) \(mode): \(String(decoding: text, as: UTF8.self))")
                }
            }
        }
    }

    /// Every real dump, cut at several sizes in both modes, applied chunk by chunk to an empty
    /// database, reads back as the dump loaded whole.
    func testChunksOfRealDumpsApplyToTheDumpsContent() throws {
        let dir = try TestData.directory("real-dumps")
        for file in try TestData.files(in: dir, withExtension: "json") {
            let bytes = try contents(file.path)
            let expected = RTDBDatabase(configuration: .init())
            try expected.load(json: bytes)
            for size in [256, 4096, 1 << 20] {
                for mode in [ImportChunker.Mode.merge, .replace] {
                    let db = RTDBDatabase(configuration: .init())
                    let chunker = ImportChunker(reader: JSONReader(bytes: bytes), chunkSize: size, mode: mode)
                    while let chunk = try chunker.next() {
                        let response = db.handle(RESTRequest(method: "PATCH", path: [], query: [:], body: chunk.body))
                        XCTAssertEqual(
                            response.status, 200,
                            "\(file.lastPathComponent) \(size) \(mode): \(String(decoding: response.body, as: UTF8.self))")
                    }
                    XCTAssertEqual(db.contents(), expected.contents(), "\(file.lastPathComponent) size \(size) \(mode)")
                }
            }
        }
    }
}
