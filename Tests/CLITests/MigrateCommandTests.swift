import Foundation
import TestSupport
import XCTest

/// `dumpkit migrate` on the four sample apps, as a user runs it.
final class MigrateCommandTests: XCTestCase {
    private let root = TestData.projectRoot

    private func sample(_ app: String, _ file: String) -> String { root.appendingPathComponent("samples/\(app)/\(file)").path }
    private func plan(_ app: String) -> String { root.appendingPathComponent("schemas/\(app)/plan.yaml").path }

    private func json(_ path: String) throws -> NSObject {
        try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path)), options: [.fragmentsAllowed]) as! NSObject
    }

    private func lines(_ path: String) throws -> [[String: NSObject]] {
        try String(decoding: Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self).split(separator: "\n").map {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: NSObject]
        }
    }

    func testEverySampleMigratesToItsExpectedOutput() throws {
        let dir = try TemporaryDirectory()
        for app in ["todolist", "chat", "todo-app", "wedding"] {
            let out = dir.path("\(app).v2.json")
            let r = try CLI.run(["migrate", sample(app, "v1.json"), "-o", out, "--plan", plan(app), "--on-error", "keep"])
            XCTAssertEqual(r.status, 0, "\(app): \(r.stderr)")
            XCTAssertEqual(try json(out), try json(sample(app, "v2.expected.json")), app)
            // Every rejected value is in the rejects file, with its pointers in the input and the output.
            let expected = try lines(sample(app, "v2.rejects.ndjson")).map {
                [$0["pointer"]!, $0["outputPointer"]!, $0["operation"]!, $0["value"]!]
            }
            let got = try lines(out + ".rejects.ndjson").map { [$0["pointer"]!, $0["outputPointer"]!, $0["operation"]!, $0["value"]!] }
            XCTAssertEqual(got, expected, app)
        }
    }

    func testRerunChangesNothingAndSaysSo() throws {
        let dir = try TemporaryDirectory()
        let v2 = dir.path("v2.json"), again = dir.path("again.json")
        XCTAssertEqual(
            try CLI.run(["migrate", sample("todolist", "v1.json"), "-o", v2, "--plan", plan("todolist"), "--on-error", "keep"]).status, 0)
        let r = try CLI.run(["migrate", v2, "-o", again, "--plan", plan("todolist")])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("nothing to change: the dump is already at v2"), r.stderr)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: again)), try Data(contentsOf: URL(fileURLWithPath: v2)))
    }

    func testReverseGivesTheOriginalBack() throws {
        let dir = try TemporaryDirectory()
        let v2 = dir.path("v2.json"), v1 = dir.path("v1.json")
        for app in ["todolist", "wedding"] {
            XCTAssertEqual(try CLI.run(["migrate", sample(app, "v1.json"), "-o", v2, "--plan", plan(app), "--on-error", "keep"]).status, 0)
            let r = try CLI.run([
                "migrate", v2, "-o", v1, "--plan", plan(app), "--reverse", "--on-error", "keep", "--rejects", dir.path("r.ndjson"),
            ])
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertEqual(try json(v1), try json(sample(app, "v1.json")), app)
        }
        // A plan with a lossy step and no stated inverse is refused for --reverse, naming the step.
        let lossy = dir.path("lossy.yaml")
        try Data(
            "name: lossy\nfrom: v1\nto: v2\nsteps:\n  - name: trim\n    match: /v1/todolist/{id}\n    ops:\n      - drop: [detail]\n".utf8
        )
        .write(to: URL(fileURLWithPath: lossy))
        let r = try CLI.run(["migrate", v2, "-o", v1, "--plan", lossy, "--reverse"])
        XCTAssertEqual(r.status, 2)
        XCTAssertTrue(r.stderr.contains("lossy.yaml:") && r.stderr.contains("trim"), r.stderr)
    }

    func testDryRunWritesNothingAndShowsAnExample() throws {
        let dir = try TemporaryDirectory()
        let out = dir.path("out.json")
        let r = try CLI.run([
            "migrate", sample("todolist", "v1.json"), "-o", out, "--plan", plan("todolist"), "--dry-run", "--on-error", "keep",
        ])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))
        XCTAssertFalse(FileManager.default.fileExists(atPath: out + ".rejects.ndjson"))
        XCTAssertTrue(r.stdout.contains("dry run: nothing written"), r.stdout)
        XCTAssertTrue(r.stdout.contains("40 records read, 40 matched"), r.stdout)
        XCTAssertTrue(r.stdout.contains("convert photoCount from string to integer: 38 changed, 2 failed"), r.stdout)
        XCTAssertTrue(r.stdout.contains("before: {") && r.stdout.contains("after:  /v2/todolist/"), r.stdout)
    }

    func testReportHasHashesAndCounts() throws {
        let dir = try TemporaryDirectory()
        let out = dir.path("out.json"), report = dir.path("report.json")
        let r = try CLI.run([
            "migrate", sample("chat", "v1.json"), "-o", out, "--plan", plan("chat"), "--on-error", "skip", "--report", report,
        ])
        XCTAssertEqual(r.status, 0, r.stderr)
        let o = try json(report) as! [String: Any]
        let input = o["input"] as! [String: Any], output = o["output"] as! [String: Any]
        XCTAssertEqual(
            input["sha256"] as? String, try Shell.run("sha256sum", [sample("chat", "v1.json")]).split(separator: " ").first.map(String.init)
        )
        XCTAssertEqual(output["sha256"] as? String, try Shell.run("sha256sum", [out]).split(separator: " ").first.map(String.init))
        let plans = o["plans"] as! [[String: Any]]
        XCTAssertEqual(
            plans.first?["sha256"] as? String, try Shell.run("sha256sum", [plan("chat")]).split(separator: " ").first.map(String.init))
        let stats = o["stats"] as! [String: Any]
        XCTAssertEqual(stats["records"] as? Int, 32)
        XCTAssertEqual(stats["rejects"] as? Int, try lines(out + ".rejects.ndjson").count)
    }

    func testFailPolicyStopsWithThePointerAndWritesNothing() throws {
        let dir = try TemporaryDirectory()
        let out = dir.path("out.json")
        let r = try CLI.run(["migrate", sample("chat", "v1.json"), "-o", out, "--plan", plan("chat")])
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.stderr.contains("/users/") && r.stderr.contains("/date"), r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))
    }

    func testWrongDumpOrBadPlanIsRefusedBeforeWriting() throws {
        let dir = try TemporaryDirectory()
        let out = dir.path("out.json")
        let r = try CLI.run(["migrate", sample("chat", "v1.json"), "-o", out, "--plan", plan("todolist")])
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.stderr.contains("does not look like a 'v1' dump"), r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))
        let bad = dir.path("bad.yaml")
        try Data("name: x\nfrom: v1\nto: v2\nsteps:\n  - match: /a/{id}\n    ops:\n      - renam: {a: b}\n".utf8).write(
            to: URL(fileURLWithPath: bad))
        let p = try CLI.run(["migrate", sample("chat", "v1.json"), "-o", out, "--plan", bad])
        XCTAssertEqual(p.status, 2)
        XCTAssertTrue(p.stderr.contains("bad.yaml:7:9: step 1: unknown operation 'renam' (did you mean 'rename'?)"), p.stderr)
    }

    func testAnExtractBlobsStepMovesTheImagesOutAsTheExtractBlobsCommandWould() throws {
        let dir = try TemporaryDirectory()
        let images = dir.path("images.yaml")
        try Data(
            """
            name: todolist-images
            from: v2
            to: v2
            steps:
              - name: inline images
                match: /v2/todolist/{id}
                ops:
                  - extract-blobs: { match: data-uri, fields: [images], min-bytes: 16, name: "todolist/{key}/{sha256}.{ext}" }
            """.utf8
        ).write(to: URL(fileURLWithPath: images))
        let plans = ["--plan", plan("todolist"), "--plan", images, "--on-error", "keep"]

        let refused = try CLI.run(["migrate", sample("todolist", "v1.json"), "-o", dir.path("no-store.json")] + plans)
        XCTAssertEqual(refused.status, 2)
        XCTAssertTrue(refused.stderr.contains("give --blobs DIR"), refused.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.path("no-store.json")))

        let dry = try CLI.run(["migrate", sample("todolist", "v1.json"), "--dry-run"] + plans)
        XCTAssertEqual(dry.status, 0, dry.stderr)
        XCTAssertTrue(dry.stdout.contains("extract-blobs steps: extracted 3 strings"), dry.stdout)

        let out = dir.path("v2.json")
        let r = try CLI.run(["migrate", sample("todolist", "v1.json"), "-o", out, "--blobs", dir.path("store")] + plans)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("extracted 3 strings"), r.stderr)

        // The same as migrating, then running extract-blobs over the images: the same dump, the same objects.
        let plain = dir.path("plain.json")
        XCTAssertEqual(
            try CLI.run(["migrate", sample("todolist", "v1.json"), "-o", plain, "--plan", plan("todolist"), "--on-error", "keep"]).status, 0
        )
        let separate = try CLI.run([
            "extract-blobs", plain, "-o", dir.path("separate.json"), "--blobs", dir.path("separate-store"),
            "--match", "/v2/todolist/{key}/images", "--name", "todolist/{key}/{sha256}.{ext}", "--min-bytes", "16",
        ])
        XCTAssertEqual(separate.status, 0, separate.stderr)
        XCTAssertEqual(
            try Data(contentsOf: URL(fileURLWithPath: out)), try Data(contentsOf: URL(fileURLWithPath: dir.path("separate.json"))))
        let objects = filesBelow(dir.path("store")).filter { !$0.hasPrefix(".dumpkit/") }
        XCTAssertEqual(objects.count, 3)
        XCTAssertEqual(objects, filesBelow(dir.path("separate-store")).filter { !$0.hasPrefix(".dumpkit/") })
        for object in objects {
            XCTAssertEqual(try contents(dir.path("store") + "/" + object), try contents(dir.path("separate-store") + "/" + object), object)
        }
        let v2 = try json(out) as! [String: Any]
        let todos = (v2["v2"] as! [String: Any])["todolist"] as! [String: [String: Any]]
        let references = todos.values.flatMap { ($0["images"] as? [Any]) ?? [] }.compactMap { ($0 as? [String: Any])?["path"] as? String }
        XCTAssertEqual(references.sorted(), objects.sorted())
        XCTAssertFalse(String(decoding: try contents(out), as: UTF8.self).contains("data:image"))

        // Over its own output: nothing left to move.
        let again = try CLI.run(["migrate", out, "-o", dir.path("again.json"), "--blobs", dir.path("store")] + plans)
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertTrue(again.stderr.contains("nothing to change"), again.stderr)
        XCTAssertEqual(try contents(dir.path("again.json")), try contents(out))
    }

    /// An object the store holds with other bytes stops an extract-blobs step, as it stops
    /// `extract-blobs`; `--replace` replaces it and says so, and the output then checks clean.
    func testExtractBlobsStepsReplaceObjectsWithOtherBytesOnlyWithReplace() throws {
        let dir = try TemporaryDirectory()
        let images = dir.path("images.yaml")
        try Data(
            """
            name: todolist-images
            from: v2
            to: v2
            steps:
              - match: /v2/todolist/{id}
                ops:
                  - extract-blobs: { fields: [images], min-bytes: 16, name: "todolist/{key}/{field}.{ext}" }
            """.utf8
        ).write(to: URL(fileURLWithPath: images))
        let plans = ["--plan", plan("todolist"), "--plan", images, "--on-error", "keep"]
        let store = dir.path("store")
        let first = try CLI.run(["migrate", sample("todolist", "v1.json"), "-o", dir.path("first.json"), "--blobs", store] + plans)
        XCTAssertEqual(first.status, 0, first.stderr)
        let object = try XCTUnwrap(filesBelow(store).first { !$0.hasPrefix(".dumpkit/") })
        try Data("changed by hand".utf8).write(to: URL(fileURLWithPath: store + "/" + object))

        let refused = try CLI.run(["migrate", sample("todolist", "v1.json"), "-o", dir.path("second.json"), "--blobs", store] + plans)
        XCTAssertEqual(refused.status, 1, refused.stderr)
        XCTAssertTrue(refused.stderr.contains(object), refused.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.path("second.json")))
        XCTAssertEqual(try contents(store + "/" + object), Array("changed by hand".utf8))

        let replaced = try CLI.run(
            ["migrate", sample("todolist", "v1.json"), "-o", dir.path("second.json"), "--blobs", store, "--replace"] + plans)
        XCTAssertEqual(replaced.status, 0, replaced.stderr)
        XCTAssertTrue(replaced.stderr.contains("replaced (other bytes were there, --replace): 1"), replaced.stderr)
        XCTAssertEqual(try contents(dir.path("second.json")), try contents(dir.path("first.json")))
        let check = try CLI.run(["check-blobs", dir.path("second.json"), "--blobs", store])
        XCTAssertEqual(check.status, 0, check.stdout + check.stderr)

        let noSteps = try CLI.run([
            "migrate", sample("todolist", "v1.json"), "-o", dir.path("third.json"), "--plan", plan("todolist"),
            "--on-error", "keep", "--replace",
        ])
        XCTAssertEqual(noSteps.status, 2, noSteps.stderr)
        XCTAssertTrue(noSteps.stderr.contains("--replace is for the plans' extract-blobs steps"), noSteps.stderr)
    }

    func testExtractBlobsStepsTheRunCouldNotApplyAreRefusedBeforeAnythingIsWritten() throws {
        let dir = try TemporaryDirectory()
        func write(_ name: String, _ text: String) throws -> String {
            try Data(text.utf8).write(to: URL(fileURLWithPath: dir.path(name)))
            return dir.path(name)
        }
        let step =
            "  - match: /v2/todolist/{id}\n    ops:\n      - extract-blobs: { fields: [images], name: \"t/{key}/{sha256}.{ext}\"REF }\n"
        let images = try write("images.yaml", "name: images\nfrom: v2\nto: v2\nsteps:\n" + step.replacingOccurrences(of: "REF", with: ""))
        let third = try write(
            "v3.yaml", "name: v3\nfrom: v2\nto: v3\nsteps:\n  - match: /v2/todolist/{id}\n    ops:\n      - move: /v3/todos/{id}\n")
        let salada = try write(
            "salada.yaml",
            "name: salada\nfrom: v2\nto: v2\nsteps:\n" + step.replacingOccurrences(of: "REF", with: ", ref-style: salada-file"))
        let nested = try write(
            "nested.yaml",
            "name: nested\nfrom: v2\nto: v2\nsteps:\n  - match: /v2/todolist\n    ops:\n      - extract-blobs: { name: \"t/{sha256}.{ext}\" }\n"
        )
        let cases: [([String], String)] = [
            ([images, third], "put them in the last plan (here 'v3')"),
            ([salada], "needs --bucket"),
            ([nested], "extract-blobs at /v2/todolist nests with /v2/todolist/{id}"),
        ]
        for (plans, message) in cases {
            let out = dir.path("out.json")
            let r = try CLI.run(
                [
                    "migrate", sample("todolist", "v1.json"), "-o", out, "--blobs", dir.path("store"), "--on-error", "keep", "--plan",
                    plan("todolist"),
                ] + plans.flatMap { ["--plan", $0] })
            XCTAssertEqual(r.status, 2, message)
            XCTAssertTrue(r.stderr.contains(message), r.stderr)
            XCTAssertFalse(FileManager.default.fileExists(atPath: out), message)
            XCTAssertFalse(FileManager.default.fileExists(atPath: dir.path("store")), "no store is made for a refused run: \(message)")
        }
        // With a bucket, Salada references; the report counts the blobs.
        let r = try CLI.run([
            "migrate", sample("todolist", "v1.json"), "-o", dir.path("salada.json"), "--blobs", dir.path("store"), "--bucket",
            "app.appspot.com",
            "--on-error", "keep", "--report", dir.path("report.json"), "--plan", plan("todolist"), "--plan", salada,
        ])
        XCTAssertEqual(r.status, 0, r.stderr)
        let report = try json(dir.path("report.json")) as! [String: Any]
        let extracted = ((report["blobs"] as? [String: Any])?["extracted"] as? [String: Any])?["count"] as? Int
        XCTAssertEqual(extracted, 3, "\(report["blobs"] ?? "no blobs in the report")")
        XCTAssertTrue(
            String(decoding: try Data(contentsOf: URL(fileURLWithPath: dir.path("salada.json"))), as: UTF8.self).contains(
                "https://firebasestorage.googleapis.com/v0/b/app.appspot.com/o/"))
    }

    func testChainedPlansRunInOnePass() throws {
        let dir = try TemporaryDirectory()
        let second = dir.path("v3.yaml")
        try Data(
            "name: v3\nfrom: v2\nto: v3\nsteps:\n  - match: /v2/todolist/{id}\n    ops:\n      - rename: {detail: notes}\n      - move: /v3/todos/{id}\n"
                .utf8
        )
        .write(to: URL(fileURLWithPath: second))
        let out = dir.path("v3.json")
        let r = try CLI.run([
            "migrate", sample("todolist", "v1.json"), "-o", out, "--plan", plan("todolist"), "--plan", second, "--on-error", "keep",
        ])
        XCTAssertEqual(r.status, 0, r.stderr)
        let o = try json(out) as! [String: Any]
        let todos = (o["v3"] as! [String: Any])["todos"] as! [String: [String: Any]]
        XCTAssertEqual(todos.count, 40)
        XCTAssertNil(o["v2"])
        XCTAssertTrue(todos.values.allSatisfy { $0["detail"] == nil })
    }

    /// Writes `text` to `name` in `dir` and returns the path.
    private func file(_ dir: TemporaryDirectory, _ name: String, _ text: String) throws -> String {
        try Data(text.utf8).write(to: URL(fileURLWithPath: dir.path(name)))
        return dir.path(name)
    }

    func testAMoveIntoObjectsThatExistReversesToTheInput() throws {
        // The new user's two-user dump: the reverse moves records into /users/{uid}, which stands
        // before their source and already has other children.
        let dir = try TemporaryDirectory()
        let input = #"{"users":{"a":{"games":1,"info":{"n":1}},"c":{"games":2,"info":{"n":3}}}}"#
        let dump = try file(dir, "in.json", input)
        let plan = try file(
            dir, "plan.yaml",
            "name: profiles\nfrom: v1\nto: v2\nsteps:\n  - name: profiles\n    match: /users/{uid}/info\n    ops:\n      - move: /profiles/{uid}\n"
        )
        var r = try CLI.run(["migrate", dump, "--plan", plan, "-o", dir.path("v2.json")])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(
            String(decoding: try contents(dir.path("v2.json")), as: UTF8.self),
            #"{"users":{"a":{"games":1},"c":{"games":2}},"profiles":{"a":{"n":1},"c":{"n":3}}}"# + "\n")
        r = try CLI.run(["migrate", dir.path("v2.json"), "--plan", plan, "--reverse", "-o", dir.path("back.json")])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(String(decoding: try contents(dir.path("back.json")), as: UTF8.self), input + "\n")
        // With --canonical, byte-equal to the canonical input.
        XCTAssertEqual(try CLI.run(["convert", dump, "--canonical", "-o", dir.path("in.canonical.json")]).status, 0)
        r = try CLI.run(["migrate", dir.path("v2.json"), "--plan", plan, "--reverse", "--canonical", "-o", dir.path("back.canonical.json")])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try contents(dir.path("back.canonical.json")), try contents(dir.path("in.canonical.json")))
        // The forward move with a second step on /users/{uid}/games/{n}, and a hand-written inverse.
        let two = try file(
            dir, "two.yaml",
            "name: two\nfrom: v1\nto: v2\nsteps:\n  - match: /users/{uid}/info\n    ops:\n      - move: /profiles/{uid}\n  - match: /users/{uid}/games\n    ops:\n      - move: /games/{uid}\n"
        )
        r = try CLI.run(["migrate", dump, "--plan", two, "-o", dir.path("two.json")])
        XCTAssertEqual(r.status, 0, r.stderr)
        let inverse = try file(
            dir, "inverse.yaml",
            "name: inverse\nfrom: v2\nto: v1\nsteps:\n  - match: /games/{uid}\n    ops:\n      - move: /users/{uid}/games\n  - match: /profiles/{uid}\n    ops:\n      - move: /users/{uid}/info\n"
        )
        r = try CLI.run(["migrate", dir.path("two.json"), "--plan", inverse, "-o", dir.path("two.back.json")])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try json(dir.path("two.back.json")), try json(dump))
    }

    func testAPlanWithoutMovesKeepsEveryKeyWhereItWas() throws {
        let dir = try TemporaryDirectory()
        let dump = try file(dir, "in.json", #"{"a":1,"v1":{"todolist":{"-Kb":{"t":"x","n":2},"-Ka":{"t":"y"}},"z":{}},"z":2}"#)
        let plan = try file(
            dir, "plan.yaml",
            "name: rename\nfrom: v1\nto: v2\nsteps:\n  - match: /v1/todolist/{id}\n    ops:\n      - rename: { t: title }\n")
        let r = try CLI.run(["migrate", dump, "--plan", plan, "-o", dir.path("out.json")])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(
            String(decoding: try contents(dir.path("out.json")), as: UTF8.self),
            #"{"a":1,"v1":{"todolist":{"-Kb":{"title":"x","n":2},"-Ka":{"title":"y"}},"z":{}},"z":2}"# + "\n")
    }

    func testMoveConflictsNameBothPointersOrGoToTheRejects() throws {
        let dir = try TemporaryDirectory()
        let dump = try file(dir, "in.json", #"{"old":{"a":{"n":1},"b":{"n":2}},"new":{"a":{"kept":true}}}"#)
        let plan = try file(
            dir, "plan.yaml", "name: m\nfrom: v1\nto: v2\nsteps:\n  - match: /old/{id}\n    ops:\n      - move: /new/{id}\n")
        var r = try CLI.run(["migrate", dump, "--plan", plan, "-o", dir.path("out.json")])
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertTrue(r.stderr.contains("record /old/a moved to /new/a: the input already has a value there"), r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.path("out.json")))
        // Under keep, the record that cannot be placed is set aside whole, and the rest is written.
        r = try CLI.run(["migrate", dump, "--plan", plan, "-o", dir.path("out.json"), "--on-error", "keep"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("; 1 moved record that could not be placed in \(dir.path("out.json")).rejects.ndjson"), r.stderr)
        XCTAssertEqual(
            try json(dir.path("out.json")),
            try JSONSerialization.jsonObject(with: Data(#"{"new":{"a":{"kept":true},"b":{"n":2}}}"#.utf8)) as! NSObject)
        let rejects = try lines(dir.path("out.json.rejects.ndjson"))
        XCTAssertEqual(rejects.count, 1)
        XCTAssertEqual(rejects.first?["pointer"], "/old/a" as NSString)
        XCTAssertEqual(rejects.first?["outputPointer"], "/new/a" as NSString)
        XCTAssertEqual(rejects.first?["operation"], "move" as NSString)
        XCTAssertEqual(rejects.first?["value"], ["n": 1] as NSDictionary)
        // A key the database forbids, made from a capture.
        let dotted = try file(
            dir, "dotted.yaml", "name: m\nfrom: v1\nto: v2\nsteps:\n  - match: /old/{id}\n    ops:\n      - move: /new/{id}/x\n")
        r = try CLI.run([
            "migrate", try file(dir, "dot.json", #"{"old":{"a.b":{"n":1}}}"#), "--plan", dotted, "-o", dir.path("dot.out.json"),
        ])
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertTrue(r.stderr.contains("record /old/a.b moved to /new/a.b/x: key 'a.b' holds '.'"), r.stderr)
    }

    func testADryRunGoesThroughTheWholeDumpAndCountsEveryFailure() throws {
        // The todolist sample has values the plan cannot convert: a dry run under the default
        // --on-error fail lists them all, per step and operation, then exits 1.
        let expected = try lines(sample("todolist", "v2.rejects.ndjson"))
        XCTAssertGreaterThan(expected.count, 1)
        let r = try CLI.run(["migrate", sample("todolist", "v1.json"), "--plan", plan("todolist"), "--dry-run"])
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertTrue(r.stdout.contains("\(expected.count) values would be rejected"), r.stdout)
        XCTAssertTrue(r.stdout.contains("failed"), r.stdout)
        XCTAssertTrue(r.stdout.contains("values that would be rejected:"), r.stdout)
        for reject in expected { XCTAssertTrue(r.stdout.contains(reject["pointer"] as! String), r.stdout) }
        XCTAssertTrue(r.stderr.contains("\(expected.count) values would stop the run under --on-error fail"), r.stderr)
        // Under keep, the same counts and exit 0.
        let keep = try CLI.run(["migrate", sample("todolist", "v1.json"), "--plan", plan("todolist"), "--dry-run", "--on-error", "keep"])
        XCTAssertEqual(keep.status, 0, keep.stderr)
        XCTAssertTrue(keep.stdout.contains("\(expected.count) values would be rejected"), keep.stdout)
    }

    func testOutputsAreSyncedThenRenamedRejectsFirstAndTheirFolderSynced() throws {
        // A power cut cannot be simulated here: the order of syncs and renames is read from strace.
        _ = try RequiredTool.path("strace", package: "strace")
        let dir = try TemporaryDirectory()
        let out = dir.path("v2.json"), rejects = dir.path("v2.rejects.ndjson"), trace = dir.path("trace.txt")
        let r = try Shell.execute(
            URL(fileURLWithPath: "/usr/bin/env"),
            [
                "strace", "-f", "-y", "-o", trace, "-e", "trace=fsync,rename,renameat,renameat2",
                CLI.binary.path, "migrate", sample("todolist", "v1.json"), "-o", out, "--plan", plan("todolist"), "--on-error", "keep",
                "--rejects", rejects,
            ])
        XCTAssertEqual(r.status, 0, String(decoding: r.stderr, as: UTF8.self))
        let calls = String(decoding: try contents(trace), as: UTF8.self).split(separator: "\n").map(String.init)
        func index(_ what: String, _ predicate: (String) -> Bool) throws -> Int {
            try XCTUnwrap(calls.firstIndex(where: predicate), "no \(what) in\n\(calls.joined(separator: "\n"))")
        }
        let renameRejects = try index("rename of the rejects") { $0.contains("rename") && $0.contains("\"\(rejects)\"") }
        let renameOutput = try index("rename of the output") { $0.contains("rename") && $0.contains("\"\(out)\"") }
        XCTAssertLessThan(renameRejects, renameOutput, "the rejects are published first")
        // Each file is synced before any rename, and the folder after each rename.
        let syncs = calls.indices.filter { calls[$0].contains("fsync(") && calls[$0].contains(".dumpkit-") }
        XCTAssertEqual(syncs.count, 2, calls.joined(separator: "\n"))
        XCTAssertTrue(syncs.allSatisfy { $0 < renameRejects }, calls.joined(separator: "\n"))
        let folder = dir.url.resolvingSymlinksInPath().path
        let folderSyncs = calls.indices.filter { calls[$0].contains("fsync(") && calls[$0].contains("<\(folder)>") }
        XCTAssertTrue(folderSyncs.contains { $0 > renameRejects && $0 < renameOutput }, calls.joined(separator: "\n"))
        XCTAssertTrue(folderSyncs.contains { $0 > renameOutput }, calls.joined(separator: "\n"))
    }

    func testARunThatChangesNothingSaysWhichOperationsMatchedNothing() throws {
        let dir = try TemporaryDirectory()
        let dump = try file(dir, "in.json", #"{"v1":{"todolist":{"-Ka":{"title":"a"},"-Kb":{"title":"b"}}}}"#)
        let plan = try file(
            dir, "plan.yaml",
            "name: typo\nfrom: v1\nto: v2\nsteps:\n  - name: items\n    match: /v1/todolist/{id}\n    ops:\n      - rename: { titel: name }\n"
        )
        let r = try CLI.run(["migrate", dump, "--plan", plan, "-o", dir.path("out.json")])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertFalse(r.stderr.contains("already at v2"), r.stderr)
        XCTAssertTrue(r.stderr.contains("nothing changed: 2 records matched the plans, and no operation applied to any of them:"), r.stderr)
        XCTAssertTrue(r.stderr.contains("typo step 1 'items': rename titel -> name matched nothing in 2 records"), r.stderr)
    }

    func testPlansAreReadAsAnyInputOnce() throws {
        let dir = try TemporaryDirectory()
        let planText = try contents(plan("todolist"))
        // From standard input (read once: the warnings and the run share it), with its sha256 in the report.
        var r = try CLI.run(
            [
                "migrate", sample("todolist", "v1.json"), "--plan", "-", "-o", dir.path("v2.json"), "--on-error", "keep", "--report",
                dir.path("report.json"),
            ],
            stdin: Data(planText))
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try json(dir.path("v2.json")), try json(sample("todolist", "v2.expected.json")))
        let report = try json(dir.path("report.json")) as! [String: Any]
        let sha = ((report["plans"] as! [[String: Any]])[0]["sha256"] as! String)
        XCTAssertEqual(sha, try Shell.run("sha256sum", [plan("todolist")]).split(separator: " ")[0].description)
        // A FIFO, as `--plan <(...)` gives.
        let fifo = dir.path("plan.fifo")
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        let writer = Thread { try? Data(planText).write(to: URL(fileURLWithPath: fifo)) }
        writer.start()
        r = try CLI.run(["migrate", sample("todolist", "v1.json"), "--plan", fifo, "-o", dir.path("fifo.json"), "--on-error", "keep"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try json(dir.path("fifo.json")), try json(sample("todolist", "v2.expected.json")))
        // A missing plan, in the words used for dumps.
        r = try CLI.run(["migrate", sample("todolist", "v1.json"), "--plan", dir.path("missing.yaml"), "-o", dir.path("x.json")])
        XCTAssertEqual(r.status, 2)
        XCTAssertTrue(r.stderr.contains("missing.yaml: cannot read the plan: cannot open: No such file or directory"), r.stderr)
    }
}
