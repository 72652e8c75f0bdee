import Foundation
import TestSupport
import XCTest

/// The README's shell examples run as written: every `sh` block carries a `<!-- readme-test: ... -->`
/// comment on the line before it, `run` (optionally `; exit codes: 0 1 ...`, one per command) or
/// `skip: <reason>`. The `run` blocks are run in order with the built `dumpkit` first on `PATH`, in a
/// temporary copy of the samples with the files the README names (see "Commands").
final class ReadmeExamplesTests: XCTestCase {
    /// One `sh` block of the README.
    struct Block {
        /// 1-based line of the opening fence.
        var line: Int
        /// The marker's text after `readme-test:`, or `nil` when there is none.
        var marker: String?
        /// The commands, continuation lines (ending in `\`) joined.
        var commands: [String]
    }

    /// The `sh` blocks of `text`, with their markers.
    static func blocks(in text: String) -> [Block] {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var blocks: [Block] = []
        var index = 0
        while index < lines.count {
            let fence = lines[index].trimmingCharacters(in: .whitespaces)
            guard ["```sh", "```bash", "```shell"].contains(fence) else {
                index += 1
                continue
            }
            let fenceLine = index + 1
            let before = index > 0 ? lines[index - 1].trimmingCharacters(in: .whitespaces) : ""
            let marker =
                before.hasPrefix("<!-- readme-test:") && before.hasSuffix("-->")
                ? before.dropFirst("<!-- readme-test:".count).dropLast("-->".count).trimmingCharacters(in: .whitespaces) : nil
            var commands: [String] = []
            var pending = ""
            index += 1
            while index < lines.count, lines[index].trimmingCharacters(in: .whitespaces) != "```" {
                let line = lines[index]
                if line.hasSuffix("\\") {
                    pending += line.dropLast() + " "
                } else if !(pending + line).trimmingCharacters(in: .whitespaces).isEmpty {
                    commands.append(pending + line)
                    pending = ""
                }
                index += 1
            }
            blocks.append(Block(line: fenceLine, marker: marker, commands: commands))
            index += 1
        }
        return blocks
    }

    struct MarkerError: Error, CustomStringConvertible {
        let description: String
    }

    /// The exit codes a `run` marker states, one per command (all 0 when it states none).
    static func exitCodes(_ marker: String, count: Int) throws -> [Int32] {
        guard let range = marker.range(of: "exit codes:") else { return Array(repeating: 0, count: count) }
        let codes = marker[range.upperBound...].split(separator: " ").prefix { Int32($0) != nil }.compactMap { Int32($0) }
        guard codes.count == count else {
            throw MarkerError(description: "'\(marker)' gives \(codes.count) exit codes for \(count) commands")
        }
        return codes
    }

    func testEveryShellBlockIsMarked() throws {
        let readme = try String(contentsOf: TestData.projectRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let blocks = Self.blocks(in: readme)
        XCTAssertGreaterThan(blocks.count, 4)
        for block in blocks {
            guard let marker = block.marker else {
                XCTFail(
                    "README.md:\(block.line): an sh block without a <!-- readme-test: run --> or <!-- readme-test: skip: reason --> comment before it"
                )
                continue
            }
            XCTAssertTrue(marker.hasPrefix("run") || marker.hasPrefix("skip: "), "README.md:\(block.line): '\(marker)'")
            if marker.hasPrefix("skip") {
                XCTAssertGreaterThan(marker.count, "skip: ".count + 5, "README.md:\(block.line): a skip says why")
            }
        }
        // The parser itself: markers, continuation lines, blocks without markers.
        let sample = "<!-- readme-test: run; exit codes: 0 1 -->\n```sh\na \\\n  b\n\nc  # note\n```\n\n```sh\nd\n```\n"
        let parsed = Self.blocks(in: sample)
        XCTAssertEqual(parsed.map(\.marker), ["run; exit codes: 0 1", nil])
        XCTAssertEqual(parsed.map(\.commands), [["a    b", "c  # note"], ["d"]])
        XCTAssertEqual(try Self.exitCodes(parsed[0].marker!, count: 2), [0, 1])
        XCTAssertThrowsError(try Self.exitCodes(parsed[0].marker!, count: 3))
    }

    func testTheMarkedExamplesRunAsWritten() throws {
        _ = try RequiredTool.path("jq", package: "jq")
        let root = TestData.projectRoot
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let dir = try TemporaryDirectory()
        // The files the README's examples name (see its "Commands").
        for folder in ["samples", "schemas"] {
            try FileManager.default.copyItem(at: root.appendingPathComponent(folder), to: dir.url.appendingPathComponent(folder))
        }
        let v1 = root.appendingPathComponent("samples/todolist/v1.json")
        for name in ["dump.json", "v1.json"] { try FileManager.default.copyItem(at: v1, to: dir.url.appendingPathComponent(name)) }
        for name in ["plan.yaml", "images.yaml"] {
            try FileManager.default.copyItem(
                at: root.appendingPathComponent("schemas/todolist/\(name)"), to: dir.url.appendingPathComponent(name))
        }
        try Data("/v1/todolist/{id}: schemas/todolist/v1.schema.json\n".utf8).write(to: dir.url.appendingPathComponent("schemas.yaml"))
        let setup =
            "gzip -c dump.json > backup.json.gz && cp backup.json.gz dump.json.gz && dumpkit extract-blobs dump.json -o clean.json --blobs bucket/ -q"
        let path = "\(CLI.binary.deletingLastPathComponent().path):\(ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")"
        func sh(_ command: String) throws -> Shell.Result {
            try Shell.execute(URL(fileURLWithPath: "/bin/bash"), ["-o", "pipefail", "-c", "PATH='\(path)'; " + command], in: dir.url)
        }
        let prepared = try sh(setup)
        XCTAssertEqual(prepared.status, 0, String(decoding: prepared.stderr, as: UTF8.self))

        var ran = 0
        for block in Self.blocks(in: readme) {
            guard let marker = block.marker, marker.hasPrefix("run") else { continue }
            for (command, expected) in zip(block.commands, try Self.exitCodes(marker, count: block.commands.count)) {
                let r = try sh(command)
                XCTAssertEqual(r.status, expected, "README.md:\(block.line): \(command)\n" + String(decoding: r.stderr, as: UTF8.self))
                ran += 1
            }
        }
        XCTAssertGreaterThanOrEqual(ran, 16)
    }
}
