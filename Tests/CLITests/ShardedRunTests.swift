import Foundation
import TestSupport
import XCTest

#if canImport(Glibc)
    import Glibc
#endif

/// Sharded runs as a job runner does them: `dumpkit index`, N shard processes started by GNU
/// parallel (two at a time, as on this machine's two cores), `dumpkit merge`, and the merged output
/// compared byte for byte with the unsharded run's.
final class ShardedRunTests: XCTestCase {
    func read(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }

    func generate(_ kind: String, _ size: String, seed: Int = 1, to path: String) throws {
        let script = TestData.projectRoot.appendingPathComponent("Scripts/gen_dataset.py").path
        _ = try Shell.run("python3", [script, kind, "--size", size, "--seed", String(seed), "-o", path])
    }

    func dumpkit(_ arguments: [String], file: StaticString = #filePath, line: UInt = #line) throws -> CLI.Result {
        let r = try CLI.run(arguments)
        XCTAssertEqual(r.status, 0, "dumpkit \(arguments.joined(separator: " ")): \(r.stderr)", file: file, line: line)
        return r
    }

    /// Removes the files of shard 1 of 3 (`files`: suffixes of `OUT.part-1-of-3`), runs it again with
    /// `arguments` (whose output is `output`, in `dir`) and kills it with SIGKILL once its temporary
    /// part exists (or, if it was quicker, once it finished: its files are then removed as if it had
    /// not); then merge must name the missing shard and write nothing.
    func killShardOneOfThree(
        _ arguments: [String], output: String, files: [String], in dir: TemporaryDirectory, file: StaticString = #filePath,
        line: UInt = #line
    ) throws {
        for suffix in files { try FileManager.default.removeItem(atPath: output + ".part-1-of-3" + suffix) }
        let p = Process()
        p.executableURL = CLI.binary
        p.arguments = arguments + ["--shard", "1/3", "-q"]
        try p.run()
        let temporary = "." + (output.split(separator: "/").last.map(String.init) ?? output) + ".part-1-of-3.dumpkit-"
        let deadline = Date().addingTimeInterval(30)
        while p.isRunning && Date() < deadline {
            let names = try FileManager.default.contentsOfDirectory(atPath: dir.url.path)
            if names.contains(where: { $0.hasPrefix(temporary) }) { break }
            usleep(1000)
        }
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        if p.terminationReason == .exit {
            for suffix in files { try? FileManager.default.removeItem(atPath: output + ".part-1-of-3" + suffix) }
        }
        let refused = try CLI.run(["merge", output])
        XCTAssertEqual(refused.status, 1, refused.stderr, file: file, line: line)
        XCTAssertTrue(
            refused.stderr.contains("shard 1 of 3") && refused.stderr.contains("--shard 1/3"), refused.stderr, file: file, line: line)
        XCTAssertFalse(FileManager.default.fileExists(atPath: output), "merge wrote an output without shard 1", file: file, line: line)
    }

    /// Runs shards 0..<n of `arguments` (a command line without --shard) through GNU parallel, two
    /// at a time; with `environment`, each gets its index as a Kubernetes Indexed Job would.
    func runShards(_ arguments: [String], n: Int, environment: Bool = false, file: StaticString = #filePath, line: UInt = #line)
        throws
    {
        let parallel = try RequiredTool.path("parallel", package: "parallel")
        var command = ["--will-cite", "--halt", "now,fail=1", "--jobs", "2", "-q"]
        if environment {
            command += ["env", "JOB_COMPLETION_INDEX={}", CLI.binary.path] + arguments + ["--shard-count", String(n), "-q"]
        } else {
            command += [CLI.binary.path] + arguments + ["--shard", "{}/\(n)", "-q"]
        }
        command += [":::"] + (0..<n).map(String.init)
        let r = try Shell.execute(URL(fileURLWithPath: parallel), command)
        XCTAssertEqual(r.status, 0, "parallel: " + String(decoding: r.stderr, as: UTF8.self), file: file, line: line)
    }

    /// index + shards + merge equals the unsharded convert, for N = 1, 2, 3 and 8.
    private func checkConvert(
        _ input: String, output name: String, records: [String] = [], indexArguments: [String], in dir: TemporaryDirectory,
        environment: Bool = false, file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let recordArguments = records.flatMap { ["--records", $0] }
        let reference = dir.path("reference-" + name)
        _ = try dumpkit(["convert", input, "-o", reference, "-q"] + recordArguments, file: file, line: line)
        let index = dir.path(name + ".dkindex")
        _ = try dumpkit(["index", input, "-o", index, "-q"] + indexArguments, file: file, line: line)
        for n in [1, 2, 3, 8] {
            let out = dir.path("\(n)-" + name)
            try runShards(
                ["convert", input, "-o", out, "--index", index] + recordArguments, n: n, environment: environment, file: file, line: line)
            _ = try dumpkit(["merge", out, "-q"], file: file, line: line)
            XCTAssertTrue(
                try read(out) == read(reference), "\(input) with \(n) shards: the merged \(name) differs from the unsharded one",
                file: file, line: line)
        }
    }

    func testConvertOfAGeneratedDumpMergesToTheUnshardedBytes() throws {
        let dir = try TemporaryDirectory()
        let input = dir.path("todo.json")
        try generate("todolist", "2MB", to: input)
        try checkConvert(input, output: "tree.json", indexArguments: ["--unit-bytes", "8192"], in: dir)
        // Runs of many records: a tree's members, and NDJSON lines each with its own pointer.
        try checkConvert(input, output: "runs.json", indexArguments: ["--run-bytes", "32768"], in: dir)
        try checkConvert(
            input, output: "records.ndjson", records: ["/v1/todolist/{id}"],
            indexArguments: ["--records", "/v1/todolist/{id}", "--run-bytes", "32768"], in: dir)
    }

    func testShardsTakeTheirIndexFromTheRunnersEnvironment() throws {
        let dir = try TemporaryDirectory()
        let input = dir.path("errors.json")
        try generate("errors", "1MB", seed: 3, to: input)
        try checkConvert(
            input, output: "tree.json", indexArguments: ["--depth", "2", "--unit-bytes", "4096", "--run-bytes", "4096"], in: dir,
            environment: true)
    }

    func testConvertOfTheRealDumpsMergesToTheUnshardedBytes() throws {
        let dumps = try TestData.files(in: try TestData.directory("real-dumps"), withExtension: "json")
        XCTAssertFalse(dumps.isEmpty)
        for dump in dumps {
            let dir = try TemporaryDirectory()
            try checkConvert(dump.path, output: "tree.json", indexArguments: ["--unit-bytes", "2048"], in: dir)
            try checkConvert(dump.path, output: "runs.json", indexArguments: ["--unit-bytes", "2048", "--run-bytes", "1024"], in: dir)
            try checkConvert(dump.path, output: "lines.ndjson", indexArguments: ["--records", "/*", "--run-bytes", "4096"], in: dir)
        }
    }

    /// A plan for the real dumps: renames and conversions of the records one level below the top,
    /// some of which reject values (kept, in the rejects file).
    private let realDumpPlan = """
        name: real
        description: Rename and convert fields of every record one level below the top.
        from: v1
        to: v2
        steps:
          - name: records
            match: /*/{id}
            ops:
              - rename: { text: body, name: title }
              - convert: { field: height, from: number, to: string }
              - convert: { field: order, from: string, to: integer }
              - convert: { field: section, from: string, to: integer }
        """

    /// index + shards + merge equals the unsharded migrate (output and rejects), for N = 1, 2, 3 and 8.
    private func checkMigrate(
        _ input: String, plan: String, records: [String], runBytes: Int? = nil, in dir: TemporaryDirectory, file: StaticString = #filePath,
        line: UInt = #line
    ) throws {
        let reference = dir.path("reference.json")
        _ = try dumpkit(["migrate", input, "-o", reference, "--plan", plan, "--on-error", "keep", "-q"], file: file, line: line)
        let index = dir.path("migrate.dkindex")
        let runs = runBytes.map { ["--run-bytes", String($0)] } ?? []
        _ = try dumpkit(["index", input, "-o", index, "-q"] + records.flatMap { ["--records", $0] } + runs, file: file, line: line)
        let rejects = try? read(reference + ".rejects.ndjson")
        for n in [1, 2, 3, 8] {
            let out = dir.path("\(n)-migrated.json")
            try runShards(
                ["migrate", input, "-o", out, "--plan", plan, "--on-error", "keep", "--index", index], n: n, file: file, line: line)
            _ = try dumpkit(["merge", out, "-q"], file: file, line: line)
            XCTAssertTrue(
                try read(out) == read(reference), "\(input) with \(n) shards: the merged migration differs from the unsharded one",
                file: file, line: line)
            XCTAssertEqual(
                try? read(out + ".rejects.ndjson"), rejects, "\(input) with \(n) shards: the rejects differ", file: file, line: line)
        }
    }

    func testMigrateWithRejectsMergesToTheUnshardedBytes() throws {
        let dir = try TemporaryDirectory()
        let input = dir.path("todo.json")
        try generate("todolist", "2MB", seed: 5, to: input)
        // The sample plan without its move: records stay where they are, some values are rejected.
        let plan = dir.path("plan.yaml")
        let text = try String(contentsOf: TestData.projectRoot.appendingPathComponent("schemas/todolist/plan.yaml"), encoding: .utf8)
        try text.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.contains("- move:") }.joined(separator: "\n")
            .write(toFile: plan, atomically: true, encoding: .utf8)
        try checkMigrate(input, plan: plan, records: ["/v1/todolist/{id}"], in: dir)
        XCTAssertGreaterThan(try read(dir.path("reference.json.rejects.ndjson")).count, 0, "the generated dump has values the plan rejects")
        // Runs of many records, each through the plans and written back as a member of the run.
        try checkMigrate(input, plan: plan, records: ["/v1/todolist/{id}"], runBytes: 65536, in: dir)
    }

    func testMigrateOfTheRealDumpsMergesToTheUnshardedBytes() throws {
        let dumps = try TestData.files(in: try TestData.directory("real-dumps"), withExtension: "json")
        for dump in dumps {
            let dir = try TemporaryDirectory()
            let plan = dir.path("real.yaml")
            try realDumpPlan.write(toFile: plan, atomically: true, encoding: .utf8)
            try checkMigrate(dump.path, plan: plan, records: ["/*/{id}"], runBytes: 2048, in: dir)
        }
        let chat = TestData.projectRoot.appendingPathComponent("samples/chat/v1.json").path
        let dir = try TemporaryDirectory()
        try checkMigrate(
            chat, plan: TestData.projectRoot.appendingPathComponent("schemas/chat/plan.yaml").path, records: ["/users/{uid}/messages/{id}"],
            in: dir)
    }

    func testMigrationsThatCannotBeShardedAreRefusedNamingTheStep() throws {
        let dir = try TemporaryDirectory()
        let input = TestData.projectRoot.appendingPathComponent("samples/todolist/v1.json").path
        let plan = TestData.projectRoot.appendingPathComponent("schemas/todolist/plan.yaml").path
        let index = dir.path("todo.dkindex")
        _ = try dumpkit(["index", input, "-o", index, "-q", "--records", "/v1/todolist/{id}"])
        var r = try CLI.run(["migrate", input, "-o", dir.path("v2.json"), "--plan", plan, "--index", index, "--shard", "0/2"])
        XCTAssertEqual(r.status, 2)
        XCTAssertTrue(
            r.stderr.contains("step 1 ('todolist'): 'move' moves records into objects that other shards write")
                && r.stderr.contains("dumpkit migrate without --index"), r.stderr)
        let chat = TestData.projectRoot.appendingPathComponent("samples/chat/v1.json").path
        let chatPlan = TestData.projectRoot.appendingPathComponent("schemas/chat/plan.yaml").path
        let chatIndex = dir.path("chat.dkindex")
        _ = try dumpkit(["index", chat, "-o", chatIndex, "-q"])
        r = try CLI.run(["migrate", chat, "-o", dir.path("v2.json"), "--plan", chatPlan, "--index", chatIndex, "--shard", "0/2"])
        XCTAssertEqual(r.status, 2)
        XCTAssertTrue(r.stderr.contains("make the index with --records '/users/{uid}/messages/{id}'"), r.stderr)
        _ = try dumpkit(["index", chat, "-o", chatIndex, "-q", "--records", "/users/{uid}/messages/{id}"])
        r = try CLI.run([
            "migrate", chat, "-o", dir.path("v2.json"), "--plan", chatPlan, "--on-error", "skip", "--index", chatIndex, "--shard", "0/2",
        ])
        XCTAssertEqual(r.status, 2)
        XCTAssertTrue(r.stderr.contains("--on-error skip drops records"), r.stderr)
    }

    /// The largest shard reads at most 1.1 times the mean number of bytes.
    func testShardsAreBalancedByBytes() throws {
        let dir = try TemporaryDirectory()
        let input = dir.path("todo.json")
        try generate("todolist", "2MB", seed: 7, to: input)
        for (name, arguments) in [("records", ["--records", "/v1/todolist/{id}"]), ("size", ["--unit-bytes", "16384"])] {
            let index = dir.path(name + ".dkindex")
            _ = try dumpkit(["index", input, "-o", index, "-q"] + arguments)
            for n in [3, 8, 16] {
                var bytes: [Double] = []
                for i in 0..<n {
                    let r = try dumpkit([
                        "convert", input, "-o", dir.path("\(name)-\(n).json"), "--index", index, "--shard", "\(i)/\(n)", "--json",
                    ])
                    let summary = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
                    bytes.append(try XCTUnwrap(summary?["bytesIn"] as? Double))
                }
                let mean = bytes.reduce(0, +) / Double(n)
                XCTAssertLessThanOrEqual(bytes.max()!, 1.1 * mean, "\(name), \(n) shards: \(bytes)")
            }
        }
    }

    func testAShardKilledAndRunAgainMergesToTheSameBytes() throws {
        let dir = try TemporaryDirectory()
        let input = dir.path("todo.json")
        try generate("todolist", "8MB", seed: 2, to: input)
        let index = dir.path("todo.dkindex")
        _ = try dumpkit(["index", input, "-o", index, "-q"])
        let reference = dir.path("reference.json")
        _ = try dumpkit(["convert", input, "-o", reference, "-q"])
        let out = dir.path("out.json")
        try runShards(["convert", input, "-o", out, "--index", index], n: 3)
        try killShardOneOfThree(["convert", input, "-o", out, "--index", index], output: out, files: ["", ".manifest"], in: dir)
        _ = try dumpkit(["convert", input, "-o", out, "--index", index, "--shard", "1/3", "-q"])
        _ = try dumpkit(["merge", out, "-q"])
        XCTAssertTrue(try read(out) == read(reference))
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.url.path)
        XCTAssertFalse(names.contains(where: { $0.contains(".dumpkit-") }), "temporary files left: \(names)")
    }

    func testMergeNamesAMissingOrStalePartOrManifest() throws {
        let dir = try TemporaryDirectory()
        let input = dir.path("todo.json")
        try generate("todolist", "1MB", to: input)
        let index = dir.path("todo.dkindex")
        _ = try dumpkit(["index", input, "-o", index, "-q", "--unit-bytes", "4096"])
        let out = dir.path("out.json")
        try runShards(["convert", input, "-o", out, "--index", index], n: 3)
        let part = out + ".part-2-of-3"
        let saved = try read(part)

        try FileManager.default.removeItem(atPath: part)
        var r = try CLI.run(["merge", out])
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.stderr.contains(part + " is missing"), r.stderr)

        try saved.dropLast(10).write(to: URL(fileURLWithPath: part))
        r = try CLI.run(["merge", out])
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.stderr.contains("shard 2 of 3 is stale"), r.stderr)

        try saved.write(to: URL(fileURLWithPath: part))
        try FileManager.default.removeItem(atPath: out + ".part-0-of-3.manifest")
        r = try CLI.run(["merge", out])
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.stderr.contains("shard 0 of 3 has not finished: \(out).part-0-of-3.manifest is missing"), r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))

        // A shard run from another index is stale too.
        _ = try dumpkit(["convert", input, "-o", out, "--index", index, "--shard", "0/3", "-q"])
        let other = dir.path("other.dkindex")
        _ = try dumpkit(["index", input, "-o", other, "-q", "--unit-bytes", "9999"])
        _ = try dumpkit(["convert", input, "-o", out, "--index", other, "--shard", "1/3", "-q"])
        r = try CLI.run(["merge", out])
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.stderr.contains("shard 1 of 3 is stale: its manifest has index"), r.stderr)
        _ = try dumpkit(["convert", input, "-o", out, "--index", index, "--shard", "1/3", "-q"])
        _ = try dumpkit(["merge", out, "-q"])
    }

    func testAnIndexOfAnotherFileIsRefused() throws {
        let dir = try TemporaryDirectory()
        let a = dir.path("a.json"), b = dir.path("b.json"), c = dir.path("c.json")
        try generate("todolist", "200KB", seed: 1, to: a)
        try generate("todolist", "200KB", seed: 2, to: b)
        // Same size as a, one byte of a value changed.
        var bytes = try read(a)
        let at = bytes.count / 2
        bytes[at] = bytes[at] == UInt8(ascii: "0") ? UInt8(ascii: "1") : UInt8(ascii: "0")
        if (try? JSONSerialization.jsonObject(with: bytes)) == nil { bytes = try read(a); bytes[bytes.count - 3] = UInt8(ascii: " ") }
        try bytes.write(to: URL(fileURLWithPath: c))
        let index = dir.path("a.dkindex")
        _ = try dumpkit(["index", a, "-o", index, "-q", "--unit-bytes", "2048"])
        let other = try CLI.run(["convert", b, "-o", dir.path("out.json"), "--index", index, "--shard", "0/2"])
        XCTAssertEqual(other.status, 2)
        XCTAssertTrue(other.stderr.contains("was made for a file of"), other.stderr)
        var refused = 0
        for i in 0..<2 {
            let r = try CLI.run(["convert", c, "-o", dir.path("out.json"), "--index", index, "--shard", "\(i)/2"])
            if r.status != 0 {
                XCTAssertEqual(r.status, 2)
                XCTAssertTrue(r.stderr.contains("are not those the index was made from") || r.stderr.contains("after"), r.stderr)
                refused += 1
            }
        }
        XCTAssertEqual(refused, 1, "exactly the shard that reads the changed byte refuses")
    }

    func testWhatCannotBeShardedIsRefusedWithTheWayOut() throws {
        let dir = try TemporaryDirectory()
        let input = dir.path("todo.json")
        try generate("todolist", "100KB", to: input)
        _ = try Shell.run("gzip", ["-k", input])
        var r = try CLI.run(["index", input + ".gz", "-o", dir.path("gz.dkindex")])
        XCTAssertEqual(r.status, 2)
        XCTAssertTrue(r.stderr.contains("cannot be read from the middle"), r.stderr)
        let index = dir.path("todo.dkindex")
        _ = try dumpkit(["index", input, "-o", index, "-q"])
        let cases: [([String], String)] = [
            (["--pretty"], "--pretty cannot be sharded"),
            (["--canonical"], "--canonical reorders members"),
            (["--duplicate-keys", "keep-last"], "run unsharded"),
        ]
        for (extra, message) in cases {
            r = try CLI.run(["convert", input, "-o", dir.path("out.json"), "--index", index, "--shard", "0/2"] + extra)
            XCTAssertEqual(r.status, 2, extra.joined(separator: " "))
            XCTAssertTrue(r.stderr.contains(message), r.stderr)
        }
        r = try CLI.run(["convert", input, "-o", dir.path("out.json.zst"), "--index", index, "--shard", "0/2"])
        XCTAssertEqual(r.status, 2)
        XCTAssertTrue(r.stderr.contains("compress the merged file"), r.stderr)
        r = try CLI.run(["convert", input, "-o", dir.path("out.ndjson"), "--index", index, "--shard", "0/2"])
        XCTAssertEqual(r.status, 2)
        XCTAssertTrue(r.stderr.contains("make the index with the same --records"), r.stderr)
    }

    func testAMissingShardCountNamesWhatToSet() throws {
        let dir = try TemporaryDirectory()
        let input = dir.path("todo.json")
        try generate("todolist", "50KB", to: input)
        let index = dir.path("todo.dkindex")
        _ = try dumpkit(["index", input, "-o", index, "-q"])
        let bin = CLI.binary.path
        let env = URL(fileURLWithPath: "/usr/bin/env")
        var r = try Shell.execute(env, ["JOB_COMPLETION_INDEX=1", bin, "convert", input, "-o", dir.path("o.json"), "--index", index])
        XCTAssertEqual(r.status, 2)
        XCTAssertTrue(
            String(decoding: r.stderr, as: UTF8.self).contains(
                "JOB_COMPLETION_INDEX gives the shard's index but not the number of shards: pass --shard-count N"))
        r = try Shell.execute(env, ["CLOUD_RUN_TASK_INDEX=1", bin, "convert", input, "-o", dir.path("o.json"), "--index", index])
        XCTAssertEqual(r.status, 2)
        XCTAssertTrue(String(decoding: r.stderr, as: UTF8.self).contains("CLOUD_RUN_TASK_COUNT is not"))
        // A flag wins over the environment.
        r = try Shell.execute(
            env,
            [
                "CLOUD_RUN_TASK_INDEX=1", "CLOUD_RUN_TASK_COUNT=2", bin, "convert", input, "-o", dir.path("o.json"), "--index", index,
                "--shard", "0/1", "-q",
            ])
        XCTAssertEqual(r.status, 0, String(decoding: r.stderr, as: UTF8.self))
        XCTAssertTrue(FileManager.default.fileExists(atPath: dir.path("o.json.part-0-of-1.manifest")))
        let unsharded = try CLI.run(["convert", input, "-o", dir.path("p.json"), "--shard", "0/2"])
        XCTAssertEqual(unsharded.status, 2)
        XCTAssertTrue(unsharded.stderr.contains("need --index FILE"), unsharded.stderr)
    }

    /// index + shards of validate + merge prints the unsharded report (json and text, same exit
    /// status), for N = 1, 2, 3 and 7.
    private func checkValidate(
        _ input: String, _ arguments: [String], indexArguments: [String], in dir: TemporaryDirectory, file: StaticString = #filePath,
        line: UInt = #line
    ) throws {
        let index = dir.path("validate.dkindex")
        _ = try dumpkit(["index", input, "-o", index, "-q"] + indexArguments, file: file, line: line)
        for n in [1, 2, 3, 7] {
            let out = dir.path("\(n)-findings")
            try runShards(["validate", input, "-o", out, "--index", index] + arguments, n: n, file: file, line: line)
            for format in ["json", "text"] {
                let reference = try CLI.run(["validate", input, "--format", format] + arguments)
                let merged = try CLI.run(["merge", out, "--format", format])
                XCTAssertEqual(merged.stderr, "", file: file, line: line)
                XCTAssertEqual(merged.status, reference.status, "\(input), \(n) shards: exit status", file: file, line: line)
                XCTAssertEqual(merged.stdout, reference.stdout, "\(input), \(n) shards, \(format) report", file: file, line: line)
            }
        }
    }

    private func sample(_ path: String) -> String { TestData.projectRoot.appendingPathComponent(path).path }

    func testValidateOfTheSamplesMergesToTheUnshardedReport() throws {
        let cases = [
            ("todolist", "/v1/todolist/{id}", "v1"), ("todolist", "/v2/todolist/{id}", "v2"), ("chat", "/users/{uid}/messages/{id}", "v2"),
            ("wedding", "/articles/{id}", "v2"), ("todo-app", "/*/{id}", "v1"),
        ]
        for (app, pattern, version) in cases {
            let dir = try TemporaryDirectory()
            let input = sample("samples/\(app)/\(version == "v1" ? "v1.json" : "v2.expected.json")")
            let schema = ["--schema", "\(pattern)=\(sample("schemas/\(app)/\(version).schema.json"))"]
            try checkValidate(input, schema, indexArguments: ["--records", pattern], in: dir)
            // Limits only, from units of a few hundred bytes split inside the records.
            try checkValidate(input, [], indexArguments: ["--unit-bytes", "300"], in: dir)
            try checkValidate(input, schema, indexArguments: ["--records", pattern, "--run-bytes", "600"], in: dir)
        }
    }

    /// Findings at the ends of containers that several shards read (their names added up at merge),
    /// bad names in the structure between units, a schema that matches in one shard only and one
    /// that matches nowhere, and findings past --max-findings.
    func testValidateDecidesWhatSpansShardsAtMerge() throws {
        let dir = try TemporaryDirectory()
        var members: [String] = []
        for i in 0..<60 where i % 7 != 3 {
            members.append("  \"\(i)\": {\n    \"name\": \"n\(i)\",\n    \"bad.key\(i % 2)\": \(i),\n    \"size\": \"\(i)\"\n  }")
        }
        members.append("  \".value\": 1")
        members.append("  \"odd$key\": {\"name\": 7, \"size\": 1e999}")
        members.append(
            "  \"holes\": {\"0\": \"\(String(repeating: "a", count: 50))\", \"1\": [1, 2], \"2\": {}, \"4\": \"\(String(repeating: "b", count: 50))\"}"
        )
        let input = dir.path("spans.json")
        try Data(("{\n" + members.joined(separator: ",\n") + "\n}\n").utf8).write(to: URL(fileURLWithPath: input))
        try Data(#"{"type": "object", "properties": {"size": {"type": "number"}, "name": {"type": "string"}}, "nope": 1}"#.utf8).write(
            to: URL(fileURLWithPath: dir.path("record.schema.json")))
        let schemas = [
            "--schema", "/{id}=\(dir.path("record.schema.json"))", "--schema", "/{id}/name=\(dir.path("record.schema.json"))",
            "--schema", "/{id}/size=\(dir.path("record.schema.json"))", "--schema", "/none/{id}=\(dir.path("record.schema.json"))",
        ]
        let records = ["--records", "/{id}", "--records", "/{id}/name", "--records", "/{id}/size", "--records", "/none/{id}"]
        try checkValidate(input, schemas, indexArguments: records, in: dir)
        try checkValidate(input, schemas + ["--max-findings", "5"], indexArguments: records, in: dir)
        try checkValidate(input, ["--max-findings", "3"], indexArguments: ["--unit-bytes", "40"], in: dir)
        try checkValidate(input, schemas, indexArguments: records + ["--run-bytes", "300"], in: dir)
    }

    /// Runs of array elements across shard boundaries: a shard that starts after a run counts the
    /// elements before it, so findings name the dump's indexes and lines.
    func testValidateOfRunsOfArrayElementsNamesTheDumpsIndexes() throws {
        let dir = try TemporaryDirectory()
        let items = (0..<400).map { i in
            i % 9 == 4 ? "    {\"name\": \(i), \"tags\": [\"a\", \(i)]}" : "    {\"name\": \"n\(i)\", \"tags\": [\"a\", \"b\"]}"
        }
        let input = dir.path("list.json")
        try Data(("{\n  \"list\": [\n" + items.joined(separator: ",\n") + "\n  ],\n  \"bad.key\": 1\n}\n").utf8).write(
            to: URL(fileURLWithPath: input))
        try Data(#"{"type": "object", "properties": {"name": {"type": "string"}, "tags": {"items": {"type": "string"}}}}"#.utf8).write(
            to: URL(fileURLWithPath: dir.path("item.schema.json")))
        let schema = ["--schema", "/list/{i}=\(dir.path("item.schema.json"))", "--max-findings", "100"]
        try checkValidate(input, schema, indexArguments: ["--records", "/list/{i}", "--run-bytes", "700"], in: dir)
        try checkValidate(input, ["--max-findings", "100"], indexArguments: ["--unit-bytes", "300", "--run-bytes", "300"], in: dir)
        let report = try CLI.run(["validate", input, "--format", "json"] + schema)
        XCTAssertTrue(report.stdout.contains("/list/391/tags/1"), report.stdout)
    }

    func testValidateOfTheRealDumpsMergesToTheUnshardedReport() throws {
        let dumps = try TestData.files(in: try TestData.directory("real-dumps"), withExtension: "json")
        XCTAssertFalse(dumps.isEmpty)
        for dump in dumps {
            let dir = try TemporaryDirectory()
            try Data(#"{"type": "object", "required": ["id"], "properties": {"name": {"type": "string"}}}"#.utf8).write(
                to: URL(fileURLWithPath: dir.path("s.json")))
            try checkValidate(dump.path, [], indexArguments: ["--unit-bytes", "2048", "--run-bytes", "1024"], in: dir)
            try checkValidate(
                dump.path, ["--schema", "/*/{id}=\(dir.path("s.json"))", "--allow-unmatched", "--max-findings", "20"],
                indexArguments: ["--records", "/*/{id}"], in: dir)
        }
    }

    func testValidateRefusesRulesAndAnIndexWithoutTheSchemasRecords() throws {
        let dir = try TemporaryDirectory()
        let input = sample("samples/todo-app/v1.json")
        let index = dir.path("i.dkindex")
        _ = try dumpkit(["index", input, "-o", index, "-q"])
        let rules = try CLI.run([
            "validate", input, "--rules", sample("samples/todo-app/database.rules.json"), "--index", index, "--shard", "0/2", "-o",
            dir.path("f"),
        ])
        XCTAssertEqual(rules.status, 2)
        XCTAssertTrue(rules.stderr.contains("--rules cannot be sharded: a rule may read any part of the dump through root"), rules.stderr)
        let schema = try CLI.run([
            "validate", input, "--schema", "/*/{id}=\(sample("schemas/todo-app/v1.schema.json"))", "--index", index, "--shard", "0/2", "-o",
            dir.path("f"),
        ])
        XCTAssertEqual(schema.status, 2)
        XCTAssertTrue(schema.stderr.contains("make the index with --records '/*/{id}'"), schema.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.path("f.part-0-of-2")))
    }
}
