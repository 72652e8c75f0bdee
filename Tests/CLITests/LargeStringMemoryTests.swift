import Foundation
import TestSupport
import XCTest

/// A huge string (the database allows 10 MiB; dumps may hold more) is held once, not copied whole
/// again by the reader, the value built, the writer or base64 encoding: the peak resident memory of
/// `dumpkit`, read from `/usr/bin/time`.
final class LargeStringMemoryTests: XCTestCase {
    private let stringBytes = 200 << 20

    /// Under 1.5 times a 200 MiB string; before, convert took 2.1 times and migrate 3.1 times.
    func testA200MiBStringIsHeldOnce() throws {
        let dir = try TemporaryDirectory()
        let input = dir.path("big.json")
        try writeDump(to: input)
        let plan = dir.path("plan.yaml")
        try Data("name: big\nfrom: v1\nto: v2\nsteps:\n  - match: /v1/{id}\n    ops:\n      - rename: { text: body }\n".utf8)
            .write(to: URL(fileURLWithPath: plan))
        let output = dir.path("out")
        let runs: [(String, [String])] = [
            ("convert", ["convert", input, "-o", output]),
            ("convert to NDJSON records", ["convert", input, "-o", output + ".ndjson", "--records", "/v1/{id}"]),
            ("migrate", ["migrate", input, "-o", output, "--plan", plan]),
        ]
        for (name, arguments) in runs {
            let (r, peak) = try CLI.runMeasuringMemory(arguments)
            XCTAssertEqual(r.status, 0, "\(name): \(r.stderr)")
            XCTAssertLessThan(peak, stringBytes * 3 / 2, "\(name): \(peak >> 20) MiB for a string of \(stringBytes >> 20) MiB")
            let written = arguments.contains(output) ? output : output + ".ndjson"
            let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: written)[.size] as? Int)
            XCTAssertGreaterThan(size, stringBytes, name)
            try FileManager.default.removeItem(atPath: written)
        }
    }

    /// `extract-blobs` holds a long string that is no file in its container's compact JSON and in the
    /// value read back from it, without the two copies it made in between (and it no longer decodes a
    /// string of base64 letters of no known type whole): under 3 times the string (it took 4.2).
    func testExtractingAroundA200MiBTextStringHoldsItTwice() throws {
        let dir = try TemporaryDirectory()
        let input = dir.path("big.json")
        try writeDump(to: input)
        let (r, peak) = try CLI.runMeasuringMemory(["extract-blobs", input, "-o", dir.path("out.json"), "--blobs", dir.path("store")])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("left alone (unknownType): 1"), r.stderr)
        XCTAssertLessThan(peak, stringBytes * 3, "\(peak >> 20) MiB for a string of \(stringBytes >> 20) MiB")
        let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: dir.path("out.json"))[.size] as? Int)
        XCTAssertGreaterThan(size, stringBytes)
    }

    /// `inline-blobs` holds a large file as its bytes and its base64 text, and nothing more: the text
    /// is encoded straight into the string, and the record goes to the writing thread as it is
    /// rather than copied as compact JSON. It held the text three times before.
    func testInliningALargeFileHoldsItsBytesAndTextOnce() throws {
        let dir = try TemporaryDirectory()
        let fileBytes = 32 << 20
        var image = Data([0xFF, 0xD8, 0xFF, 0xE0])
        image.append(Data((0..<(fileBytes - 4)).lazy.map { UInt8(truncatingIfNeeded: $0 &* 7) }))
        let text = "data:image/jpeg;base64," + image.base64EncodedString()
        try Data("{\"v1\": {\"k\": {\"image\": \"\(text)\"}}}".utf8).write(to: URL(fileURLWithPath: dir.path("in.json")))
        let extract = try CLI.run(["extract-blobs", dir.path("in.json"), "-o", dir.path("refs.json"), "--blobs", dir.path("store")])
        XCTAssertEqual(extract.status, 0, extract.stderr)

        let (r, peak) = try CLI.runMeasuringMemory([
            "inline-blobs", dir.path("refs.json"), "-o", dir.path("out.json"), "--blobs", dir.path("store"),
        ])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertLessThan(peak, fileBytes + text.utf8.count + (40 << 20), "\(peak >> 20) MiB for a file of \(fileBytes >> 20) MiB")
        XCTAssertEqual(
            try Data(contentsOf: URL(fileURLWithPath: dir.path("out.json"))), Data("{\"v1\":{\"k\":{\"image\":\"\(text)\"}}}\n".utf8))
    }

    /// `{"v1": {"k": {"text": "<200 MiB>"}}}`, written in 1 MiB pieces.
    private func writeDump(to path: String) throws {
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: nil))
        let file = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? file.close() }
        try file.write(contentsOf: Data(#"{"v1": {"k": {"text": ""#.utf8))
        let piece = Data(String(repeating: "abcdefghij", count: 1 << 17).utf8.prefix(1 << 20))
        for _ in 0..<(stringBytes >> 20) { try file.write(contentsOf: piece) }
        try file.write(contentsOf: Data(#""}}}"#.utf8))
    }
}
