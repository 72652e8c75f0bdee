import Foundation
import TestSupport
import XCTest

/// The order in which the built binary makes its work durable, seen by `strace`: what an output names
/// is on disk before the output is renamed into place, and a restore is on disk before it exits.
final class SyncOrderTests: XCTestCase {
    /// One system call of a trace: its name, the line it completed on, and its text.
    private struct Call {
        var name: String
        var line: Int
        var text: String
        var succeeded: Bool { text.range(of: #"= 0( <[\d.]+>)?$"#, options: .regularExpression) != nil }
    }

    /// Runs `dumpkit` under `strace -f` tracing syncs, renames and links; returns its status and the
    /// calls in the order they completed, and whether the process exited after the last of them.
    private func trace(_ arguments: [String], in dir: TemporaryDirectory) throws -> (status: Int32, calls: [Call], exitLine: Int) {
        let strace = try RequiredTool.path("strace", package: "strace")
        let log = dir.path("strace-\(UUID().uuidString).txt")
        let r = try Shell.execute(
            URL(fileURLWithPath: strace),
            ["-f", "-o", log, "-e", "trace=fsync,fdatasync,syncfs,rename,renameat,renameat2,linkat", CLI.binary.path] + arguments)
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").map(String.init)
        var calls: [Call] = []
        var exitLine = -1
        var pending: [String: String] = [:]  // "pid name" -> first half of an interrupted call
        for (index, line) in lines.enumerated() {
            let fields = line.split(separator: " ", maxSplits: 1).map(String.init)
            guard fields.count == 2 else { continue }
            let (pid, rest) = (fields[0], fields[1].trimmingCharacters(in: .whitespaces))
            if rest.hasPrefix("+++ exited") { exitLine = index; continue }
            if rest.hasPrefix("<... "), let name = rest.dropFirst(5).split(separator: " ").first {
                let first = pending.removeValue(forKey: "\(pid) \(name)") ?? ""
                calls.append(Call(name: String(name), line: index, text: first + rest))
            } else if let name = rest.split(separator: "(").first.map(String.init) {
                if rest.hasSuffix("<unfinished ...>") {
                    pending["\(pid) \(name)"] = rest
                } else {
                    calls.append(Call(name: name, line: index, text: rest))
                }
            }
        }
        XCTAssertEqual(r.status, 0, String(decoding: r.stderr, as: UTF8.self))
        return (r.status, calls, exitLine)
    }

    func testExtractBlobsSyncsTheStoreBeforeRenamingTheOutput() throws {
        let dir = try TemporaryDirectory()
        let images = (0..<5).map { i -> String in
            let bytes: [UInt8] =
                [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + (0..<2000).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ i) }
            return "\"-K\(i)\": {\"image\": \"data:image/png;base64,\(Data(bytes).base64EncodedString())\"}"
        }
        try Data(("{\"v1\": {" + images.joined(separator: ", ") + "}}").utf8).write(to: URL(fileURLWithPath: dir.path("in.json")))
        let (_, calls, _) = try trace(
            ["extract-blobs", dir.path("in.json"), "-o", dir.path("out.json"), "--blobs", dir.path("blobs"), "-q"], in: dir)

        let objects = calls.filter { $0.name == "linkat" && $0.text.contains("\"image.png\"") }
        XCTAssertEqual(objects.count, 5, "\(calls.map(\.text))")
        let output = try XCTUnwrap(calls.first { $0.name.hasPrefix("rename") && $0.text.contains("/out.json\"") }, "\(calls.map(\.text))")
        let sync = try XCTUnwrap(
            calls.first { $0.name == "syncfs" }, "no syncfs: the store's objects are never flushed; \(calls.map(\.text))")
        XCTAssertTrue(sync.succeeded, sync.text)
        XCTAssertLessThan(objects.map(\.line).max()!, sync.line, "objects linked after the store was flushed")
        XCTAssertLessThan(sync.line, output.line, "the output was renamed into place before the store was flushed")
    }

    func testRestoreSyncsWhatItRestoredBeforeExiting() throws {
        let dir = try TemporaryDirectory()
        let bucket = dir.path("bucket")
        for name in ["a.txt", "photos/b.jpg", "photos/c.jpg"] {
            let path = bucket + "/" + name
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data("content of \(name)\n".utf8).write(to: URL(fileURLWithPath: path))
        }
        let archived = try CLI.run(["archive", bucket, "-o", dir.path("bucket.tar.zst"), "-q"])
        XCTAssertEqual(archived.status, 0, archived.stderr)
        let (_, calls, exitLine) = try trace(["restore", dir.path("bucket.tar.zst"), dir.path("restored"), "-q"], in: dir)

        let placed = calls.filter { $0.name.hasPrefix("rename") && $0.text.contains(".dumpkit-partial") }
        XCTAssertEqual(placed.count, 3, "\(calls.map(\.text))")
        let sync = try XCTUnwrap(
            calls.last { $0.name == "syncfs" }, "no syncfs: the restored files are never flushed; \(calls.map(\.text))")
        XCTAssertTrue(sync.succeeded, sync.text)
        XCTAssertLessThan(placed.map(\.line).max()!, sync.line, "files renamed into place after the flush")
        XCTAssertLessThan(sync.line, exitLine, "the flush did not finish before the process exited")
    }
}
