import JSONStream
import XCTest

@testable import DumpKit

/// Reading plan files: both syntaxes, every operation's options, and errors with file, line and step.
final class PlanLoadingTests: XCTestCase {
    private let full = """
        name: everything
        description: one of each operation
        from: v1
        to: v2
        steps:
          - name: todolist
            match:
              - /v1/todolist/{id}
              - /v1/todo/{id}
            where:
              title: { exists: true }
              progress: { in: [これから着手, 着手中] }
            ops:
              - rename: { _createdAt: createdAt, meta/created: created }
              - convert: { field: photo_count, to: integer }
              - convert: { field: date, from: date, to: milliseconds, format: "yyyy/MM/dd HH:mm:ss", time-zone: Asia/Tokyo }
              - map: { field: progress, values: { これから着手: todo }, unmapped: keep }
              - default: { completed: false }
              - drop: legacy
              - collect: { fields: [image1, image2], into: images }
              - spread: { field: tags, into: [tag1, tag2] }
              - backfill: { field: createdAt, unit: seconds }
              - normalize-file: { field: images, shape: name }
              - move: /v2/todolist/{id}
          - name: spam
            match: /v2/todolist/{id}
            where: { spam: true }
            ops:
              - delete
          - name: blobs
            match: /v2/todolist/{id}
            ops:
              - extract-blobs: { match: base64, fields: [images], min-bytes: 512, name: "todolist/{id}/{sha256}.{ext}", ref-style: salada-file }
        """

    private func error(_ yaml: String, file: String = "todolist.yaml") -> PlanError? {
        do {
            _ = try MigrationPlan.parse(text: yaml, fileName: file)
            return nil
        } catch {
            return error
        }
    }

    func testReadsEveryOperation() throws {
        let plan = try PlanFixtures.plan(full)
        XCTAssertEqual(plan.name, "everything")
        XCTAssertEqual(plan.summary, "one of each operation")
        XCTAssertEqual(plan.steps.count, 3)
        let step = plan.steps[0]
        XCTAssertEqual(step.patterns.map(\.text), ["/v1/todolist/{id}", "/v1/todo/{id}"])
        XCTAssertEqual(step.conditions.map(\.description), ["title exists", "progress in [\"これから着手\",\"着手中\"]"])
        XCTAssertEqual(
            step.operations.map(\.name),
            ["rename", "convert", "convert", "map", "default", "drop", "collect", "spread", "backfill", "normalize-file", "move"])
        XCTAssertEqual(step.operations[0].description, "rename _createdAt -> createdAt, meta/created -> created")
        XCTAssertEqual(step.operations[2].description, "convert date from date to milliseconds (yyyy/MM/dd HH:mm:ss, Asia/Tokyo)")
        XCTAssertEqual(step.operations[0].location, PlanLocation(line: 14, column: 9))
        XCTAssertEqual(plan.steps[1].operations.map(\.name), ["delete"])
        XCTAssertEqual(plan.patterns.map(\.text), ["/v1/todolist/{id}", "/v1/todo/{id}", "/v2/todolist/{id}"])
        XCTAssertEqual(plan.warnings, [])
    }

    func testExtractBlobsIsHandedToTheBlobExtractor() throws {
        let plan = try PlanFixtures.plan(full)
        let blobs = try XCTUnwrap(plan.steps[2].extractBlobs)
        XCTAssertEqual(blobs.match, .base64)
        XCTAssertEqual(blobs.fields, [FieldPath("images")!])
        XCTAssertEqual(blobs.minBytes, 512)
        XCTAssertEqual(blobs.nameTemplate, "todolist/{id}/{sha256}.{ext}")
        XCTAssertEqual(blobs.refStyle, .saladaFile)
        XCTAssertEqual(plan.steps[2].operations.count, 0)
        let runner = PlanRunner(plans: [plan], onError: .fail)
        XCTAssertEqual(runner.blobExtractions.map(\.step.index), [3])
        XCTAssertEqual(runner.stats.steps.count, 2)
        XCTAssertEqual(
            error("name: p\nfrom: a\nto: b\nsteps:\n  - match: /x/{id}\n    ops:\n      - extract-blobs: { name: \"b/{uid}.{ext}\" }\n")?
                .description,
            "todolist.yaml:7:32: step 1: 'name' uses {uid}, which is neither a capture of the step's pattern nor one of {sha256}, {ext}, {field}, {key}, {path}, {record}"
        )
        XCTAssertNil(
            error("name: p\nfrom: a\nto: b\nsteps:\n  - match: /x/{id}\n    ops:\n      - extract-blobs: { name: \"{path}.{ext}\" }\n"))
        XCTAssertEqual(
            error("name: p\nfrom: a\nto: b\nsteps:\n  - match: /x/{id}\n    ops:\n      - extract-blobs: { name: \"{record}.{ext}\" }\n")?
                .message,
            "'name' must contain {sha256}, {key}, {field} or {path}, or every blob would get the same name")
        XCTAssertEqual(
            error("name: p\nfrom: a\nto: b\nsteps:\n  - match: /x/{id}\n    ops:\n      - extract-blobs: {}\n      - drop: a\n")?.message,
            "'extract-blobs' must be the only operation of its step (the blob extractor runs it after the migration)")
        XCTAssertEqual(
            error("name: p\nfrom: a\nto: b\nsteps:\n  - match: /x/{id}\n    ops: [extract-blobs]\n  - match: /y/{id}\n    ops: [delete]\n")?
                .message,
            "comes after the extract-blobs step 1, which runs after the migration; put extract-blobs steps last")
        XCTAssertThrowsError(try plan.reversed()) { error in
            XCTAssertTrue("\(error)".contains("cannot reverse 'extract-blobs'"), "\(error)")
        }
    }

    func testJSONPlansReadLikeYAML() throws {
        let json = """
            {
              "name": "todolist",
              "from": "v1",
              "to": "v2",
              "steps": [
                {
                  "match": "/v1/todolist/{id}",
                  "ops": [
                    { "rename": { "_createdAt": "createdAt" } },
                    { "map": { "field": "n", "values": [[1, "one"], ["1", "text"]] } },
                    { "move": "/v2/todolist/{id}" }
                  ]
                }
              ]
            }
            """
        let plan = try MigrationPlan.parse(text: json, fileName: "plan.json")
        XCTAssertEqual(plan.steps[0].operations.map(\.name), ["rename", "map", "move"])
        XCTAssertEqual(plan.steps[0].operations[2].location, PlanLocation(line: 11, column: 11))
        let bad = json.replacingOccurrences(of: "\"renam", with: "\"renam")
            .replacingOccurrences(of: "{ \"rename\"", with: "{ \"renam\"")
        XCTAssertEqual(
            error(bad, file: "plan.json")?.description, "plan.json:9:11: step 1: unknown operation 'renam' (did you mean 'rename'?)")
        XCTAssertEqual(error("{\"name\": \"x\",\n  \"from\": 1,,}", file: "plan.json")?.line, 2)
    }

    func testUnknownOperationNamesFileLineColumnAndStep() {
        let yaml = """
            name: todolist
            from: v1
            to: v2
            steps:
              - name: first
                match: /v1/a/{id}
                ops:
                  - drop: x
              - name: todolist
                match: /v1/todolist/{id}
                ops:
                  - renam: { a: b }
            """
        XCTAssertEqual(
            error(yaml)?.description, "todolist.yaml:12:9: step 2 ('todolist'): unknown operation 'renam' (did you mean 'rename'?)")
    }

    func testBrokenYAMLReportsItsPosition() {
        let e = error("name: x\nfrom: v1\nto: v2\nsteps:\n  - match: /a/{id}\n    ops: [drop: a\n")
        XCTAssertEqual(e?.file, "todolist.yaml")
        XCTAssertNotNil(e?.line)
        XCTAssertTrue(e?.message.hasPrefix("YAML: ") ?? false, "\(String(describing: e))")
        XCTAssertEqual(error("")?.message, "the plan is empty")
        XCTAssertEqual(error("name: x\nname: y\n")?.description, "todolist.yaml:1:1: YAML: duplicate key 'name'")
        XCTAssertEqual(error("- a\n- b\n")?.message, "a plan must be a mapping, not a list")
    }

    /// "Billion laughs": nine levels of nine aliases would expand to 9^9 nodes (gigabytes); the plan is
    /// refused once it passes its node budget. Aliases that expand modestly still load.
    func testAliasBombsAreRefused() throws {
        var yaml = "name: laughs\nfrom: v1\nto: v2\nlol0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
        for level in 1...8 {
            yaml += "lol\(level): &l\(level) [" + Array(repeating: "*l\(level - 1)", count: 9).joined(separator: ", ") + "]\n"
        }
        yaml += "steps:\n  - match: /a/{id}\n    ops: [delete]\n"
        XCTAssertLessThan(yaml.utf8.count, 600)
        let e = error(yaml)
        let limit = PlanNode.maxNodes(forBytes: yaml.utf8.count)
        XCTAssertEqual(e?.message, "YAML: the plan has more than \(limit) nodes with its aliases expanded (an alias bomb?)")
        XCTAssertEqual(e?.file, "todolist.yaml")
        XCTAssertNotNil(e?.line)

        let shared =
            "name: x\nfrom: v1\nto: v2\nsteps:\n  - match: /a/{id}\n    ops:\n      - default: &d { x: 1, y: 2 }\n"
            + "  - match: /b/{id}\n    ops:\n      - default: *d\n"
        XCTAssertNil(error(shared))
    }

    func testBadOptionsNameTheOptionAndItsPosition() {
        func op(_ text: String) -> String? {
            error("name: x\nfrom: v1\nto: v2\nsteps:\n  - name: s\n    match: /a/{id}\n    ops:\n      - \(text)\n")?.description
        }
        let at = "todolist.yaml:8"
        XCTAssertEqual(op("convert: { field: n, to: 5 }"), "\(at):34: step 1 ('s'): 'to' must be a string, not an integer")
        XCTAssertEqual(
            op("convert: { field: n, to: integr }"),
            "\(at):34: step 1 ('s'): 'to' must be one of 'string', 'number', 'integer', 'boolean', 'date', 'seconds', 'milliseconds', not 'integr' (did you mean 'integer'?)"
        )
        XCTAssertEqual(
            op("convert: { field: n, to: integer, exact: yes }"), "\(at):50: step 1 ('s'): 'exact' must be true or false, not a string")
        XCTAssertEqual(
            op("convert: { feild: n, to: integer }"),
            "\(at):20: step 1 ('s'): unknown option 'feild' for 'convert' (it takes field, from, to, format, time-zone, exact) (did you mean 'field'?)"
        )
        XCTAssertEqual(op("convert: { to: integer }"), "\(at):18: step 1 ('s'): 'convert' needs the option 'field'")
        XCTAssertEqual(
            op("convert: { field: n, from: number, to: date }"),
            "\(at):18: step 1 ('s'): cannot convert number to date (number converts to string)")
        XCTAssertEqual(
            op("convert: { field: d, from: date, to: seconds }"),
            "\(at):18: step 1 ('s'): date conversions need 'format' (e.g. \"yyyy/MM/dd HH:mm:ss\") and 'time-zone' (e.g. Asia/Tokyo)")
        XCTAssertEqual(
            op("convert: { field: d, from: date, to: seconds, format: yyyy/MM/dd, time-zone: Mars/Olympus }"),
            "\(at):63: step 1 ('s'): unknown time zone 'Mars/Olympus' (use an IANA name such as Asia/Tokyo, UTC, or an offset such as +09:00)"
        )
        XCTAssertEqual(
            op("convert: { field: d, from: date, to: seconds, format: yyyy/MM/dd hh, time-zone: UTC }"),
            "\(at):63: step 1 ('s'): unsupported field 'hh' in date format 'yyyy/MM/dd hh' (use yyyy MM M dd d HH H mm ss SSS XXX, and quotes for literal letters)"
        )
        XCTAssertEqual(
            op("convert: { field: n, to: integer, format: x }"),
            "\(at):51: step 1 ('s'): 'format' and 'time-zone' only apply to conversions from or to date")
        XCTAssertEqual(
            op("map: { field: p, values: done }"),
            "\(at):34: step 1 ('s'): 'values' must be a mapping (from: to) or a list of [from, to] pairs")
        XCTAssertEqual(
            op("map: { field: p, values: { a: x, b: y }, unmapped: default }"),
            "\(at):14: step 1 ('s'): 'unmapped: default' needs the option 'default' (the value to use)")
        XCTAssertEqual(op("rename: [a, b]"), "\(at):17: step 1 ('s'): the fields of 'rename' (old: new) must be a mapping, not a list")
        XCTAssertEqual(op("rename: { a: a/b }"), "\(at):19: step 1 ('s'): cannot rename 'a' to 'a/b': one contains the other")
        XCTAssertEqual(
            op("drop: [a, '']"),
            "\(at):19: step 1 ('s'): each item of the fields of 'drop' '' is not a field path (keys separated by '/', none empty)")
        XCTAssertEqual(op("default: { a: null }"), "\(at):23: step 1 ('s'): the default of 'a' is null, which the database cannot hold")
        XCTAssertEqual(
            op("collect: { fields: [a, a], into: b }"), "\(at):28: step 1 ('s'): 'a' is listed twice or inside another listed field")
        XCTAssertEqual(
            op("backfill: { field: c, unit: hours }"),
            "\(at):37: step 1 ('s'): 'unit' must be one of 'milliseconds', 'seconds', not 'hours'")
        XCTAssertEqual(
            op("normalize-file: { field: f, shape: url }"),
            "\(at):44: step 1 ('s'): 'shape' must be one of 'object', 'name', 'bare-names', not 'url'")
        XCTAssertEqual(
            op("move: /b/{other}"), "\(at):15: step 1 ('s'): the target uses {other}, which the pattern /a/{id} does not capture")
        XCTAssertEqual(op("move: /b/*"), "\(at):15: step 1 ('s'): a move target cannot contain '*': it must name one path")
        XCTAssertEqual(
            op("extract-blobs: { min-bytes: -1 }"),
            "\(at):37: step 1 ('s'): 'min-bytes' must be a whole number of at least 0, not an integer '-1'")
        XCTAssertEqual(
            op("[drop, a]"),
            "\(at):9: step 1 ('s'): an operation is a mapping of one key, its name, to its options (e.g. '- rename: { old: new }'), not a list"
        )
    }

    func testBadStepsAndPlans() {
        let head = "name: x\nfrom: v1\nto: v2\n"
        XCTAssertEqual(error("name: x\nto: v2\nsteps: []\n")?.description, "todolist.yaml:1:1: a plan needs 'from'")
        XCTAssertEqual(error(head + "steps: []\n")?.description, "todolist.yaml:4:8: 'steps' must not be empty")
        XCTAssertEqual(
            error(head + "stpes: []\n")?.description,
            "todolist.yaml:4:1: unknown key 'stpes' in a plan (a plan has name, description, from, to, steps) (did you mean 'steps'?)")
        XCTAssertEqual(
            error(head + "steps:\n  - ops: [delete]\n")?.description,
            "todolist.yaml:5:5: step 1: a step needs 'match' (a path pattern or a list of them)")
        XCTAssertEqual(
            error(head + "steps:\n  - match: v1/a\n    ops: [delete]\n")?.description,
            "todolist.yaml:5:12: step 1: invalid path pattern 'v1/a': a pattern starts with '/'")
        XCTAssertEqual(
            error(head + "steps:\n  - match: /a//b\n    ops: [delete]\n")?.message, "invalid path pattern '/a//b': empty segment")
        XCTAssertEqual(error(head + "steps:\n  - match: /a/{id}\n    ops: []\n")?.message, "'ops' must not be empty")
        XCTAssertEqual(
            error(head + "steps:\n  - match: /a/{id}\n    op: [delete]\n")?.message,
            "unknown key 'op' in a step (a step has name, match, where, ops, inverse) (did you mean 'ops'?)")
        XCTAssertEqual(
            error(head + "steps:\n  - match: /a/{id}\n    where: { a: { like: x } }\n    ops: [delete]\n")?.message,
            "unknown option 'like' for 'where a' (it takes equals, exists, in, matches, type)")
        XCTAssertEqual(error(head + "steps:\n  - match: /a/{id}\n    where: { a: { matches: '(' } }\n    ops: [delete]\n")?.line, 6)
        XCTAssertEqual(
            error(head + "steps:\n  - match: /a/{id}\n    ops: [delete]\n    inverse: [extract-blobs]\n")?.message,
            "'extract-blobs' cannot be part of an 'inverse'")
    }

    func testYAMLScalarsFollowTheCoreSchema() throws {
        let plan = try PlanFixtures.plan(
            """
            name: x
            from: 1
            to: 2
            steps:
              - match: /a/{id}
                ops:
                  - map: { field: answer, values: { yes: true, no: false, on: 1, 2016-12-27: date, 007: seven } }
            """)
        XCTAssertEqual(plan.from, "1")
        let map = try XCTUnwrap(plan.steps[0].operations[0] as? MapOperation)
        XCTAssertEqual(map.table.map(\.from), [.string("yes"), .string("no"), .string("on"), .string("2016-12-27"), .number("7")])
        XCTAssertEqual(map.table.map(\.to), [.bool(true), .bool(false), .number("1"), .string("date"), .string("seven")])
        XCTAssertEqual(
            error("name: x\nfrom: a\nto: b\nsteps:\n  - match: /a/{id}\n    ops:\n      - default: { a: .inf }\n")?.message,
            "'.inf' is not a number JSON can hold")
    }

    func testWarningsForStepsThatCanNeverMatch() throws {
        let plan = try PlanFixtures.plan(
            """
            name: x
            from: v1
            to: v2
            steps:
              - name: move
                match: /v1/todo/{id}
                ops: [{ move: "/v2/todo/{id}" }]
              - name: shadowed
                match: /v1/todo/{id}
                ops: [{ drop: a }]
              - name: inside
                match: /v2/todo/{id}/images
                ops: [{ drop: a }]
              - name: dotted
                match: /v1/todo.list/{id}
                ops: [delete]
              - name: after move
                match: /v2/todo/{id}
                ops: [{ drop: b }]
                inverse: []
              - name: moved back
                match: /v3/{id}
                ops: [{ move: "/v4/{id}" }]
                inverse: [{ drop: c }]
            """)
        XCTAssertEqual(
            plan.warnings,
            [
                "test.yaml:14:5: step 4 ('dotted'): /v1/todo.list/{id} can never match: the key 'todo.list' has a character the Realtime Database forbids in keys (. $ # [ ] / or a control character)",
                "test.yaml:14:5: step 4 ('dotted'): 'delete' without 'where' deletes every record the step matches",
                "test.yaml:21:5: step 6 ('moved back'): the stated 'inverse' has no 'move', so reversed records stay at /v4/{id}",
                "test.yaml:8:5: step 2 ('shadowed'): /v1/todo/{id} can never match anything: step 1 ('move') moves or deletes every record there first, and no step moves records there",
                "test.yaml:11:5: step 3 ('inside'): /v2/todo/{id}/images lies inside /v2/todo/{id}, where step 1 ('move') moves whole records, so this step never sees them",
            ])
        XCTAssertEqual(PlanRunner(plans: [plan], onError: .fail).warnings, plan.warnings)
    }

    func testLoadReadsFilesAndReportsMissingOnes() throws {
        let plan = try MigrationPlan.load(path: PlanFixtures.path("schemas/todolist/plan.yaml"))
        XCTAssertEqual(plan.sourceFile, PlanFixtures.path("schemas/todolist/plan.yaml"))
        XCTAssertEqual(plan.steps[0].name, "todolist")
        XCTAssertThrowsError(try MigrationPlan.load(path: "/nonexistent/plan.yaml")) { error in
            XCTAssertTrue("\(error)".hasPrefix("/nonexistent/plan.yaml: cannot read the plan"), "\(error)")
        }
    }

    func testDateTemplatesReadAndWriteExactly() throws {
        let t = try DateTemplate(format: "yyyy/M/d H:mm", timeZone: "-05:00")
        XCTAssertEqual(t.milliseconds(from: "2017/3/9 7:05"), 1_489_061_100_000)
        XCTAssertEqual(t.string(fromMilliseconds: 1_489_061_100_000), "2017/3/9 7:05")
        XCTAssertNil(t.milliseconds(from: "2017/03/09 7:05"), "zero-padded text would not write back the same")
        XCTAssertNil(t.milliseconds(from: "2017/3/9 7:05 "))
        let quoted = try DateTemplate(format: "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'", timeZone: "UTC")
        XCTAssertEqual(quoted.milliseconds(from: "1969-12-31T23:59:59.999Z"), -1)
        XCTAssertEqual(quoted.string(fromMilliseconds: -1), "1969-12-31T23:59:59.999Z")
        XCTAssertEqual(quoted.milliseconds(from: "2016-02-29T00:00:00.000Z"), 1_456_704_000_000)
        XCTAssertNil(quoted.milliseconds(from: "2017-02-29T00:00:00.000Z"))
        // ISO 8601 with an offset: the text's offset decides the instant; the zone's is written.
        let iso = try DateTemplate(format: "yyyy-MM-dd'T'HH:mm:ssXXX", timeZone: "Asia/Tokyo")
        XCTAssertEqual(iso.milliseconds(from: "2016-12-14T10:30:00+09:00"), 1_481_679_000_000)
        XCTAssertEqual(iso.milliseconds(from: "2016-12-14T01:30:00Z"), 1_481_679_000_000)
        XCTAssertEqual(iso.milliseconds(from: "2016-12-13T20:30:00-05:00"), 1_481_679_000_000)
        XCTAssertEqual(iso.string(fromMilliseconds: 1_481_679_000_000), "2016-12-14T10:30:00+09:00")
        XCTAssertEqual(
            try DateTemplate(format: "yyyy-MM-dd'T'HH:mm:ssXXX", timeZone: "UTC").string(fromMilliseconds: 0), "1970-01-01T00:00:00Z")
        XCTAssertNil(iso.milliseconds(from: "2016-12-14T10:30:00+0900"))
        XCTAssertNil(iso.milliseconds(from: "2016-12-14T10:30:00"))
        XCTAssertThrowsError(try DateTemplate(format: "MM/dd", timeZone: "UTC"))
        XCTAssertThrowsError(try DateTemplate(format: "yyyy/MM/dd 'T", timeZone: "UTC"))
    }

    func testFieldPaths() throws {
        XCTAssertEqual(FieldPath("meta/created")?.segments, ["meta", "created"])
        XCTAssertEqual(FieldPath("a~1b/c~0d")?.segments, ["a/b", "c~d"])
        XCTAssertEqual(FieldPath("a~1b")?.description, "a~1b")
        XCTAssertNil(FieldPath(""))
        XCTAssertNil(FieldPath("a//b"))
        XCTAssertTrue(FieldPath("a")!.overlaps(FieldPath("a/b")!))
        XCTAssertFalse(FieldPath("a")!.overlaps(FieldPath("ab")!))
    }
}
