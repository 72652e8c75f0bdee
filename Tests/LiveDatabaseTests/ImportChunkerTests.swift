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
