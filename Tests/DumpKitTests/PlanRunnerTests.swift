import JSONStream
import XCTest

@testable import DumpKit

/// Every operation, the on-error policies, conditions, stats and reversal, on single records.
final class PlanRunnerTests: XCTestCase {
    /// A one-step plan over `/items/{id}` with the given operations (YAML list items) and `where`.
    private func plan(_ ops: String, where conditions: String? = nil, match: String = "/items/{id}", inverse: String? = nil) throws
        -> MigrationPlan
    {
        var yaml = "name: t\nfrom: v1\nto: v2\nsteps:\n  - name: s\n    match: \(match)\n"
        if let conditions { yaml += "    where: \(conditions)\n" }
        yaml += "    ops:\n" + ops.split(separator: "\n").map { "      " + $0 }.joined(separator: "\n") + "\n"
        if let inverse { yaml += "    inverse:\n" + inverse.split(separator: "\n").map { "      " + $0 }.joined(separator: "\n") + "\n" }
        return try PlanFixtures.plan(yaml)
    }

    /// Runs `ops` on one record at `/items/<key>` and returns the result.
    private func run(
        _ ops: String, _ json: String, key: String = "-KZy__8VkJ6DHmJYPkt0", policy: OnErrorPolicy = .keep, where conditions: String? = nil
    ) throws -> MigrationResult {
        let runner = PlanRunner(plans: [try plan(ops, where: conditions)], onError: policy)
        return try runner.apply(Record(path: ["items", key], value: try PlanFixtures.json(json)))
    }

    /// The compact JSON of the single output record.
    private func output(_ r: MigrationResult) -> String? { r.records.first?.value?.compactText }

    // MARK: - reject pointers

    func testARejectNamesTheValueInTheInputAndInTheOutput() throws {
        // Renamed, then moved by a second plan that renames it again: the value's input pointer
        // has its old name under the record's old path, the output pointer the new ones.
        let first = try plan("- rename: { photo_count: count }\n- convert: { field: count, from: string, to: integer }")
        let second = try PlanFixtures.plan(
            "name: u\nfrom: v2\nto: v3\nsteps:\n  - match: /items/{id}\n    ops:\n      - rename: { count: photoCount }\n      - move: /v3/items/{id}\n"
        )
        let runner = PlanRunner(plans: [first, second], onError: .keep)
        let r = try runner.apply(Record(path: ["items", "k"], value: try PlanFixtures.json(#"{"photo_count":"two"}"#)))
        XCTAssertEqual(r.rejects.map(\.pointer), ["/items/k/photo_count"])
        XCTAssertEqual(r.rejects.map(\.outputPointer), ["/v3/items/k/photoCount"])
        // Collected fields are named by the field they came from; a deleted record has no output pointer.
        let collected = try run(
            "- collect: { fields: [a, b], into: list }\n- map: { field: list/1, values: { x: y }, unmapped: fail }", #"{"a":"x","b":"z"}"#)
        XCTAssertEqual(collected.rejects.map(\.pointer), ["/items/-KZy__8VkJ6DHmJYPkt0/b"])
        XCTAssertEqual(collected.rejects.map(\.outputPointer), ["/items/-KZy__8VkJ6DHmJYPkt0/list/1"])
        let skipped = try run("- convert: { field: n, from: string, to: integer }", #"{"n":"x"}"#, policy: .skip)
        XCTAssertEqual(skipped.rejects.map(\.outputPointer), ["/items/-KZy__8VkJ6DHmJYPkt0/n"])
        let spread = try run(
            "- spread: { field: list, into: [a, b] }\n- convert: { field: b, from: string, to: integer }", #"{"list":["1","x"]}"#)
        XCTAssertEqual(spread.rejects.map(\.pointer), ["/items/-KZy__8VkJ6DHmJYPkt0/list/1"])
        XCTAssertEqual(spread.rejects.map(\.outputPointer), ["/items/-KZy__8VkJ6DHmJYPkt0/b"])
    }

    // MARK: - rename

    func testRenameKeepsPositionAndMovesNestedFields() throws {
        let r = try run("- rename: { b: beta, meta/created: createdAt }", #"{"a":1,"b":2,"meta":{"created":5,"by":"x"},"z":0}"#)
        XCTAssertEqual(output(r), #"{"a":1,"beta":2,"meta":{"by":"x"},"z":0,"createdAt":5}"#)
        let emptied = try run("- rename: { meta/created: createdAt }", #"{"meta":{"created":5}}"#)
        XCTAssertEqual(output(emptied), #"{"createdAt":5}"#)
        let missing = try run("- rename: { nope: other }", #"{"a":1}"#)
        XCTAssertFalse(try XCTUnwrap(missing.matched ? missing : nil).records.first!.value != .object(["a": .number("1")]))
    }

    func testRenameOntoAnExistingFieldIsABadValue() throws {
        let r = try run("- rename: { a: b }", #"{"a":1,"b":2}"#)
        XCTAssertEqual(output(r), #"{"a":1,"b":2}"#)
        XCTAssertEqual(r.rejects.map(\.pointer), ["/items/-KZy__8VkJ6DHmJYPkt0/a"])
        XCTAssertTrue(r.rejects[0].reason.contains("'b' already exists"), r.rejects[0].reason)
        let skipped = try run("- rename: { a: b }", #"{"a":1,"b":2}"#, policy: .skip)
        XCTAssertEqual(output(skipped), #"{"b":2}"#)
        let nested = try run("- rename: { a: s/x }", #"{"a":1,"s":"text"}"#)
        XCTAssertEqual(nested.rejects.first?.pointer, "/items/-KZy__8VkJ6DHmJYPkt0/s")
        XCTAssertEqual(output(nested), #"{"a":1,"s":"text"}"#)
    }

    // MARK: - convert

    func testConvertStringsToNumbersExactly() throws {
        let r = try run(
            "- convert: { field: [n, i, f], to: integer }\n- convert: { field: d, to: number }",
            #"{"n":"12","i":"007","f":"1.5","d":"1.50"}"#)
        XCTAssertEqual(output(r), #"{"n":12,"i":"007","f":"1.5","d":1.50}"#)
        XCTAssertEqual(r.rejects.map(\.pointer), ["/items/-KZy__8VkJ6DHmJYPkt0/i", "/items/-KZy__8VkJ6DHmJYPkt0/f"])
        XCTAssertTrue(r.rejects[0].reason.contains(#""007" would come back as "7""#), r.rejects[0].reason)
        XCTAssertTrue(r.rejects[1].reason.contains("not a whole number"), r.rejects[1].reason)
        let loose = try run("- convert: { field: i, to: integer, exact: false }", #"{"i":" 007"}"#)
        XCTAssertEqual(output(loose), #"{"i":7}"#)
    }

    func testConvertBetweenStringsBooleansAndNumbers() throws {
        let r = try run(
            """
            - convert: { field: n, from: number, to: string }
            - convert: { field: b, to: boolean }
            - convert: { field: t, from: boolean, to: integer }
            - convert: { field: c, from: integer, to: boolean }
            - convert: { field: s, from: boolean, to: string }
            """, #"{"n":1e3,"b":"false","t":true,"c":0,"s":false}"#)
        XCTAssertEqual(output(r), #"{"n":"1e3","b":false,"t":1,"c":false,"s":"false"}"#)
        let yes = try run("- convert: { field: b, to: boolean }", #"{"b":"yes"}"#)
        XCTAssertEqual(yes.rejects.count, 1)
        let wrongType = try run("- convert: { field: b, to: integer }", #"{"b":3}"#)
        XCTAssertTrue(wrongType.rejects[0].reason.contains("expected a string"), wrongType.rejects[0].reason)
    }

    func testConvertSecondsAndMillisecondsWithoutRounding() throws {
        let r = try run(
            "- convert: { field: [s, t], from: seconds, to: milliseconds }\n- convert: { field: ms, from: milliseconds, to: seconds }",
            #"{"s":1482814956.123,"t":1482814956.1234,"ms":1482814956123}"#)
        XCTAssertEqual(output(r), #"{"s":1482814956123,"t":1482814956.1234,"ms":1482814956.123}"#)
        XCTAssertEqual(r.rejects.map(\.pointer), ["/items/-KZy__8VkJ6DHmJYPkt0/t"])
        let rounded = try run("- convert: { field: t, from: seconds, to: milliseconds, exact: false }", #"{"t":1482814956.1235}"#)
        XCTAssertEqual(output(rounded), #"{"t":1482814956124}"#)
    }

    func testConvertJapanTimeDatesToMillisecondsAndBack() throws {
        let ops = "- convert: { field: date, from: date, to: milliseconds, format: \"yyyy/MM/dd HH:mm:ss\", time-zone: Asia/Tokyo }"
        let r = try run(ops, #"{"date":"2016/12/27 13:42:36"}"#)
        XCTAssertEqual(output(r), #"{"date":1482813756000}"#)
        for bad in ["2016/12/27 13:42", "2016/02/30 10:00:00", "2016/1/27 13:42:36", "2016/12/27 24:00:00"] {
            XCTAssertEqual(try run(ops, #"{"date":"\#(bad)"}"#).rejects.count, 1, bad)
        }
        let back = try run(
            "- convert: { field: date, from: milliseconds, to: date, format: \"yyyy/MM/dd HH:mm:ss\", time-zone: \"+09:00\" }",
            #"{"date":1482813756000}"#)
        XCTAssertEqual(output(back), #"{"date":"2016/12/27 13:42:36"}"#)
        let fraction = try run(
            "- convert: { field: date, from: milliseconds, to: date, format: \"yyyy-MM-dd'T'HH:mm:ss\", time-zone: UTC }",
            #"{"date":1482813756500}"#)
        XCTAssertEqual(fraction.rejects.count, 1, "the format has no SSS, so 500 ms would be lost")
        let withMillis = try run(
            "- convert: { field: date, from: date, to: seconds, format: \"yyyy-MM-dd'T'HH:mm:ss.SSS\", time-zone: UTC }",
            #"{"date":"2016-12-27T04:42:36.500"}"#)
        XCTAssertEqual(output(withMillis), #"{"date":1482813756.5}"#)
    }

    func testDaylightSavingGapsAreBadValues() throws {
        let ops = "- convert: { field: d, from: date, to: milliseconds, format: \"yyyy-MM-dd HH:mm\", time-zone: America/New_York }"
        XCTAssertEqual(output(try run(ops, #"{"d":"2017-03-12 01:30"}"#)), #"{"d":1489300200000}"#)
        XCTAssertEqual(try run(ops, #"{"d":"2017-03-12 02:30"}"#).rejects.count, 1, "02:30 did not exist that night")
        XCTAssertEqual(output(try run(ops, #"{"d":"2017-07-01 12:00"}"#)), #"{"d":1498924800000}"#)
    }

    // MARK: - map

    func testMapWithEachUnmappedRule() throws {
        let table = "values: { これから着手: todo, 着手中: doing, 完了: done }"
        XCTAssertEqual(output(try run("- map: { field: p, \(table) }", #"{"p":"着手中"}"#)), #"{"p":"doing"}"#)
        let failing = try run("- map: { field: p, \(table) }", #"{"p":"保留"}"#)
        XCTAssertEqual(failing.rejects.first?.reason, #""保留" is not in the table of 'map'"#)
        XCTAssertEqual(try run("- map: { field: p, \(table), unmapped: keep }", #"{"p":"保留"}"#).rejects, [])
        let collision = try run("- map: { field: p, \(table), unmapped: keep }", #"{"p":"done"}"#)
        XCTAssertEqual(collision.rejects.count, 1, "an unmapped 'done' would become 完了 when reversed")
        XCTAssertEqual(output(try run("- map: { field: p, \(table), unmapped: default, default: todo }", #"{"p":"保留"}"#)), #"{"p":"todo"}"#)
        XCTAssertEqual(output(try run("- map: { field: n, values: [[1, high], [\"1\", text]] }", #"{"n":1.0}"#)), #"{"n":"high"}"#)
    }

    // MARK: - default, drop, delete

    func testDefaultDropAndDelete() throws {
        XCTAssertEqual(
            output(try run("- default: { completed: false, a: 9, meta/tags: [x] }", #"{"a":1}"#)),
            #"{"a":1,"completed":false,"meta":{"tags":["x"]}}"#)
        XCTAssertEqual(output(try run("- drop: [a, meta/tmp]", #"{"a":1,"meta":{"tmp":2},"b":3}"#)), #"{"b":3}"#)
        let deleted = try run("- delete", #"{"spam":true}"#, where: "{ spam: true }")
        XCTAssertEqual(deleted.records, [])
        XCTAssertTrue(deleted.matched)
        let kept = try run("- delete", #"{"spam":false}"#, where: "{ spam: true }")
        XCTAssertFalse(kept.matched)
        XCTAssertEqual(output(kept), #"{"spam":false}"#)
    }

    func testDefaultOnARecordThatIsNotAnObject() throws {
        let kept = try run("- default: { completed: false }", #""buy milk""#)
        XCTAssertEqual(output(kept), #""buy milk""#)
        XCTAssertEqual(kept.rejects.first?.pointer, "/items/-KZy__8VkJ6DHmJYPkt0")
        XCTAssertEqual(try run("- default: { completed: false }", #""buy milk""#, policy: .skip).records, [])
        XCTAssertThrowsError(try run("- default: { completed: false }", #""buy milk""#, policy: .fail)) { error in
            XCTAssertEqual((error as? MigrationError)?.pointer, "/items/-KZy__8VkJ6DHmJYPkt0")
            XCTAssertEqual((error as? MigrationError)?.value, .string("buy milk"))
        }
    }

    // MARK: - collect and spread

    func testCollectSkipsMissingTrailingFieldsAndRefusesGaps() throws {
        let ops = "- collect: { fields: [image1, image2, image3], into: images }"
        XCTAssertEqual(output(try run(ops, #"{"image1":"a","t":1,"image2":"b"}"#)), #"{"t":1,"images":["a","b"]}"#)
        XCTAssertEqual(output(try run(ops, #"{"t":1}"#)), #"{"t":1}"#)
        let gap = try run(ops, #"{"image2":"b"}"#)
        XCTAssertEqual(output(gap), #"{"image2":"b"}"#)
        XCTAssertEqual(gap.rejects.first?.value, .object(["image2": .string("b")]))
        XCTAssertEqual(output(try run(ops, #"{"image2":"b","x":0}"#, policy: .skip)), #"{"x":0}"#)
        XCTAssertEqual(output(try run("- collect: { fields: [a, b], into: l, exact: false }", #"{"b":2}"#)), #"{"l":[2]}"#)
    }

    func testSpreadIsTheInverseOfCollect() throws {
        let ops = "- spread: { field: images, into: [image1, image2, image3] }"
        XCTAssertEqual(output(try run(ops, #"{"images":["a","b"],"t":1}"#)), #"{"t":1,"image1":"a","image2":"b"}"#)
        XCTAssertEqual(try run(ops, #"{"images":["a","b","c","d"]}"#).rejects.count, 1)
        XCTAssertEqual(try run(ops, #"{"images":[null,"b"]}"#).rejects.count, 1)
        XCTAssertEqual(try run(ops, #"{"images":"a"}"#).rejects.count, 1)
        XCTAssertEqual(try run(ops, #"{"images":["a"],"image1":"x"}"#).rejects.count, 1)
    }

    // MARK: - backfill

    func testBackfillReadsThePushIDTime() throws {
        // "-KZy__8V" encodes 1482813756000 ms (2016-12-27 04:42:36 UTC).
        XCTAssertEqual(output(try run("- backfill: { field: createdAt }", #"{"t":"x"}"#)), #"{"t":"x","createdAt":1482813756000}"#)
        XCTAssertEqual(
            output(try run("- backfill: { field: createdAt, unit: seconds }", #"{"t":"x"}"#)), #"{"t":"x","createdAt":1482813756}"#)
        XCTAssertEqual(output(try run("- backfill: { field: createdAt }", #"{"createdAt":5}"#)), #"{"createdAt":5}"#)
        let notPushID = try run("- backfill: { field: createdAt }", #"{"t":"x"}"#, key: "first-item")
        XCTAssertEqual(notPushID.rejects.first?.pointer, "/items/first-item/createdAt")
        XCTAssertEqual(notPushID.rejects.first?.value, .string("first-item"))
    }

    func testPushIDTimestamps() {
        XCTAssertEqual(PushID.timestamp("-KZy__8VkJ6DHmJYPkt0"), 1_482_813_756_000)
        XCTAssertEqual(PushID.timestamp("--------------------"), 0)
        XCTAssertNil(PushID.timestamp("-KZy__8VkJ6DHmJYPkt"))
        XCTAssertNil(PushID.timestamp("-KZn2mFAkJ6DHmJYPk.0"))
    }

    // MARK: - normalize-file

    func testNormalizeFileValuesOfBothEras() throws {
        let ops = "- normalize-file: { field: images, shape: object, restore: true }"
        let r = try run(
            ops,
            #"{"images":["1482814956123",{"name":"a.jpg","url":"https://x/a","mimeType":"image/jpeg"},"data:image/png;base64,iVBORw0KGgo=",{"name":"b.jpg","mimeType":"image/jpeg"}]}"#
        )
        XCTAssertEqual(
            output(r),
            #"{"images":[{"name":"1482814956123"},{"name":"a.jpg","url":"https://x/a","mimeType":"image/jpeg"},"data:image/png;base64,iVBORw0KGgo=",{"name":"b.jpg","mimeType":"image/jpeg"}]}"#
        )
        XCTAssertEqual(r.rejects, [])
        let nameOnly = try run(ops, #"{"images":[{"name":"c.jpg"},7]}"#)
        XCTAssertEqual(nameOnly.rejects.map(\.pointer), ["/items/-KZy__8VkJ6DHmJYPkt0/images/0", "/items/-KZy__8VkJ6DHmJYPkt0/images/1"])
        XCTAssertEqual(output(try run(ops, #"{"images":[{"name":"c.jpg"},"d"]}"#, policy: .skip)), #"{"images":[{"name":"d"}]}"#)
        XCTAssertEqual(
            output(try run("- normalize-file: { field: photo, shape: name }", #"{"photo":{"name":"a.jpg","url":"u"}}"#)),
            #"{"photo":"a.jpg"}"#)
    }

    // MARK: - move and chains

    func testMoveUsesCapturesAndChainsRunInOrder() throws {
        let v1 = try PlanFixtures.plan(
            """
            name: a
            from: v1
            to: v2
            steps:
              - match: /v1/todolist/{id}
                ops: [{ rename: { _createdAt: createdAt } }, { move: "/v2/todolist/{id}" }]
              - match: /v2/todolist/{id}
                ops: [{ default: { done: false } }]
            """)
        let v2 = try PlanFixtures.plan(
            """
            name: b
            from: v2
            to: v3
            steps:
              - match: /v2/todolist/{id}
                ops: [{ move: "/v3/users/all/todos/{id}" }]
            """)
        let runner = PlanRunner(plans: [v1, v2], onError: .fail)
        XCTAssertEqual(runner.patterns.map(\.text), ["/v1/todolist/{id}", "/v2/todolist/{id}"])
        XCTAssertEqual(runner.warnings, [])
        let r = try runner.apply(Record(path: ["v1", "todolist", "-K1"], value: .object(["_createdAt": .number("5")])))
        XCTAssertEqual(r.records.map(\.path), [["v3", "users", "all", "todos", "-K1"]])
        XCTAssertEqual(output(r), #"{"createdAt":5,"done":false}"#)
        XCTAssertNil(r.inPlace)
        XCTAssertEqual(r.moved.count, 1)
        XCTAssertEqual(runner.stats.steps.map(\.matched), [1, 1, 1])
        let untouched = try runner.apply(Record(path: ["other", "x"], value: .bool(true)))
        XCTAssertFalse(untouched.matched)
        XCTAssertEqual(untouched.inPlace, .bool(true))
        XCTAssertEqual(runner.stats.records, 2)
        XCTAssertEqual(runner.stats.moved, 1)

        let broken = PlanRunner(plans: [v2, v1], onError: .fail)
        XCTAssertEqual(broken.warnings, ["test.yaml: plan 'a' starts at v1 but the plan before it ends at v3"])
    }

    // MARK: - where

    func testWhereConditions() throws {
        let record = #"{"kind":"note","n":3,"s":"2016/12/27","tags":["a"]}"#
        let cases: [(String, Bool)] = [
            ("{ kind: note }", true), ("{ kind: { equals: memo } }", false), ("{ n: { equals: 3.0 } }", true),
            ("{ kind: { in: [memo, note] } }", true), ("{ gone: { exists: false } }", true), ("{ kind: { exists: false } }", false),
            (#"{ s: { matches: '^\d{4}/' } }"#, true), (#"{ n: { matches: '3' } }"#, false), ("{ n: { type: integer } }", true),
            ("{ tags: { type: array } }", true), ("{ kind: { type: string, equals: note } }", true), ("{ kind: note, n: 4 }", false),
        ]
        for (condition, expected) in cases {
            XCTAssertEqual(try run("- default: { x: 1 }", record, where: condition).matched, expected, condition)
        }
    }

    /// `matches` is ECMA-262, matched by the engine schemas and rules use: `\d` is ASCII, and a
    /// pathological pattern is decided in linear time.
    func testWhereMatchesUsesTheSharedEngine() throws {
        let cases: [(String, String, Bool)] = [
            (#"'^\d+$'"#, "৪", false), (#"'^\p{Nd}+$'"#, "৪", true), ("'^(a+)+$'", String(repeating: "a", count: 10_000) + "!", false),
            ("'(a|aa)+$'", String(repeating: "a", count: 10_000), true),
        ]
        for (pattern, value, expected) in cases {
            let r = try run("- default: { x: 1 }", #"{"s":"\#(value)"}"#, where: "{ s: { matches: \(pattern) } }")
            XCTAssertEqual(r.matched, expected, pattern)
        }
        XCTAssertThrowsError(try plan("- delete", where: "{ s: { matches: '(?i)abc' } }"))
    }

    /// A `where` that cannot be decided within the step budget neither applies the step nor passes
    /// silently: the record is a reject named `where` (and under `fail`, an error).
    func testWhereOverBudgetIsAReject() throws {
        let record = #"{"s":"\#(String(repeating: "a", count: 30))!"}"#
        let r = try run("- default: { x: 1 }", record, where: #"{ s: { matches: '^(a+)+\1$' } }"#)
        XCTAssertFalse(r.matched)
        XCTAssertEqual(output(r), #"{"s":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!"}"#)
        let reject = try XCTUnwrap(r.rejects.first)
        XCTAssertEqual(reject.operation, "where")
        XCTAssertEqual(reject.pointer, "/items/-KZy__8VkJ6DHmJYPkt0")
        let reason = #"'s' matches /^(a+)+\1$/ needs more than 1001984 steps on this 31-byte string"#
        XCTAssertTrue(reject.reason.hasPrefix(reason), reject.reason)
        XCTAssertThrowsError(try run("- default: { x: 1 }", record, policy: .fail, where: #"{ s: { matches: '^(a+)+\1$' } }"#))
    }

    // MARK: - policies, stats and rejects

    func testRejectsCarryStepAndOperation() throws {
        let r = try run("- convert: { field: n, to: integer }", #"{"n":"x"}"#)
        let reject = try XCTUnwrap(r.rejects.first)
        XCTAssertEqual(reject.plan, "t")
        XCTAssertEqual(reject.step, 1)
        XCTAssertEqual(reject.stepName, "s")
        XCTAssertEqual(reject.operation, "convert")
        XCTAssertEqual(
            reject.jsonValue.compactText,
            #"{"pointer":"/items/-KZy__8VkJ6DHmJYPkt0/n","outputPointer":"/items/-KZy__8VkJ6DHmJYPkt0/n","value":"x","plan":"t","step":1,"stepName":"s","operation":"convert","reason":"'x' is not a number"}"#
        )
        XCTAssertEqual(
            reject.description, #"/items/-KZy__8VkJ6DHmJYPkt0/n: plan 't' step 1 ('s') convert: 'x' is not a number (value "x")"#)
    }

    func testStatsAndExamplesDoNotDependOnRecordOrder() throws {
        let p = try plan("- rename: { a: b }\n- default: { c: 1 }")
        let keys = ["-KZy__8VkJ6DHmJYPkt2", "-KZy__8VkJ6DHmJYPkt0", "-KZy__8VkJ6DHmJYPkt1"]
        var reports: [String] = []
        for order in [keys, keys.reversed()] {
            let runner = PlanRunner(plans: [p], onError: .keep)
            for k in order {
                _ = try runner.apply(
                    Record(path: ["items", k], value: k == keys[0] ? .object(["c": .bool(true)]) : .object(["a": .number("1")])))
            }
            let s = runner.stats
            XCTAssertEqual(s.steps[0].matched, 3)
            XCTAssertEqual(s.steps[0].operations.map(\.applied), [2, 2])
            reports.append(s.jsonValue.compactText)
        }
        XCTAssertEqual(reports[0], reports[1])
        let runner = PlanRunner(plans: [p], onError: .keep)
        for k in keys { _ = try runner.apply(Record(path: ["items", k], value: .object(["a": .number("1")]))) }
        let example = try XCTUnwrap(runner.stats.steps[0].example)
        XCTAssertEqual(example.before.path, ["items", "-KZy__8VkJ6DHmJYPkt0"])
        XCTAssertEqual(example.after?.value, .object(["b": .number("1"), "c": .number("1")]))
    }

    func testConcurrentApplyCountsEveryRecord() throws {
        let runner = PlanRunner(plans: [try plan("- default: { c: 1 }")], onError: .keep)
        DispatchQueue.concurrentPerform(iterations: 1000) { i in
            _ = try? runner.apply(Record(path: ["items", "k\(i)"], value: .object([:])))
        }
        XCTAssertEqual(runner.stats.records, 1000)
        XCTAssertEqual(runner.stats.steps[0].operations[0].applied, 1000)
        XCTAssertEqual(runner.stats.steps[0].example?.before.path, ["items", "k0"])
    }

    // MARK: - reversal

    func testReversedPlanUndoesEveryInvertibleOperation() throws {
        let forward = try PlanFixtures.plan(
            """
            name: all
            from: v1
            to: v2
            steps:
              - match: /v1/things/{id}
                where: { kind: { equals: note }, when: { type: string } }
                ops:
                  - rename: { _createdAt: createdAt, meta/by: author }
                  - convert: { field: count, to: integer }
                  - convert: { field: when, from: date, to: milliseconds, format: "yyyy/MM/dd HH:mm:ss", time-zone: Asia/Tokyo }
                  - convert: { field: secs, from: seconds, to: milliseconds }
                  - map: { field: p, values: { 着手中: doing, 完了: done } }
                  - collect: { fields: [image1, image2], into: images }
                  - normalize-file: { field: images, shape: object, restore: true }
                  - move: /v2/things/{id}
            """)
        let original: JSONValue = try PlanFixtures.json(
            #"{"_createdAt":1,"meta":{"by":"u","x":1},"count":"3","when":"2016/12/27 13:42:36","secs":1.5,"p":"完了","image1":"1482814956123","image2":{"name":"a","url":"u"},"kind":"note"}"#
        )
        let record = Record(path: ["v1", "things", "-K1"], value: original)
        let v2 = try PlanRunner(plans: [forward], onError: .fail).apply(record).records[0]
        XCTAssertEqual(v2.path, ["v2", "things", "-K1"])
        let backward = try forward.reversed()
        XCTAssertEqual(backward.from, "v2")
        XCTAssertEqual(backward.steps[0].patterns.map(\.text), ["/v2/things/{id}"])
        XCTAssertEqual(backward.steps[0].conditions.map(\.description), ["kind equals \"note\""])
        let v1 = try PlanRunner(plans: [backward], onError: .fail).apply(v2).records[0]
        XCTAssertEqual(v1.path, record.path)
        XCTAssertTrue(v1.value!.isEquivalent(to: original), v1.value!.compactText)
        XCTAssertEqual(try backward.reversed().steps[0].patterns.map(\.text), ["/v1/things/{id}"])
    }

    func testReverseRefusesLossyOperationsNamingStepAndOperation() throws {
        let lossy: [(String, String)] = [
            ("- drop: [a]", "'drop': it removes fields"),
            ("- default: { a: 1 }", "'default'"),
            ("- backfill: { field: a }", "'backfill'"),
            ("- delete", "'delete'"),
            ("- map: { field: a, values: { x: y, z: y } }", "several values to the same value"),
            ("- map: { field: a, values: { x: y }, unmapped: default, default: q }", "replaced by the default"),
            ("- convert: { field: a, to: integer, exact: false }", "exact: false"),
            ("- collect: { fields: [a, b], into: c, exact: false }", "closes gaps"),
            ("- normalize-file: { field: a, shape: object }", "restore: true"),
        ]
        for (op, words) in lossy {
            XCTAssertThrowsError(try plan("- rename: { q: r }\n" + op).reversed(), op) { error in
                let e = error as! PlanError
                XCTAssertEqual(e.line, 9, op)
                XCTAssertEqual(e.column, 9, op)
                XCTAssertEqual(e.step, 1)
                XCTAssertTrue(e.description.hasPrefix("test.yaml:9:9: step 1 ('s'): cannot reverse"), e.description)
                XCTAssertTrue(e.message.contains(words), "\(op): \(e.message)")
                XCTAssertTrue(e.message.hasSuffix("give the step an 'inverse:' list of operations"), e.message)
            }
        }
        XCTAssertThrowsError(try plan("- move: /all/{id}", match: #"["/a/{id}", "/b/{id}"]"#).reversed()) { error in
            XCTAssertTrue("\(error)".contains("several patterns move into /all/{id}"), "\(error)")
        }
        XCTAssertThrowsError(try plan("- move: /all/{id}", match: "/a/*/{id}").reversed())
        XCTAssertThrowsError(try plan("- move: /all", match: "/a/{id}").reversed())
    }

    func testReverseRefusesMovesIntoPathsAnEarlierStepLeavesRecordsAt() throws {
        func steps(_ list: [(match: String, ops: String)]) throws -> MigrationPlan {
            try PlanFixtures.plan(
                "name: t\nfrom: v1\nto: v2\nsteps:\n"
                    + list.map { "  - match: \($0.match)\n    ops:\n      \($0.ops)\n" }.joined())
        }
        // Two sources moved into one place: the reversed plan would send both to the second source.
        XCTAssertThrowsError(try steps([("/a/{id}", "- move: /all/{id}"), ("/b/{id}", "- move: /all/{id}")]).reversed()) { error in
            let e = error as! PlanError
            XCTAssertEqual(e.step, 2)
            XCTAssertTrue(e.message.contains("moves records to /all/{id}, where step 1 leaves records at /all/{id}"), e.message)
        }
        // Moved where an earlier step edits records in place: those would be moved too.
        XCTAssertThrowsError(try steps([("/all/{id}", "- rename: { a: b }"), ("/b/{id}", "- move: /all/{id}")]).reversed())
        // A later step that takes what an earlier one moved, and moves it on or edits it, reverses.
        let chained = try steps([("/a/{id}", "- move: /b/{id}"), ("/b/{id}", "- move: /c/{id}"), ("/c/{id}", "- rename: { a: b }")])
        let back = try PlanRunner(plans: [chained.reversed()], onError: .fail).apply(
            Record(path: ["c", "k"], value: .object(["b": .number("1")])))
        XCTAssertEqual(back.records.map(\.path), [["a", "k"]])
        XCTAssertEqual(back.records.first?.value, .object(["a": .number("1")]))
        // Targets apart from each other: reversible.
        XCTAssertNoThrow(try steps([("/a/{id}", "- move: /x/{id}"), ("/b/{id}", "- move: /y/{id}")]).reversed())
    }

    func testStatedInverseMakesALossyStepReversible() throws {
        let p = try plan(
            "- default: { completed: false }\n- backfill: { field: createdAt }", where: "{ completed: { exists: false } }",
            inverse: "- drop: [completed, createdAt]")
        let back = try p.reversed()
        XCTAssertEqual(back.steps[0].operations.map(\.name), ["drop"])
        XCTAssertEqual(back.steps[0].conditions.count, 0, "the condition is on a field the step writes")
        let r = try PlanRunner(plans: [back], onError: .fail).apply(
            Record(path: ["items", "-K1"], value: .object(["t": .string("x"), "completed": .bool(false), "createdAt": .number("1")])))
        XCTAssertEqual(output(r), #"{"t":"x"}"#)
    }

    func testOperationOrderAndOutputAreDeterministic() throws {
        let p = try plan("- rename: { z: zz, a: aa }\n- default: { new1: 1, new2: 2 }\n- convert: { field: n, to: integer }")
        let runner = PlanRunner(plans: [p], onError: .keep)
        let input = try PlanFixtures.json(#"{"z":1,"n":"4","a":2}"#)
        let first = try runner.apply(Record(path: ["items", "x"], value: input))
        let second = try runner.apply(Record(path: ["items", "x"], value: input))
        XCTAssertEqual(output(first), #"{"zz":1,"n":4,"aa":2,"new1":1,"new2":2}"#)
        XCTAssertEqual(first.records, second.records)
    }
}
