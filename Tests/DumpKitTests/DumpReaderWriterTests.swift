import DumpKit
import JSONStream
import XCTest

/// Reading records out of a tree and writing the tree back around them.
final class DumpReaderWriterTests: XCTestCase {
    private let dump =
        #"{"meta":{"version":1},"v1":{"todolist":{"-Ka":{"title":"a","n":1},"-Kb":{"title":"b"},"-Kc":{"title":"c"}},"empty":{}},"list":[{"x":1},{"x":2}]}"#

    /// Runs `transform` over the records `patterns` match and returns the written tree.
    private func rewrite(
        _ text: String, _ patterns: [String], options: JSONWriter.Options = .compact, moveTargets: [String] = [],
        transform: @escaping @Sendable (Record) throws -> [Record] = { [$0] }, concurrency: Int = 1
    ) throws -> String {
        let reader = DumpReader(source: MemoryByteSource(text), patterns: try patterns.map { try PathPattern($0) })
        let sink = MemoryByteSink()
        let writer = try DumpWriter(writer: JSONWriter(sink: sink, options: options), moveTargets: moveTargets.map { try PathPattern($0) })
        try Pipeline(transformers: [ClosureTransformer(concurrency: concurrency, body: transform)]).run(reader: reader, writer: writer)
        return sink.string
    }

    func testUnchangedRecordsGiveTheSameBytes() throws {
        XCTAssertEqual(try rewrite(dump, ["/v1/todolist/{id}"]), dump + "\n")
        XCTAssertEqual(try rewrite(dump, ["/list/*", "/meta"]), dump + "\n")
        XCTAssertEqual(try rewrite(dump, []), dump + "\n")
        XCTAssertEqual(try rewrite(dump, ["/"]), dump + "\n")
    }

    func testRecordsCarryPathAndCaptures() throws {
        let reader = DumpReader(source: MemoryByteSource(dump), patterns: [try PathPattern("/v1/todolist/{id}")])
        var seen: [Record] = []
        while let r = try reader.next(passThrough: nil) { seen.append(r) }
        let todo = seen.filter { $0.path.count == 3 }
        XCTAssertEqual(todo.map(\.captures), [["id": "-Ka"], ["id": "-Kb"], ["id": "-Kc"]])
        XCTAssertEqual(todo[0].value, .object(["title": .string("a"), "n": .number("1")]))
        // Content outside the pattern becomes records of its own, so nothing is lost.
        XCTAssertEqual(seen.filter { $0.path.count != 3 }.map(\.pointer), ["/meta", "/v1/empty", "/list"])
    }

    func testDeletedAndMovedRecords() throws {
        let out = try rewrite(dump, ["/v1/todolist/{id}"], moveTargets: ["/v2/todolist/{id}"]) { r in
            if r.captures["id"] == "-Kb" { return [] }
            return [Record(path: ["v2", "todolist", r.captures["id"]!], value: r.value)]
        }
        // /v1/todolist lost all its records and is left out; /v1/empty was empty already and stays.
        XCTAssertEqual(
            out,
            #"{"meta":{"version":1},"v1":{"empty":{}},"list":[{"x":1},{"x":2}],"v2":{"todolist":{"-Ka":{"title":"a","n":1},"-Kc":{"title":"c"}}}}"#
                + "\n")
    }

    func testWindowedRecordsGiveTheSameOutputAsInline() throws {
        // Worker threads write the values of compact writers as JSON text; the writing thread
        // copies it into place, into the spool (moves) or, for NDJSON, into lines. Pretty and
        // canonical writers take the records themselves. Every form must match the inline run.
        let moves: @Sendable (Record) throws -> [Record] = { r in
            switch r.captures["id"] {
            case "-Kb": return []
            case "-Kc": return [r, Record(path: ["v2", "todolist", "-Kc"], value: .object(["t": .string("é\n\"")]))]
            default: return [Record(path: r.path, value: .object(["kept": r.value!, "n": .number("1.50")]))]
            }
        }
        for options in [JSONWriter.Options.compact, .canonical, JSONWriter.Options(pretty: true)] {
            let targets = ["/v2/todolist/{id}"]
            XCTAssertEqual(
                try rewrite(dump, ["/v1/todolist/{id}"], options: options, moveTargets: targets, transform: moves, concurrency: 3),
                try rewrite(dump, ["/v1/todolist/{id}"], options: options, moveTargets: targets, transform: moves))
        }
        for options in [JSONWriter.Options.compact, .canonical] {
            func ndjson(_ concurrency: Int) throws -> String {
                let sink = MemoryByteSink()
                let reader = DumpReader(source: MemoryByteSource(dump), patterns: [try PathPattern("/v1/todolist/{id}")])
                try Pipeline(transformers: [ClosureTransformer(concurrency: concurrency, body: moves)])
                    .run(reader: reader, writer: NDJSONWriter(writer: JSONWriter(sink: sink, options: options)))
                return sink.string
            }
            XCTAssertEqual(try ndjson(3), try ndjson(1))
            XCTAssertTrue(try ndjson(3).contains(#"{"path":"/v2/todolist/-Kc","value":{"t":"é\n\""}}"#))
        }
    }

    func testMovedRecordsJoinAnExistingObjectAndConflictsNameBothPointers() throws {
        // /meta exists: the records go into it, after its members, and it stays where it was.
        let moved = try rewrite(dump, ["/v1/todolist/{id}"], moveTargets: ["/meta/{id}"]) { r in
            [Record(path: ["meta", r.captures["id"]!], value: r.value)]
        }
        XCTAssertEqual(
            moved,
            #"{"meta":{"version":1,"-Ka":{"title":"a","n":1},"-Kb":{"title":"b"},"-Kc":{"title":"c"}},"v1":{"empty":{}},"list":[{"x":1},{"x":2}]}"#
                + "\n")
        // /meta/version holds a value: a conflict naming the record's source and target.
        XCTAssertThrowsError(
            try rewrite(dump, ["/v1/todolist/{id}"], moveTargets: ["/meta/version"]) { r in
                r.captures["id"] == "-Kb" ? [Record(path: ["meta", "version"], value: r.value)] : [r]
            }
        ) { e in
            XCTAssertEqual("\(e)", "record /v1/todolist/-Kb moved to /meta/version: the input already has a value there")
        }
        // Two records moved to one path.
        XCTAssertThrowsError(
            try rewrite(dump, ["/v1/todolist/{id}"], moveTargets: ["/one"]) { r in [Record(path: ["one"], value: r.value)] }
        ) { e in
            XCTAssertEqual("\(e)", "record /v1/todolist/-Kb moved to /one: record /v1/todolist/-Ka is moved there too")
        }
        // Below a value that is not an object (an array, a number).
        XCTAssertThrowsError(
            try rewrite(dump, ["/v1/todolist/{id}"], moveTargets: ["/list/{id}"]) { r in
                [Record(path: ["list", r.captures["id"]!], value: r.value)]
            }
        ) { e in
            XCTAssertEqual("\(e)", "record /v1/todolist/-Ka moved to /list/-Ka: /list is not an object")
        }
        XCTAssertThrowsError(
            try rewrite(dump, ["/v1/todolist/{id}"], moveTargets: ["/meta/version/{id}"]) { r in
                [Record(path: ["meta", "version", r.captures["id"]!], value: r.value)]
            }
        ) { e in
            XCTAssertEqual("\(e)", "record /v1/todolist/-Ka moved to /meta/version/-Ka: /meta/version is not an object")
        }
        // Keys and depths the database forbids.
        XCTAssertThrowsError(
            try rewrite(dump, ["/v1/todolist/{id}"], moveTargets: ["/{id}"]) { r in
                [Record(path: ["a.b" + r.captures["id"]!], value: r.value)]
            }
        ) { e in
            XCTAssertEqual("\(e)", "record /v1/todolist/-Ka moved to /a.b-Ka: key 'a.b-Ka' holds '.', which the database forbids in keys")
        }
        let deep = Array(repeating: "d", count: 32)
        XCTAssertThrowsError(
            try rewrite(dump, ["/v1/todolist/{id}"], moveTargets: ["/" + deep.joined(separator: "/")]) { r in
                [Record(path: deep, value: r.value)]
            }
        ) { e in
            XCTAssertTrue("\(e)".hasSuffix("its value would end 33 keys deep, deeper than the database's 32"), "\(e)")
        }
    }

    func testMoveConflictsCanBeSetAside() throws {
        let reader = DumpReader(source: MemoryByteSource(dump), patterns: [try PathPattern("/v1/todolist/{id}")])
        let sink = MemoryByteSink()
        let writer = try DumpWriter(writer: JSONWriter(sink: sink), moveTargets: [try PathPattern("/meta/{id}")])
        var conflicts: [MoveConflict] = []
        writer.onMoveConflict = { conflicts.append($0) }
        try Pipeline(transformers: [
            ClosureTransformer(concurrency: 1) { r in
                [Record(path: ["meta", r.captures["id"] == "-Kb" ? "version" : r.captures["id"]!], value: r.value)]
            }
        ])
        .run(reader: reader, writer: writer)
        XCTAssertEqual(
            sink.string,
            #"{"meta":{"version":1,"-Ka":{"title":"a","n":1},"-Kc":{"title":"c"}},"v1":{"empty":{}},"list":[{"x":1},{"x":2}]}"# + "\n")
        XCTAssertEqual(conflicts.map(\.source), [["v1", "todolist", "-Kb"]])
        XCTAssertEqual(conflicts.first?.value, .object(["title": .string("b")]))
    }

    func testWindowedPipelineKeepsOrder() throws {
        var members: [String] = []
        for i in 0..<500 { members.append("\"k\(i)\":{\"v\":\(i)}") }
        let text = "{\"a\":{" + members.joined(separator: ",") + "},\"z\":[1,{\"b\":2}]}"
        let out = try rewrite(
            text, ["/a/{k}"],
            transform: { r in
                usleep(UInt32.random(in: 0...300))
                var v = r.value!.objectValue!
                v["seen"] = .bool(true)
                return [Record(path: r.path, value: .object(v))]
            }, concurrency: 4)
        let expected =
            "{\"a\":{" + (0..<500).map { "\"k\($0)\":{\"v\":\($0),\"seen\":true}" }.joined(separator: ",") + "},\"z\":[1,{\"b\":2}]}\n"
        XCTAssertEqual(out, expected)
    }

    func testWindowedPassThroughKeepsEveryByte() throws {
        // Content between records is recorded while records are in flight and replayed in order.
        let text = #"{"a":{"k1":{"v":1},"s":"é\n\"q\"\\","k2":{"v":2},"n":[1e-7,-0.0,{"deep":[[[]]]}],"k3":{"v":3}},"z":{"t":"日本"}}"#
        for concurrency in [1, 3] {
            XCTAssertEqual(try rewrite(text, ["/a/k1", "/a/k2", "/a/k3"], concurrency: concurrency), text + "\n")
        }
    }

    func testCandidateReaderPassThroughValuesKeepEveryByte() throws {
        // Containers read into memory but holding no candidate reach the writer as values.
        let text =
            #"{"a":{"x":{"s":"long enough","n":1.50},"y":{"s":"no","list":[true,null,"\u0000é"]},"z":"short"},"b":[{"s":"long enough too"},{}]}"#
        for concurrency in [1, 3] {
            // A tiny buffer limit: containers spill, the long strings are the records, the rest are values.
            let reader = CandidateReader(source: MemoryByteSource(text), selection: .strings { $0.count >= 10 }, bufferLimit: 8)
            let sink = MemoryByteSink()
            let seen = SeenPointers()
            let step = ClosureTransformer(concurrency: concurrency) { r in
                seen.add(r.pointer)
                return [r]
            }
            try Pipeline().run(reader: reader, first: step, writer: DumpWriter(writer: JSONWriter(sink: sink)))
            XCTAssertEqual(sink.string, text + "\n")
            XCTAssertEqual(seen.sorted, ["/a/x/s", "/b/0/s"])
        }
    }

    func testValuesFromMemoryAndMovedRecordsKeepTheirPlace() throws {
        // The same pass-through content given as compact JSON or transferred from a reader: same
        // output, also in an object records move into, which stays where it stands.
        func write(fromMemory: Bool) throws -> String {
            let sink = MemoryByteSink()
            let writer = try DumpWriter(writer: JSONWriter(sink: sink), moveTargets: [try PathPattern("/v2/t/{id}")])
            let values: [JSONValue] = [.object(["x": .number("1")]), .string("s"), .array([.null])]
            try writer.beginContainer(isObject: true)
            for (container, key) in ["v2", "keep"].enumerated().map({ ($0.element, $0.offset) }) {
                try writer.name(container)
                try writer.beginContainer(isObject: true)
                for (i, v) in values.enumerated() {
                    try writer.name("m\(key)\(i)")
                    let json = MemoryByteSink()
                    let w = JSONWriter(sink: json)
                    try w.value(v)
                    try w.flush()
                    if fromMemory {
                        try json.bytes.withUnsafeBytes { try writer.value(compactJSON: $0) }
                    } else {
                        try writer.transferValue(from: JSONReader(bytes: json.bytes))
                    }
                }
                try writer.endContainer()
            }
            try writer.write(Record(path: ["v2", "t", "-K1"], value: .bool(true)), from: ["old", "-K1"])
            try writer.endContainer()
            try writer.finish()
            return sink.string
        }
        let expected =
            #"{"v2":{"m00":{"x":1},"m01":"s","m02":[null],"t":{"-K1":true}},"keep":{"m10":{"x":1},"m11":"s","m12":[null]}}"# + "\n"
        XCTAssertEqual(try write(fromMemory: false), expected)
        XCTAssertEqual(try write(fromMemory: true), expected)
    }

    func testFirstErrorStopsTheWindow() {
        var members: [String] = []
        for i in 0..<200 { members.append("\"k\(i)\":\(i)") }
        let text = "{\"a\":{" + members.joined(separator: ",") + "}}"
        XCTAssertThrowsError(
            try rewrite(
                text, ["/a/{k}"],
                transform: { r in
                    if r.captures["k"] == "k50" || r.captures["k"] == "k120" { throw UsageError("bad \(r.captures["k"]!)") }
                    return [r]
                }, concurrency: 3)
        ) { e in
            XCTAssertTrue("\(e)".contains("bad k50"), "\(e)")
            XCTAssertTrue("\(e)".contains("/a/k50"), "\(e)")
        }
    }

    func testWindowedBatchesHoldConsecutiveRecordsWithinTheLimits() throws {
        // 100 small records, then 6 of 600 KB: small ones go 32 to a batch, big ones at most two
        // (the batch stops once 1 MiB of input is in it).
        var members: [String] = (0..<100).map { "\"k\($0)\":{\"v\":\($0)}" }
        let big = String(repeating: "x", count: 600_000)
        members += (100..<106).map { "\"k\($0)\":{\"v\":\"\(big)\"}" }
        let text = "{\"a\":{" + members.joined(separator: ",") + "},\"z\":1}"
        let batches = BatchLog()
        let sink = MemoryByteSink()
        let reader = DumpReader(source: MemoryByteSource(text), patterns: [try PathPattern("/a/{k}")])
        // Each record becomes two, except k7 which is dropped; the second step sees them flattened.
        let split = BatchTransformer(concurrency: 2, log: nil) { r in
            r.captures["k"] == "k7" ? [] : [r, Record(path: ["b", r.captures["k"]!], value: .bool(true))]
        }
        let mark = BatchTransformer(concurrency: 2, log: batches) { r in
            guard case .object(var v) = r.value ?? .null else { return [r] }
            v["seen"] = .bool(true)
            return [Record(path: r.path, value: .object(v))]
        }
        try Pipeline(transformers: [split, mark]).run(
            reader: reader, writer: DumpWriter(writer: JSONWriter(sink: sink), moveTargets: [try PathPattern("/b/{k}")]))
        let sizes = batches.sizes
        XCTAssertEqual(sizes.reduce(0, +), 2 * 105)  // 105 records kept, each twice
        XCTAssertTrue(sizes.allSatisfy { $0 <= 2 * Pipeline.batchRecords }, "\(sizes)")
        XCTAssertTrue(sizes.contains(2 * Pipeline.batchRecords), "\(sizes)")
        // The six big records: at most two to a batch.
        XCTAssertEqual(batches.bigCounts.reduce(0, +), 6)
        XCTAssertLessThanOrEqual(batches.bigCounts.max() ?? 0, 2, "\(batches.bigCounts)")
        let out = sink.string
        let kept = (0..<106).filter { $0 != 7 }
        let expectedA = kept.map { i in "\"k\(i)\":{\"v\":" + (i < 100 ? "\(i)" : "\"\(big)\"") + ",\"seen\":true}" }.joined(separator: ",")
        // A new object's members in the database's key order (by bytes here: "k10" before "k2").
        let expectedB = kept.map { "k\($0)" }.sorted().map { "\"\($0)\":true" }.joined(separator: ",")
        XCTAssertEqual(out, "{\"a\":{" + expectedA + "},\"z\":1,\"b\":{" + expectedB + "}}\n")
    }

    func testAFailureInsideABatchNamesItsRecord() {
        let text = "{\"a\":{" + (0..<100).map { "\"k\($0)\":\($0)" }.joined(separator: ",") + "}}"
        let failing = BatchTransformer(concurrency: 2, log: nil) { r in
            if r.captures["k"] == "k40" { throw UsageError("bad k40") }
            return [r]
        }
        let reader = DumpReader(source: MemoryByteSource(text), patterns: [try! PathPattern("/a/{k}")])
        XCTAssertThrowsError(
            try Pipeline(transformers: [failing]).run(reader: reader, writer: DumpWriter(writer: JSONWriter(sink: MemoryByteSink())))
        ) { e in
            XCTAssertEqual("\(e)", "test-batch at /a/k40: bad k40")
        }
    }

    func testNDJSONRoundTrip() throws {
        let reader = DumpReader(source: MemoryByteSource(dump), patterns: [try PathPattern("/v1/todolist/{id}")])
        let nd = MemoryByteSink()
        try Pipeline().run(reader: reader, writer: NDJSONWriter(writer: JSONWriter(sink: nd)))
        XCTAssertEqual(nd.string.split(separator: "\n").first, #"{"path":"/meta","value":{"version":1}}"#)
        XCTAssertEqual(nd.string.split(separator: "\n").count, 6)
        let back = MemoryByteSink()
        try Pipeline().run(reader: NDJSONReader(source: MemoryByteSource(nd.bytes)), writer: DumpWriter(writer: JSONWriter(sink: back)))
        XCTAssertEqual(back.string, dump + "\n")
    }

    func testNDJSONOutOfOrderIsAnError() {
        let nd = "{\"path\":\"/a/x\",\"value\":1}\n{\"path\":\"/b/y\",\"value\":2}\n{\"path\":\"/a/z\",\"value\":3}\n"
        XCTAssertThrowsError(
            try Pipeline().run(
                reader: NDJSONReader(source: MemoryByteSource(nd)), writer: DumpWriter(writer: JSONWriter(sink: MemoryByteSink())))
        ) { e in
            XCTAssertTrue("\(e)".contains("/a/z"), "\(e)")
        }
    }

    func testNDJSONRecordsAtOnePathAreRefusedWithBothLines() throws {
        func read(_ lines: [String]) throws -> String {
            let sink = MemoryByteSink()
            try Pipeline().run(
                reader: NDJSONReader(source: MemoryByteSource(lines.joined(separator: "\n")), sourceName: "in.ndjson"),
                writer: DumpWriter(writer: JSONWriter(sink: sink)))
            return sink.string
        }
        let cases: [([String], String)] = [
            (
                [#"{"path":"/a","value":1}"#, #"{"path":"/a","value":2}"#],
                "in.ndjson:2: record /a is at or inside the path of the record on line 1; a path can hold one value"
            ),
            (
                [#"{"path":"/a/x","value":1}"#, #"{"path":"/a/y","value":2}"#, #"{"path":"/a/x","value":3}"#],
                "in.ndjson:3: record /a/x is at or inside the path of the record on line 1; a path can hold one value"
            ),
            (
                [#"{"path":"/a/x","value":1}"#, #"{"path":"/a/x/z","value":2}"#],
                "in.ndjson:2: record /a/x/z is at or inside the path of the record on line 1; a path can hold one value"
            ),
            (
                [#"{"path":"/a/x/w","value":1}"#, #"{"path":"/a/x","value":2}"#],
                "in.ndjson:2: record /a/x is at or inside the path of the record on line 1; a path can hold one value"
            ),
        ]
        for (lines, message) in cases {
            XCTAssertThrowsError(try read(lines), "\(lines)") { XCTAssertEqual("\($0)", message) }
        }
        // Siblings, deeper paths below objects, and keys reused in other objects are fine.
        XCTAssertEqual(
            try read([
                #"{"path":"/a/x/w","value":1}"#, #"{"path":"/a/x/v","value":2}"#, #"{"path":"/a/y","value":3}"#,
                #"{"path":"/b/x","value":4}"#,
            ]),
            #"{"a":{"x":{"w":1,"v":2},"y":3},"b":{"x":4}}"# + "\n")
    }

    func testBadNDJSONLinesSayWhichLine() {
        for (text, expect) in [
            ("{\"path\":\"x\",\"value\":1}", "JSON Pointer"), ("{\"value\":1}", "missing \"path\""), ("[1]", "record 1"),
            ("{\"path\":\"/a\",\"value\":1}\n{\"path\":\"/b\",\"value\":", "2:"),
        ] {
            XCTAssertThrowsError(
                try Pipeline().run(
                    reader: NDJSONReader(source: MemoryByteSource(text)), writer: NDJSONWriter(writer: JSONWriter(sink: MemoryByteSink())))
            ) { e in
                XCTAssertTrue("\(e)".contains(expect), "\(text): \(e)")
            }
        }
    }
}

/// The records a transformer saw, from any thread.
private final class SeenPointers: @unchecked Sendable {
    private let lock = NSLock()
    private var pointers: [String] = []
    func add(_ pointer: String) { lock.withLock { pointers.append(pointer) } }
    var sorted: [String] { lock.withLock { pointers.sorted() } }
}

/// A transformer made of a closure, for tests.
struct ClosureTransformer: RecordTransformer {
    let concurrency: Int
    let body: @Sendable (Record) throws -> [Record]
    var name: String { "test-step" }
    var maxConcurrency: Int { concurrency }
    func transform(_ record: Record) throws -> [Record] { try body(record) }
}

extension ClosureTransformer: UnitTransformer {
    /// Candidates without decoded files, as their records.
    func transform(units: [BlobCandidate]) throws -> [[Record]] { try transform(batch: units.map(\.record)) }
}

/// A step that logs what each batch held and transforms it record by record.
struct BatchTransformer: RecordTransformer {
    let concurrency: Int
    let log: BatchLog?
    let body: @Sendable (Record) throws -> [Record]
    var name: String { "test-batch" }
    var maxConcurrency: Int { concurrency }
    func transform(_ record: Record) throws -> [Record] { try body(record) }
    func transform(batch records: [Record]) throws -> [[Record]] {
        log?.add(records)
        // The protocol's own batch loop, which names the failing record's place.
        return try ClosureTransformer(concurrency: concurrency, body: body).transform(batch: records)
    }
}

/// The batches a `BatchTransformer` saw: their sizes, and how many large records each held.
final class BatchLog: @unchecked Sendable {
    private let lock = NSLock()
    private var log: [(size: Int, big: Int)] = []

    func add(_ records: [Record]) {
        let big = records.filter { r in
            if case .object(let o) = r.value ?? .null, case .string(let s)? = o["v"] { return s.utf8.count > 100_000 }
            return false
        }.count
        lock.withLock { log.append((records.count, big)) }
    }

    var sizes: [Int] { lock.withLock { log.map(\.size) } }
    /// How many large records each batch held.
    var bigCounts: [Int] { lock.withLock { log.map(\.big) } }
}
