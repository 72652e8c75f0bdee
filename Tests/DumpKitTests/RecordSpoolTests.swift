import JSONStream
import XCTest

@testable import DumpKit

/// Frames written to the spool come back with the same paths and the same compact bytes.
final class RecordSpoolTests: XCTestCase {
    private func compact(_ v: JSONValue) throws -> [UInt8] {
        let sink = MemoryByteSink()
        let w = JSONWriter(sink: sink)
        try w.value(v)
        try w.flush()
        return sink.bytes
    }

    private var frames: [([String], JSONValue)] {
        let huge = String(repeating: "é🙇‍♂️\"x\\", count: 400_000)  // several MiB, pieces and reads split it
        var many: [([String], JSONValue)] = []
        for i in 0..<3000 {
            many.append((["v2", "todolist", "-K\(i)"], .object(["title": .string("t\(i)"), "n": .number(JSONNumber(i))])))
        }
        return [
            (["v2", "ユーザー", "鍵/~"], .object(["名前": .string("値"), "empty": .object([:]), "list": .array([])])),
            (["v2", "empty"], .object([:])),
            (["v2", "array"], .array([])),
            (["v2", "huge"], .string(huge)),
            ([""], .null),
        ] + many + [(["v3", "last"], .object(["big": .array([.string(huge), .number("1.5e3"), .bool(true)])]))]
    }

    private func write(_ frames: [([String], JSONValue)]) throws -> RecordSpool {
        let spool = try RecordSpool(temporaryDirectory: nil)
        for (path, value) in frames {
            try spool.beginFrame(path)
            try spool.writer.value(value)
            try spool.endFrame()
        }
        try spool.finishWriting()
        return spool
    }

    func testFramesRoundTripAsBytes() throws {
        let frames = self.frames
        let spool = try write(frames)
        var i = 0
        while let path = try spool.nextFrame() {
            var bytes: [UInt8] = []
            while try spool.readValuePiece({ bytes.append(contentsOf: $0) }) {}
            XCTAssertEqual(path, frames[i].0)
            XCTAssertEqual(bytes, try compact(frames[i].1), "frame \(i)")
            i += 1
        }
        XCTAssertEqual(i, frames.count)
    }

    func testFramesRoundTripThroughAReader() throws {
        let frames = self.frames
        let spool = try write(frames)
        var i = 0
        while let path = try spool.nextFrame() {
            XCTAssertEqual(path, frames[i].0)
            // Every other value is left unread: the next frame skips it.
            if i % 2 == 0 {
                let reader = JSONReader(source: spool.valueSource, options: .init(bufferSize: 1 << 10), sourceName: "spool")
                XCTAssertEqual(try reader.readValue(), frames[i].1, "frame \(i)")
            }
            i += 1
        }
        XCTAssertEqual(i, frames.count)
    }

    func testEmptySpool() throws {
        let spool = try write([])
        XCTAssertNil(try spool.nextFrame())
    }

    func testCompactTextGoesToTheOutputAsItIs() throws {
        let sink = MemoryByteSink()
        let w = JSONWriter(sink: sink)
        try w.beginObject()
        try w.name("a")
        try w.value(compactJSON: { piece in
            for part in [#"{"x":[1,"#, #"2]}"#] { var p = part; try p.withUTF8 { try piece(UnsafeRawBufferPointer($0)) } }
        })
        try w.name("b")
        let big = "\"" + String(repeating: "y", count: 600_000) + "\""
        try w.value(compactJSON: { piece in var p = big; try p.withUTF8 { try piece(UnsafeRawBufferPointer($0)) } })
        try w.endObject()
        try w.flush()
        XCTAssertEqual(sink.string, #"{"a":{"x":[1,2]},"b":"# + big + "}")
        XCTAssertThrowsError(try JSONWriter(sink: MemoryByteSink(), options: .init(pretty: true)).value(compactJSON: { _ in }))
    }

    /// Moved records land in the same place in every output form.
    func testMovedRecordsInEveryOutputForm() throws {
        let dump = #"{"v1":{"todolist":{"-Kb":{"z":1,"a":"é"},"-Ka":{"t":{}}}},"v2":{"keep":{"b":[1,{}],"a":2}},"m":3}"#
        for options in [JSONWriter.Options.compact, .canonical, .init(pretty: true), .init(pretty: true, sortKeys: true)] {
            // As `migrate` does, the targets are read too, so /v2 is spooled and merged with the moves.
            let patterns = [try PathPattern("/v1/todolist/{id}"), try PathPattern("/v2/todolist/{id}")]
            let reader = DumpReader(source: MemoryByteSource(dump), patterns: patterns)
            let sink = MemoryByteSink()
            let writer = DumpWriter(writer: JSONWriter(sink: sink, options: options), relocationTargets: [try PathPattern("/v2/todolist/{id}")])
            try Pipeline(transformers: [ClosureTransformer(concurrency: 1, body: { r in [Record(path: ["v2", "todolist", r.captures["id"]!], value: r.value)] })])
                .run(reader: reader, writer: writer)
            // The expected form: the same tree written directly.
            let expected = MemoryByteSink()
            let w = JSONWriter(sink: expected, options: options)
            try w.value(.object(["m": .number("3"),
                                 "v2": .object(["todolist": .object(["-Kb": .object(["z": .number("1"), "a": .string("é")]),
                                                                     "-Ka": .object(["t": .object([:])])]),
                                                "keep": .object(["b": .array([.number("1"), .object([:])]), "a": .number("2")])])]))
            try w.raw("\n")
            try w.flush()
            XCTAssertEqual(sink.string, expected.string, "\(options)")
        }
    }
}
