import DumpKit
import Foundation
import JSONStream
import TestSupport
import XCTest

/// A store that fails like a full disk on its Nth write (the only way to test that case portably).
private final class FailingStore: BlobStore, @unchecked Sendable {
    let base: BlobStore
    let failAt: Int
    private let lock = NSLock()
    private var puts = 0

    init(_ base: BlobStore, failAt: Int) {
        self.base = base
        self.failAt = failAt
    }

    var description: String { "failing " + base.description }

    func put(_ content: UnsafeRawBufferPointer, metadata: BlobMetadata, replacing: Bool) throws -> BlobPutOutcome {
        let n = lock.withLock {
            puts += 1; return puts
        }
        if n == failAt { throw BlobStoreError(store: description, name: metadata.name, message: "cannot write: No space left on device") }
        return try base.put(content, metadata: metadata, replacing: replacing)
    }

    func put(
        streaming metadata: BlobMetadata, replacing: Bool, fill: (_ write: (UnsafeRawBufferPointer) throws -> Void) throws -> Void
    ) throws -> BlobPutOutcome {
        try base.put(streaming: metadata, replacing: replacing, fill: fill)
    }

    func sync() throws { try base.sync() }

    func get(_ name: String) throws -> [UInt8] { try base.get(name) }
    func metadata(_ name: String) throws -> BlobMetadata? { try base.metadata(name) }
    func exists(_ name: String) throws -> Bool { try base.exists(name) }
    func list(_ body: (String) throws -> Void) throws { try base.list(body) }
}

final class BlobExtractionTests: XCTestCase {
    private let png = BlobFixtures.png()
    private let jpeg = BlobFixtures.jpeg()
    private let pdf = BlobFixtures.pdf()

    private func record() -> Record {
        Record(
            path: ["v1", "todolist", "-Ka"], captures: ["id": "-Ka"],
            value: .object([
                "title": .string("買い物"),
                "image1": .string(BlobFixtures.dataURI("image/png", png)),
                "scan": .string(BlobFixtures.base64(jpeg)),
                "files": .array([.string(BlobFixtures.dataURI("application/pdf", pdf)), .number("1")]),
                "small": .string(BlobFixtures.dataURI("image/png", BlobFixtures.png(100))),
                "wrong": .string(BlobFixtures.dataURI("image/gif", jpeg)),
                "broken": .string(String(BlobFixtures.base64(jpeg).dropLast(3))),
            ]))
    }

    func testFilesAnywhereInARecordBecomeReferencesAndComeBack() throws {
        let dir = try TemporaryDirectory()
        let store = try DirectoryBlobStore(directory: dir.path("s"), writable: true)
        let extract = try ExtractBlobs(store: store)
        let original = record()
        let out = try XCTUnwrap(try extract.transform(original).first?.value?.objectValue)
        XCTAssertEqual(out["title"], .string("買い物"))
        XCTAssertEqual(out["image1"]?.objectValue?["path"], .string("v1/todolist/-Ka/image1.png"))
        XCTAssertEqual(out["scan"]?.objectValue?["path"], .string("v1/todolist/-Ka/scan.jpg"))
        XCTAssertEqual(out["scan"]?.objectValue?["encoding"], .string("base64"))
        XCTAssertEqual(out["files"]?.arrayValue?[0].objectValue?["path"], .string("v1/todolist/-Ka/files/0.pdf"))
        XCTAssertEqual(out["wrong"]?.objectValue?["path"], .string("v1/todolist/-Ka/wrong.jpg"))
        XCTAssertEqual(out["wrong"]?.objectValue?["contentType"], .string("image/jpeg"))
        XCTAssertEqual(out["wrong"]?.objectValue?["header"], .string("data:image/gif;base64,"))
        XCTAssertEqual(out["small"], original.value?.objectValue?["small"])
        XCTAssertEqual(out["broken"], original.value?.objectValue?["broken"])
        XCTAssertEqual(try store.get("v1/todolist/-Ka/image1.png"), png)
        XCTAssertEqual(try store.get("v1/todolist/-Ka/scan.jpg"), jpeg)
        let token = try XCTUnwrap(try store.metadata("v1/todolist/-Ka/scan.jpg")?.customMetadata["firebaseStorageDownloadTokens"])
        XCTAssertEqual(
            token,
            DownloadToken.derive(sha256: try XCTUnwrap(out["scan"]?.objectValue?["sha256"]?.stringValue), name: "v1/todolist/-Ka/scan.jpg"))

        let t = extract.report.snapshot
        XCTAssertEqual(t.extracted.count, 4)
        XCTAssertEqual(t.types["image/jpeg"]?.count, 2)
        XCTAssertEqual(t.duplicates.count, 1)  // "wrong" holds the same bytes as "scan"
        XCTAssertEqual(t.objects.count, 4)
        XCTAssertEqual(t.stored.count, 4)
        XCTAssertEqual(t.skipped[.invalidBase64], 1)
        XCTAssertEqual(t.skippedSamples[.invalidBase64], ["/v1/todolist/-Ka/broken"])
        XCTAssertEqual(t.mismatchSamples.first?.pointer, "/v1/todolist/-Ka/wrong")

        let inline = InlineBlobs(store: store)
        let back = try inline.transform(Record(path: original.path, value: .object(out)))
        XCTAssertEqual(back.first?.value, original.value)
        XCTAssertEqual(inline.tally.inlined, 4)
        // Again: the same references, nothing written.
        let again = try ExtractBlobs(store: store)
        XCTAssertEqual(try again.transform(original).first?.value, .object(out))
        XCTAssertEqual(again.report.snapshot.unchanged.count, 4)
        XCTAssertEqual(again.report.snapshot.stored.count, 0)
    }

    func testMatchPatternsLimitExtractionAndNameObjects() throws {
        let dir = try TemporaryDirectory()
        let store = try DirectoryBlobStore(directory: dir.path("s"), writable: true)
        var o = ExtractBlobs.Options()
        o.match = [try PathPattern("/v1/{model}/{id}/image1")]
        o.naming = try BlobNameTemplate("{model}/{id}/{field}.{ext}")
        o.referenceStyle = .salada
        o.bucket = "app.appspot.com"
        let extract = try ExtractBlobs(store: store, options: o)
        // The plan's record is the todo; only image1 is extracted.
        let out = try XCTUnwrap(
            try extract.transform(Record(path: ["v1", "todolist", "-Ka"], value: record().value)).first?.value?.objectValue)
        let image1 = try XCTUnwrap(out["image1"]?.objectValue)
        XCTAssertEqual(image1["name"], .string("image1.png"))
        XCTAssertEqual(image1["mimeType"], .string("image/png"))
        let token = DownloadToken.derive(sha256: try store.metadata("todolist/-Ka/image1.png")!.sha256, name: "todolist/-Ka/image1.png")
        XCTAssertEqual(
            image1["url"],
            .string("https://firebasestorage.googleapis.com/v0/b/app.appspot.com/o/todolist%2F-Ka%2Fimage1.png?alt=media&token=\(token)"))
        XCTAssertEqual(out["scan"], record().value?.objectValue?["scan"])
        XCTAssertEqual(extract.report.snapshot.extracted.count, 1)

        var io = InlineBlobs.Options()
        io.referenceStyle = .salada
        let inline = InlineBlobs(store: store, options: io)
        // A Salada file that was in the bucket before, with its own token, stays.
        var withForeign = out
        withForeign["image2"] = .object([
            "name": .string("x.jpg"),
            "url": .string(BlobReference.downloadURL(bucket: "b", name: "todolist/-Ka/image1.png", token: "other")),
            "mimeType": .string("image/jpeg"),
        ])
        let back = try XCTUnwrap(
            try inline.transform(Record(path: ["v1", "todolist", "-Ka"], value: .object(withForeign))).first?.value?.objectValue)
        XCTAssertEqual(back["image1"], record().value?.objectValue?["image1"])
        XCTAssertEqual(back["image2"], withForeign["image2"])
        XCTAssertEqual(inline.tally.foreign, 1)
    }

    func testPlanRecordCapturesNameObjects() throws {
        var o = ExtractBlobs.Options()
        o.naming = try BlobNameTemplate("todos/{id}/{field}.{ext}")
        let extract = try ExtractBlobs(store: nil, options: o)
        let out = try XCTUnwrap(try extract.transform(record()).first?.value?.objectValue)
        XCTAssertEqual(out["image1"]?.objectValue?["path"], .string("todos/-Ka/image1.png"))
        XCTAssertThrowsError(try extract.transform(Record(path: ["x"], value: .string(BlobFixtures.base64(jpeg))))) {
            XCTAssertTrue("\($0)".contains("uses {id}, which no path pattern captured at /x"), "\($0)")
        }
    }

    func testDryRunCountsAndWritesNothing() throws {
        let extract = try ExtractBlobs(store: nil)
        let out = try extract.transform(record())
        XCTAssertNotEqual(out.first?.value, record().value)
        let t = extract.report.snapshot
        XCTAssertEqual(t.extracted.count, 4)
        XCTAssertEqual(t.objects.count, 4)
        XCTAssertEqual(t.stored.count + t.unchanged.count, 0)
        XCTAssertEqual(extract.report.jsonValue.objectValue?["duplicates"]?.objectValue?["count"], .number("1"))
    }

    func testOneNameForTwoContentsIsAnError() throws {
        var o = ExtractBlobs.Options()
        o.naming = try BlobNameTemplate("{record}.{ext}")
        let extract = try ExtractBlobs(store: nil, options: o)
        XCTAssertThrowsError(
            try extract.transform(
                Record(
                    path: ["a"],
                    value: .object(["x": .string(BlobFixtures.base64(jpeg)), "y": .string(BlobFixtures.base64(BlobFixtures.jpeg(seed: 9)))])
                ))
        ) {
            XCTAssertTrue($0 is BlobNameConflict, "\($0)")
            XCTAssertTrue("\($0)".contains("/a/x and /a/y"), "\($0)")
        }
        // The same content twice under one name is fine.
        XCTAssertNoThrow(
            try extract.transform(
                Record(path: ["b"], value: .object(["x": .string(BlobFixtures.base64(jpeg)), "y": .string(BlobFixtures.base64(jpeg))]))))
    }

    // MARK: - Jobs

    private func write(_ text: String, _ path: String) throws { try Data(text.utf8).write(to: URL(fileURLWithPath: path)) }
    private func read(_ path: String) throws -> String { String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self) }

    /// A dump with files at several depths, in arrays, at the root level, among tricky JSON.
    private func dump() -> String {
        """
        {"a\\"b":"é\\u0000\\n","n":[1.50,-0,1e400,true,false,null,{},[]],"photo":"\(BlobFixtures.dataURI("image/png", png))",\
        "v1":{"todolist":{"-Ka":{"image1":"\(BlobFixtures.base64(jpeg))","t":"x"},"-Kb":{"files":["\(BlobFixtures.dataURI("application/pdf", pdf))",\
        "\(String(repeating: "z", count: 2000))"],"e":{}}}}}
        """
    }

    func testJobKeepsEverythingElseByteForByteAndRoundTrips() throws {
        let dir = try TemporaryDirectory()
        let input = dir.path("in.json")
        try write(dump(), input)
        var job = ExtractBlobsJob(input: input, output: dir.path("out.json"), store: dir.path("s"))
        job.options.concurrency = 3
        let summary = try job.run()
        XCTAssertEqual(summary.report.snapshot.extracted.count, 3)
        let out = try read(dir.path("out.json"))
        XCTAssertTrue(
            out.hasPrefix(
                #"{"a\"b":"é\u0000\n","n":[1.50,-0,1e400,true,false,null,{},[]],"photo":{"path":"photo.png","contentType":"image/png","size":2000,"#
            ), out)
        XCTAssertTrue(out.contains(#""image1":{"path":"v1/todolist/-Ka/image1.jpg""#), out)
        XCTAssertTrue(out.contains(#""e":{}}}}}"#), out)
        // Read one byte at a time (strings cross every refill of the reader's buffer), the same
        // output, with the strings as text or decoded by the reader.
        for decoding in [false, true] {
            let extract = try ExtractBlobs(store: nil)
            let reader = CandidateReader(
                source: MemoryByteSource(Array(dump().utf8), chunkSize: 1),
                selection: decoding ? extract.candidates : .strings { $0.count >= 1368 }, options: .init(bufferSize: 64))
            let sink = MemoryByteSink()
            try Pipeline().run(reader: reader, first: extract, writer: DumpWriter(writer: JSONWriter(sink: sink)))
            XCTAssertEqual(sink.string, out)
        }

        let back = InlineBlobsJob(input: dir.path("out.json"), output: dir.path("back.json"), store: dir.path("s"))
        XCTAssertEqual(try back.run().tally.inlined, 3)
        XCTAssertEqual(try read(dir.path("back.json")), dump() + "\n")
        XCTAssertEqual(try CheckBlobsJob(input: dir.path("out.json"), store: dir.path("s")).run().findings, [])
    }

    func testJobMatchPatternsPickWhatToExtract() throws {
        let dir = try TemporaryDirectory()
        let input = dir.path("in.json")
        try write(dump(), input)
        var job = ExtractBlobsJob(input: input, output: dir.path("out.json"), store: dir.path("s"))
        job.options.match = [try PathPattern("/v1/todolist/{id}/image1"), try PathPattern("/v1/todolist/{id}/files")]
        job.options.naming = try BlobNameTemplate("todos/{id}/{field}.{ext}")
        XCTAssertEqual(try job.run().report.snapshot.extracted.count, 2)
        let out = try read(dir.path("out.json"))
        XCTAssertTrue(out.contains(#""photo":"data:image/png;base64,"#), "outside the patterns: left")
        XCTAssertTrue(out.contains(#""image1":{"path":"todos/-Ka/image1.jpg""#), out)
        XCTAssertTrue(out.contains(#""files":[{"path":"todos/-Kb/0.pdf""#), out)
        var back = InlineBlobsJob(input: dir.path("out.json"), output: dir.path("back.json"), store: dir.path("s"))
        back.options.match = [try PathPattern("/v1/*/*")]
        XCTAssertEqual(try back.run().tally.inlined, 2)
        XCTAssertEqual(try read(dir.path("back.json")), dump() + "\n")
    }

    func testReaderDecodesFilesAndKeepsOtherStrings() throws {
        let uri = BlobFixtures.dataURI("image/png", png)
        let text = String(repeating: "z", count: 2000)
        let broken = String(BlobFixtures.base64(jpeg).dropLast(3))
        let json = #"{"a":{"img":"\#(uri)","t":"\#(text)","bad":"\#(broken)","n":1}}"#
        let reader = CandidateReader(source: MemoryByteSource(json), selection: try ExtractBlobs(store: nil).candidates)
        // The whole document fits the buffer limit: one candidate, the root.
        let candidate = try XCTUnwrap(try reader.next(passThrough: nil))
        XCTAssertEqual(candidate.path, [])
        XCTAssertEqual(Array(candidate.files.keys), [["a", "img"]])
        let file = try XCTUnwrap(candidate.files[["a", "img"]])
        XCTAssertEqual(file.bytes, png)
        XCTAssertEqual(file.encodedBytes, uri.utf8.count)
        XCTAssertEqual(file.form, .dataURI(header: "data:image/png;base64,"))
        // The decoded string is `null` in the record, its file beside it; text and broken base64
        // stay as they were.
        XCTAssertEqual(
            candidate.record.value, .object(["a": .object(["img": .null, "t": .string(text), "bad": .string(broken), "n": .number("1")])]))
        XCTAssertNil(try reader.next(passThrough: nil))
    }

    func testRepeatedMemberNamesGiveTheSameOutputWithOrWithoutTheReaderDecoding() throws {
        // Member names repeated in an object (invalid for the database, possible in JSON): each file
        // and each other string stays in its own place, as when the worker decodes every string.
        let png = BlobFixtures.dataURI("image/png", png), jpeg = BlobFixtures.dataURI("image/jpeg", jpeg)
        func run(_ text: String, decoding: Bool, limit: Int) throws -> String {
            let extract = try ExtractBlobs(store: nil)
            let reader = CandidateReader(
                source: MemoryByteSource(text), selection: decoding ? extract.candidates : .strings { $0.count >= 1368 },
                bufferLimit: limit)
            let sink = MemoryByteSink()
            try Pipeline().run(reader: reader, first: extract, writer: DumpWriter(writer: JSONWriter(sink: sink)))
            return sink.string
        }
        let text = #"{"a":{"x":"\#(png)","x":"hello"},"b":{"o":{"x":""},"o":{"x":"\#(jpeg)"}},"d":[{"x":"\#(png)"},{"x":"\#(png)"}]}"#
        for limit in [1 << 20, 10] {
            let expected = try run(text, decoding: false, limit: limit)
            XCTAssertTrue(expected.contains(#""x":"hello""#) && expected.contains(#"{"o":{"x":""},"o":{"x":{"path":"b/o/x.jpg""#), expected)
            XCTAssertEqual(try run(text, decoding: true, limit: limit), expected, "limit \(limit)")
        }
        // Two files under one name: the same conflict either way.
        let twice = #"{"c":{"x":"\#(png)","x":"\#(BlobFixtures.dataURI("image/png", BlobFixtures.png(seed: 5)))"}}"#
        for decoding in [false, true] {
            XCTAssertThrowsError(try run(twice, decoding: decoding, limit: 1 << 20)) { e in
                XCTAssertTrue("\(e)".contains("would hold different contents"), "\(e)")
            }
        }
    }

    func testFilesLongerThanTheReadersBufferAreDecodedInPieces() throws {
        // A 6 MB image is longer than the job's 4 MiB read buffer: it reaches the decoder in pieces,
        // never as one text, and comes out the same as a small one.
        let big = BlobFixtures.png(6_000_000, seed: 9)
        let dir = try TemporaryDirectory()
        let input = dir.path("in.json")
        try write(#"{"a":{"big":"\#(BlobFixtures.dataURI("image/png", big))","t":"x"},"b":{"bare":"\#(BlobFixtures.base64(big))"}}"#, input)
        let summary = try ExtractBlobsJob(input: input, output: dir.path("out.json"), store: dir.path("s")).run()
        XCTAssertEqual(summary.report.snapshot.extracted.count, 2)
        XCTAssertEqual(try DirectoryBlobStore(directory: dir.path("s"), writable: false).get("a/big.png"), big)
        XCTAssertEqual(try DirectoryBlobStore(directory: dir.path("s"), writable: false).get("b/bare.png"), big)
        let back = InlineBlobsJob(input: dir.path("out.json"), output: dir.path("back.json"), store: dir.path("s"))
        XCTAssertEqual(try back.run().tally.inlined, 2)
        XCTAssertEqual(try read(dir.path("back.json")), try read(input) + "\n")
        // Read in pieces, a string still has the reader's size limit.
        let text = #"{"a":{"big":"\#(BlobFixtures.dataURI("image/png", BlobFixtures.png(3000)))"}}"#
        let reader = CandidateReader(
            source: MemoryByteSource(text), selection: try ExtractBlobs(store: nil).candidates,
            options: .init(maxValueBytes: 2000, bufferSize: 64))
        XCTAssertThrowsError(try reader.next(passThrough: nil)) { e in XCTAssertEqual((e as? JSONError)?.kind, .sizeLimit, "\(e)") }
    }

    func testEveryBufferLimitGivesTheSameOutput() throws {
        let text =
            #"[{"k":[1,{"x":"\#(BlobFixtures.base64(jpeg))"},[],{}],"n":null},"s",{"deep":{"a":{"b":["\#(BlobFixtures.dataURI("image/png", png))",2]}}},[[3]]]"#
        func run(_ selection: CandidateReader.Selection, limit: Int, _ transformer: any UnitTransformer<BlobCandidate>, input: String)
            throws -> (
                String, Int
            )
        {
            let reader = CandidateReader(
                source: MemoryByteSource(Array(input.utf8), chunkSize: 7), selection: selection, bufferLimit: limit)
            let sink = MemoryByteSink()
            let pipeline = Pipeline()
            try pipeline.run(reader: reader, first: transformer, writer: DumpWriter(writer: JSONWriter(sink: sink)))
            return (sink.string, pipeline.recordsRead)
        }
        let dir = try TemporaryDirectory()
        let store = try DirectoryBlobStore(directory: dir.path("s"), writable: true)
        let strings = CandidateReader.Selection.strings { $0.count >= 1368 }
        let (expected, whole) = try run(strings, limit: 1 << 20, try ExtractBlobs(store: store), input: text)
        XCTAssertEqual(whole, 1)
        XCTAssertTrue(expected.contains(#"{"x":{"path":"0/k/1/x.jpg""#), expected)
        let (restored, _) = try run(BlobReference.candidates(style: .object), limit: 1 << 20, InlineBlobs(store: store), input: expected)
        XCTAssertEqual(restored, text + "\n")
        // Files decoded by the reader (the job's way) go to the records that hold them, also when
        // containers outgrow the limit and their children become records.
        let decoded = try ExtractBlobs(store: store).candidates
        for limit in [0, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 1000, 3000, 5000] {
            let (out, records) = try run(strings, limit: limit, try ExtractBlobs(store: store), input: text)
            XCTAssertEqual(out, expected, "limit \(limit)")
            XCTAssertGreaterThanOrEqual(records, 1)
            XCTAssertEqual(
                try run(decoded, limit: limit, try ExtractBlobs(store: store), input: text).0, expected,
                "limit \(limit), decoded by the reader")
            let (back, _) = try run(BlobReference.candidates(style: .object), limit: limit, InlineBlobs(store: store), input: expected)
            XCTAssertEqual(back, text + "\n", "limit \(limit)")
        }
    }

    func testPassedThroughContentComesOutAsWrittenAtEveryBufferLimitAndWindow() throws {
        // The reader keeps containers as compact JSON and parses only those with a file: escaped
        // names and strings, numbers, empty containers and arrays pass through exactly as a writer
        // writes them, files land at the paths their (escaped) names make, whatever the buffer limit
        // and whether records go through worker threads or not.
        let input =
            #"{"a\"b":{"c\\d":[1,2.5E+3,-0,{"x":"\u00e9\n\u2028\/"}],"img":"\#(BlobFixtures.dataURI("image/png", png))"},"#
            + #""plain":{"k":[{},[],"t\"q",[[null]]],"n":-0.0,"e":true,"f":false},"#
            + #""n\\":{"\u0001k":[1,"x"],"e\\":"y","img":"\#(BlobFixtures.dataURI("image/png", png))"},"#
            + #""arr":[[{"p":"\#(BlobFixtures.base64(jpeg))","q":1}],"z",{"00":{"1":[]}}],"s":"tail"}"#
        let rewritten = MemoryByteSink()
        let writer = JSONWriter(sink: rewritten)
        try JSONReader(bytes: Array(input.utf8)).transfer(to: writer)
        try writer.flush()
        let dir = try TemporaryDirectory()
        let store = try DirectoryBlobStore(directory: dir.path("s"), writable: true)
        defer { store.close() }
        func run(_ selection: CandidateReader.Selection, limit: Int, _ transformer: any UnitTransformer<BlobCandidate>, _ text: String)
            throws -> String
        {
            let reader = CandidateReader(source: MemoryByteSource(Array(text.utf8), chunkSize: 5), selection: selection, bufferLimit: limit)
            let sink = MemoryByteSink()
            try Pipeline().run(reader: reader, first: transformer, writer: DumpWriter(writer: JSONWriter(sink: sink)))
            return sink.string
        }
        var inline = ExtractBlobs.Options()
        inline.concurrency = 1
        var windowed = inline
        windowed.concurrency = 3
        let expected = try run(
            try ExtractBlobs(store: store, options: inline).candidates, limit: 1 << 20, try ExtractBlobs(store: store, options: inline),
            input)
        XCTAssertTrue(expected.contains(#"{"a\"b":{"c\\d":[1,2.5E+3,-0,{"x":"é\n\#u{2028}/"}],"img":{"path":"a\"b/img.png""#), expected)
        XCTAssertTrue(expected.contains(#""plain":{"k":[{},[],"t\"q",[[null]]],"n":-0.0,"e":true,"f":false},"n\\":{"#), expected)
        XCTAssertTrue(expected.contains(#"}},"arr":[[{"p":{"path":"arr/0/0/p.jpg""#), expected)
        XCTAssertTrue(expected.hasSuffix(#","q":1}],"z",{"00":{"1":[]}}],"s":"tail"}"# + "\n"), expected)
        XCTAssertTrue(expected.contains(#""n\\":{"\u0001k":[1,"x"],"e\\":"y","img":{"path":"n\\/img.png""#), expected)
        XCTAssertEqual(try store.get(#"a"b/img.png"#), png)
        XCTAssertEqual(try store.get(#"n\/img.png"#), png)
        XCTAssertEqual(try store.get("arr/0/0/p.jpg"), jpeg)
        // A limit at every token (structure and the bytes around it), so that containers spill
        // everywhere (also right after an escaped name, before its value).
        let structural = Set(#"{}[],:""#.utf8)
        let tokens = input.utf8.enumerated().filter { structural.contains($0.element) }.map(\.offset)
        for limit in Set(tokens.flatMap { [$0 - 1, $0, $0 + 1] }).filter({ $0 >= 0 }).sorted() + [1 << 20] {
            for options in [inline, windowed] {
                let extract = try ExtractBlobs(store: store, options: options)
                XCTAssertEqual(
                    try run(extract.candidates, limit: limit, extract, input), expected, "limit \(limit), jobs \(options.concurrency)")
                var back = InlineBlobs.Options()
                back.concurrency = options.concurrency
                let restored = try run(
                    BlobReference.candidates(style: .object), limit: limit, InlineBlobs(store: store, options: back), expected)
                XCTAssertEqual(restored, rewritten.string + "\n", "limit \(limit), jobs \(options.concurrency)")
            }
        }
    }

    func testFullStoreFailsTheRunWithoutPartialObjectsOrOutput() throws {
        let dir = try TemporaryDirectory()
        let input = dir.path("in.json")
        try write(dump(), input)
        try write("old output", dir.path("out.json"))
        let directory = try DirectoryBlobStore(directory: dir.path("s"), writable: true)
        var job = ExtractBlobsJob(input: input, output: dir.path("out.json"), store: dir.path("s"))
        job.options.concurrency = 2
        XCTAssertThrowsError(try job.run(store: FailingStore(directory, failAt: 2))) {
            XCTAssertTrue("\($0)".contains("No space left on device"), "\($0)")
        }
        directory.close()
        XCTAssertEqual(try read(dir.path("out.json")), "old output")
        XCTAssertEqual(try read(input), dump())
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path(".")).sorted(), ["in.json", "out.json", "s"])
        // What is in the store is whole: every object has its metadata and its hash.
        let files = filesBelow(dir.path("s"))
        XCTAssertTrue(files.allSatisfy { !$0.hasPrefix(".dumpkit/tmp") }, "\(files)")
        let store = try DirectoryBlobStore(directory: dir.path("s"), writable: false)
        var names: [String] = []
        try store.list { names.append($0) }
        XCTAssertLessThanOrEqual(names.count, 2)
        for name in names {
            let bytes = try store.get(name)
            XCTAssertEqual(bytes.withUnsafeBytes { ContentDigest($0).sha256 }, try store.metadata(name)?.sha256)
        }
    }

    func testCheckFindsMissingChangedAndOrphanedObjects() throws {
        let dir = try TemporaryDirectory()
        let input = dir.path("in.json")
        try write(dump(), input)
        var job = ExtractBlobsJob(input: input, output: dir.path("out.json"), store: dir.path("s"))
        job.options.referenceStyle = .url
        job.options.bucket = "b"
        _ = try job.run()
        try FileManager.default.removeItem(atPath: dir.path("s/photo.png"))
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: dir.path("s/v1/todolist/-Ka/image1.jpg")))
        try Data([4]).write(to: URL(fileURLWithPath: dir.path("s/v1/orphan.bin")))
        var check = CheckBlobsJob(input: dir.path("out.json"), store: dir.path("s"))
        check.referenceStyle = .url
        let (findings, references) = try check.run()
        XCTAssertEqual(references, 3)
        XCTAssertEqual(findings.map(\.rule), ["blobs:missing", "blobs:metadata", "blobs:orphan"])
        XCTAssertEqual(findings.map(\.pointer), ["/photo", "/v1/todolist/-Ka/image1", ""])
        XCTAssertEqual(findings.map(\.severity), [.error, .error, .warning])
        XCTAssertTrue(findings[2].message.contains("v1/orphan.bin"), findings[2].message)
        // With object references, size and hash are compared too.
        let job2 = ExtractBlobsJob(input: input, output: dir.path("out2.json"), store: dir.path("s2"))
        _ = try job2.run()
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: dir.path("s2/v1/todolist/-Ka/image1.jpg")))
        // One cause, one finding: the size names it, the hashes and the metadata are its detail.
        let changed = try CheckBlobsJob(input: dir.path("out2.json"), store: dir.path("s2")).run().findings
        XCTAssertEqual(changed.map(\.rule), ["blobs:size"])
        XCTAssertTrue(changed[0].message.contains("has 3 bytes, the reference records"), changed[0].message)
        XCTAssertTrue(changed[0].message.contains("(its SHA-256 and MD5 differ too)"), changed[0].message)
        XCTAssertTrue(
            changed[0].message.contains(
                "the store's metadata records the same as the reference: the object was changed after it was written"), changed[0].message)
    }

    func testCheckFindingsSayWhereEachReferenceStarts() throws {
        func ref(_ name: String) -> String { #"{"path": "\#(name)", "size": 3, "sha256": "00"}"# }
        let text = """
            {
              "a": {
                "x": \(ref("one.png")),
                "list": [
                  1, \(ref("two.png"))
                ],
                "deep": {"b": {"c": \(ref("three.png"))}}
              },
              "top": \(ref("four.png"))
            }
            """
        let dir = try TemporaryDirectory()
        let store = try DirectoryBlobStore(directory: dir.path("s"), writable: true)
        defer { store.close() }
        let expected = [["/a/x", "3:10"], ["/a/list/1", "5:10"], ["/a/deep/b/c", "7:25"], ["/top", "9:10"]]
        // Whole records, and records out of containers that outgrew the buffer limit.
        for limit in [4 << 20, 16, 1] {
            let reader = CandidateReader(
                source: MemoryByteSource(text), selection: BlobReference.candidates(style: .object), bufferLimit: limit)
            reader.locatesCandidates = true
            let checker = BlobReferenceChecker(store: store, style: .object)
            var found: [[String]] = []
            while let candidate = try reader.next(passThrough: nil) {
                try checker.check(candidate.record, locate: reader.takeLocation) { f in
                    found.append([f.pointer, "\(f.line ?? 0):\(f.column ?? 0)"])
                }
            }
            XCTAssertEqual(found, expected, "buffer limit \(limit)")
        }
        // The same through the whole-dump check that validate --blobs and check-blobs use.
        let all = try BlobReferenceChecker.findings(in: MemoryByteSource(text), store: store, style: .object).findings
        XCTAssertEqual(all.map { [$0.pointer, "\($0.line ?? 0):\($0.column ?? 0)"] }, expected)
        XCTAssertEqual(Set(all.map(\.rule)), ["blobs:missing"])
    }
}
