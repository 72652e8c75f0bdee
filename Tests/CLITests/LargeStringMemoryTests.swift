import Foundation
import TestSupport
import XCTest

/// A huge string (the database allows 10 MiB; dumps may hold more) is held once, not copied whole
/// again by the reader, the value built, or the writer: the peak resident memory of `dumpkit` (from
/// `/usr/bin/time`) over a dump with a 200 MiB string stays under 1.5 times the string. Before,
/// convert took 2.1 times and migrate 3.1 times.
final class LargeStringMemoryTests: XCTestCase {
    private let stringBytes = 200 << 20

    func testA200MiBStringIsHeldOnce() throws {
        let time = try RequiredTool.path("time", package: "time")
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
            let r = try Shell.execute(URL(fileURLWithPath: time), ["-f", "maxrss %M"] + [CLI.binary.path] + arguments)
            let stderr = String(decoding: r.stderr, as: UTF8.self)
            XCTAssertEqual(r.status, 0, "\(name): \(stderr)")
            let line = try XCTUnwrap(stderr.split(separator: "\n").last { $0.hasPrefix("maxrss ") }, stderr)
            let peak = try XCTUnwrap(Int(line.dropFirst("maxrss ".count))) << 10
            XCTAssertLessThan(peak, stringBytes * 3 / 2, "\(name): \(peak >> 20) MiB for a string of \(stringBytes >> 20) MiB")
            let written = arguments.contains(output) ? output : output + ".ndjson"
            let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: written)[.size] as? Int)
            XCTAssertGreaterThan(size, stringBytes, name)
            try FileManager.default.removeItem(atPath: written)
        }
    }

    /// `{"v1": {"k": {"text": "<200 MiB>"}}}`, written in 1 MiB pieces.
    private func writeDump(to path: String) throws {
        FileManager.default.createFile(atPath: path, contents: nil)
        let file = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? file.close() }
        try file.write(contentsOf: Data(#"{"v1": {"k": {"text": ""#.utf8))
        let piece = Data(String(repeating: "abcdefghij", count: 1 << 17).utf8.prefix(1 << 20))
        for _ in 0..<(stringBytes >> 20) { try file.write(contentsOf: piece) }
        try file.write(contentsOf: Data(#""}}}"#.utf8))
    }
}
