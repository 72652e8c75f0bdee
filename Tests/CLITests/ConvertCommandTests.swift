import Foundation
import TestSupport
import XCTest

/// `dumpkit convert` run as a user would: real files, real compressors, exit codes and messages.
final class ConvertCommandTests: XCTestCase {
    private let dump =
        #"{"v1":{"todolist":{"-Kb":{"title":"買い物 🛒","n":1.50},"-Ka":{"title":"a\"q","big":12345678901234567890}},"meta":{"10":1,"2":2}}}"#

    private func write(_ text: String, _ name: String, in dir: TemporaryDirectory) throws -> String {
        let path = dir.path(name)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    private func read(_ path: String) throws -> String { String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self) }

    func testTreeToNDJSONAndBackKeepsEveryValue() throws {
        let dir = try TemporaryDirectory()
        let input = try write(dump, "in.json", in: dir)
        let r1 = try CLI.run(["convert", input, "-o", dir.path("out.ndjson"), "--records", "/v1/todolist/{id}"])
        XCTAssertEqual(r1.status, 0, r1.stderr)
        XCTAssertEqual(
            try read(dir.path("out.ndjson")),
            """
            {"path":"/v1/todolist/-Kb","value":{"title":"買い物 🛒","n":1.50}}
            {"path":"/v1/todolist/-Ka","value":{"title":"a\\"q","big":12345678901234567890}}
            {"path":"/v1/meta","value":{"10":1,"2":2}}

            """)
        let r2 = try CLI.run(["convert", dir.path("out.ndjson"), "-o", dir.path("back.json")])
        XCTAssertEqual(r2.status, 0, r2.stderr)
        XCTAssertEqual(try read(dir.path("back.json")), dump + "\n")
    }

    func testCanonicalIsStableAndOrdered() throws {
        let dir = try TemporaryDirectory()
        let input = try write(dump, "in.json", in: dir)
        let r = try CLI.run(["convert", input, "--canonical"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(
            r.stdout,
            #"{"v1":{"meta":{"2":2,"10":1},"todolist":{"-Ka":{"big":12345678901234567890,"title":"a\"q"},"-Kb":{"n":1.50,"title":"買い物 🛒"}}}}"#
                + "\n")
        let again = try CLI.run(["convert", "-", "--canonical"], stdin: Data(r.stdout.utf8))
        XCTAssertEqual(again.stdout, r.stdout)
    }

    func testCompressedInputAndOutputInteroperate() throws {
        let dir = try TemporaryDirectory()
        let input = try write(dump, "in.json", in: dir)
        for (ext, tool) in [("gz", "gzip"), ("zst", "zstd"), ("xz", "xz"), ("bz2", "bzip2")] {
            let out = dir.path("out.json.\(ext)")
            let r = try CLI.run(["convert", input, "-o", out])
            XCTAssertEqual(r.status, 0, r.stderr)
            // The summary gives the file's size and, for a compressed file, the JSON's.
            let fileSize = try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: out)[.size] as? Int)
            XCTAssertTrue(r.stderr.contains("wrote \(out): \(fileSize) B (\(dump.utf8.count + 1) B of JSON)"), r.stderr)
            let p = try Shell.run(tool, ["-dc", out])
            XCTAssertEqual(p, dump + "\n", ext)
            // And read back through magic-byte detection, whatever the name says.
            let renamed = dir.path("compressed-\(ext).bin")
            try FileManager.default.moveItem(atPath: out, toPath: renamed)
            let back = try CLI.run(["convert", renamed])
            XCTAssertEqual(back.stdout, dump + "\n", ext)
        }
    }

    func testBadInputsGiveOneClearLineExitTwoAndNoOutput() throws {
        let dir = try TemporaryDirectory()
        var gz = try Shell.runData("gzip", ["-c"], stdin: Data(String(repeating: dump, count: 200).utf8))
        gz = gz.prefix(gz.count / 2)
        try gz.write(to: URL(fileURLWithPath: dir.path("cut.json.gz")))
        let cases: [(String, [UInt8], String)] = [
            ("truncated.json", Array(#"{"a":[1,2"#.utf8), "1:10 (byte 9) at /a/1: unexpected end of input"),
            ("utf8.json", Array(#"{"a":""#.utf8) + [0xFF] + Array(#""}"#.utf8), "1:7 (byte 6) at /a: invalid UTF-8"),
            ("garbage.json", [0x00, 0x01, 0x02], "1:1 (byte 0): unexpected byte 0x0"),
            ("empty.json", [], "empty input"),
            ("trailing.json", Array("{} {}".utf8), "1:4 (byte 3): unexpected data after the JSON value"),
            ("comment.json", Array("{\"a\":1 // no\n}".utf8), "1:8 (byte 7) at /a: unexpected '/'"),
        ]
        for (name, bytes, expected) in cases {
            let path = dir.path(name)
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            let out = dir.path(name + ".out.json")
            let r = try CLI.run(["convert", path, "-o", out])
            XCTAssertEqual(r.status, 2, name)
            XCTAssertTrue(r.stderr.hasPrefix("dumpkit: error: \(path):"), r.stderr)
            XCTAssertTrue(r.stderr.contains(expected), "\(name): \(r.stderr)")
            XCTAssertEqual(r.stderr.split(separator: "\n").count, 1, r.stderr)
            XCTAssertFalse(FileManager.default.fileExists(atPath: out), name)
        }
        let cut = try CLI.run(["convert", dir.path("cut.json.gz"), "-o", dir.path("cut.out")])
        XCTAssertEqual(cut.status, 2)
        XCTAssertTrue(cut.stderr.contains("cut.json.gz: truncated gzip stream"), cut.stderr)
        XCTAssertEqual(try CLI.run(["convert", dir.url.path]).status, 2)
        XCTAssertTrue(try CLI.run(["convert", dir.url.path]).stderr.contains("is a directory"))
        XCTAssertTrue(try CLI.run(["convert", dir.path("missing.json")]).stderr.contains("No such file"))
        // No temporary files are left behind.
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: dir.url.path).filter { $0.hasPrefix(".") }
        XCTAssertEqual(leftovers, [])
    }

    func testCorruptGzipInputIsAnErrorAndConcatenatedMembersAreOneStream() throws {
        let dir = try TemporaryDirectory()
        let records = String(repeating: #"{"title":"todo","done":false},"#, count: 2_000)
        let json = #"{"todolist":["# + records + #"{}]}"#
        // A CRC-32 that does not match: the JSON itself is intact, only the gzip trailer can tell.
        var gz = try Shell.runData("gzip", ["-c"], stdin: Data(json.utf8))
        gz[gz.count - 8] ^= 0x01
        let corrupt = dir.path("corrupt.json.gz")
        try gz.write(to: URL(fileURLWithPath: corrupt))
        let out = dir.path("out.json")
        let r = try CLI.run(["convert", corrupt, "-o", out])
        XCTAssertEqual(r.status, 2, r.stderr)
        XCTAssertEqual(r.stderr, "dumpkit: error: \(corrupt): corrupt gzip stream (incorrect data check)\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))
        // The same bytes on standard input.
        let piped = try CLI.run(["convert", "-"], stdin: gz)
        XCTAssertEqual(piped.status, 2, piped.stderr)
        XCTAssertTrue(piped.stderr.contains("<stdin>: corrupt gzip stream (incorrect data check)"), piped.stderr)

        // The document split over two members (as `cat a.gz b.gz` makes), then zero padding, reads whole.
        let middle = json.utf8.index(json.utf8.startIndex, offsetBy: json.utf8.count / 2)
        var members = try Shell.runData("gzip", ["-c"], stdin: Data(json.utf8[..<middle]))
        members += try Shell.runData("gzip", ["-c"], stdin: Data(json.utf8[middle...]))
        members += Data(count: 512)
        let joined = dir.path("joined.json.gz")
        try members.write(to: URL(fileURLWithPath: joined))
        let ok = try CLI.run(["convert", joined])
        XCTAssertEqual(ok.status, 0, ok.stderr)
        XCTAssertEqual(ok.stdout, json + "\n")
    }

    func testFailedRunLeavesTheOldOutputUntouched() throws {
        let dir = try TemporaryDirectory()
        let out = try write("previous good output", "out.json", in: dir)
        let bad = try write(#"{"a": [1, 2, oops]}"#, "bad.json", in: dir)
        let r = try CLI.run(["convert", bad, "-o", out])
        XCTAssertEqual(r.status, 2)
        XCTAssertEqual(try read(out), "previous good output")
        let unwritable = try CLI.run(["convert", bad, "-o", "/nonexistent-dir/out.json"])
        XCTAssertEqual(unwritable.status, 2)
        XCTAssertTrue(unwritable.stderr.contains("/nonexistent-dir/out.json: cannot create a file in /nonexistent-dir"), unwritable.stderr)
    }

    func testATemporaryFileLeftByAKilledRunIsRemovedByTheNextRun() throws {
        let dir = try TemporaryDirectory()
        let out = dir.path("out.json")
        // A run that waits for the rest of its input is killed with SIGKILL: its temporary file stays.
        let process = Process()
        process.executableURL = CLI.binary
        process.arguments = ["convert", "-", "-o", out, "-q"]
        let input = Pipe()
        process.standardInput = input
        try process.run()
        input.fileHandleForWriting.write(Data(#"{"a":[1,2,"#.utf8))
        let leftovers = { try FileManager.default.contentsOfDirectory(atPath: dir.url.path).filter { $0.hasPrefix(".out.json.dumpkit-") } }
        let deadline = Date().addingTimeInterval(30)
        while try leftovers().isEmpty && Date() < deadline { usleep(20_000) }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        XCTAssertEqual(try leftovers().count, 1, "the killed run's temporary file")
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))
        // A live process's temporary file for the same output is not touched.
        let live = dir.path(".out.json.dumpkit-\(getpid())-abcdef")
        try Data().write(to: URL(fileURLWithPath: live))

        let r = try CLI.run(["convert", "-", "-o", out], stdin: Data(dump.utf8))
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try leftovers(), [".out.json.dumpkit-\(getpid())-abcdef"])
        XCTAssertTrue(try read(out).hasPrefix(#"{"v1":"#))
    }

    func testPrettyNDJSONIsAUsageError() throws {
        let dir = try TemporaryDirectory()
        let input = try write(dump, "in.json", in: dir)
        let r = try CLI.run(["convert", input, "-o", dir.path("x.ndjson"), "--pretty"])
        XCTAssertEqual(r.status, 2)
        XCTAssertTrue(r.stderr.contains("--pretty"), r.stderr)
        XCTAssertEqual(try CLI.run(["convert", input, "--records", "v1/x"]).status, 2)
    }

    func testHelpHasExamples() throws {
        for command in ["convert", "stats"] {
            let r = try CLI.run([command, "--help"])
            XCTAssertEqual(r.status, 0)
            XCTAssertTrue(r.stdout.contains("Examples:"), command)
        }
        let root = try CLI.run(["--help"])
        XCTAssertTrue(root.stdout.contains("convert") && root.stdout.contains("stats"), root.stdout)
    }

    func testDuplicateKeysAreRefusedByConvertAndMigrateAndReportedByValidate() throws {
        let dir = try TemporaryDirectory()
        let input = try write(#"{"v1":{"todolist":{"-Ka":{"title":"a","title":"b"}}},"x":{"k":1,"y":2,"k":3}}"#, "dup.json", in: dir)
        var r = try CLI.run(["convert", input, "-o", dir.path("out.json")])
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertTrue(
            r.stderr.contains("dup.json:1:39 (byte 38) at /v1/todolist/-Ka/title: the name is in this object twice (first at byte 26)"),
            r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.path("out.json")))
        let plan = try write(
            "name: p\nfrom: v1\nto: v2\nsteps:\n  - match: /v1/todolist/{id}\n    ops:\n      - move: /v2/todolist/{id}\n", "plan.yaml",
            in: dir)
        r = try CLI.run(["migrate", input, "--plan", plan, "-o", dir.path("out.json")])
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertTrue(r.stderr.contains("at /v1/todolist/-Ka/title: the name is in this object twice"), r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.path("out.json")))
        r = try CLI.run(["validate", input, "--format", "json"])
        XCTAssertEqual(r.status, 1, r.stderr)
        let report = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any]
        let duplicates = (report["findings"] as! [[String: Any]]).filter { $0["rule"] as? String == "json:duplicate-key" }
        XCTAssertEqual(duplicates.map { $0["pointer"] as! String }, ["/v1/todolist/-Ka/title", "/x/k"])
        XCTAssertEqual(duplicates.map { $0["line"] as! Int }, [1, 1])
        XCTAssertEqual(duplicates.map { $0["column"] as! Int }, [39, 71])
        XCTAssertTrue((duplicates[1]["message"] as! String).contains("first at byte 58"), "\(duplicates[1])")
    }

    /// `--duplicate-keys keep-last` keeps the last member of each name, at any depth and across
    /// compressed input, in convert and migrate; standard input is refused (it is read twice).
    func testDuplicateKeysKeepLastKeepsTheLastMemberOfEachName() throws {
        let dir = try TemporaryDirectory()
        let dump = #"{"v1":{"todolist":{"-Ka":{"title":"a","n":[{"k":1,"k":2}],"title":"b"}}},"x":{"k":1,"y":2,"k":3,"y":4,"k":{"z":5}}}"#
        let input = try write(dump, "dup.json", in: dir)
        _ = try Shell.run("gzip", ["-k", input])
        for source in [input, input + ".gz"] {
            let r = try CLI.run(["convert", source, "-o", dir.path("out.json"), "--duplicate-keys", "keep-last"])
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertEqual(
                String(decoding: try contents(dir.path("out.json")), as: UTF8.self),
                #"{"v1":{"todolist":{"-Ka":{"n":[{"k":2}],"title":"b"}}},"x":{"y":4,"k":{"z":5}}}"# + "\n")
            XCTAssertTrue(
                r.stderr.contains("--duplicate-keys keep-last: left out 5 members whose name came again later in its object"), r.stderr)
        }
        let plan = try write(
            "name: p\nfrom: v1\nto: v2\nsteps:\n  - match: /v1/todolist/{id}\n    ops:\n      - move: /v2/todolist/{id}\n", "plan.yaml",
            in: dir)
        var r = try CLI.run(["migrate", input, "--plan", plan, "-o", dir.path("v2.json"), "--duplicate-keys", "keep-last", "--json"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(
            String(decoding: try contents(dir.path("v2.json")), as: UTF8.self),
            #"{"x":{"y":4,"k":{"z":5}},"v2":{"todolist":{"-Ka":{"n":[{"k":2}],"title":"b"}}}}"# + "\n")
        let report = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(report["duplicatesDropped"] as? Int, 5)
        r = try CLI.run(["convert", "-", "--duplicate-keys", "keep-last"], stdin: Data(dump.utf8))
        XCTAssertEqual(r.status, 2)
        XCTAssertTrue(r.stderr.hasPrefix("dumpkit: error: --duplicate-keys keep-last reads the input twice: give a file"), r.stderr)
        XCTAssertTrue(try CLI.run(["convert", "--help"]).stdout.contains("--duplicate-keys <duplicate-keys>"))
    }
}
