import Foundation
import TestSupport
import XCTest

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// `dumpkit validate` on the samples, in every output format.
final class ValidateCommandTests: XCTestCase {
    private let root = TestData.projectRoot
    private func path(_ p: String) -> String { root.appendingPathComponent(p).path }

    private func findings(_ args: [String]) throws -> (status: Int32, pointers: [String], rules: [String]) {
        let r = try CLI.run(["validate"] + args + ["--format", "json"])
        let o = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any]
        let list = o["findings"] as! [[String: Any]]
        return (r.status, list.map { $0["pointer"] as! String }, list.map { $0["rule"] as! String })
    }

    /// Every v2 sample against its schema: exactly the odd values samples/README.md lists.
    func testSamplesAgainstTheirSchemas() throws {
        let cases: [(String, String, [String])] = [
            (
                "todolist", "/v2/todolist/{id}",
                [
                    "/v2/todolist/-KeyiUZncrW-w2A84UeS/photoCount", "/v2/todolist/-KiZ1zN6cuqxJokAPIl_/photoCount",
                    "/v2/todolist/-Kkb6W5T4QhhS2mLRJAc/progress", "/v2/todolist/-L-1-4rmycVmp4iio1Pj/image2",
                ]
            ),
            (
                "chat", "/users/{uid}/messages/{id}",
                [
                    "/users/k36LmNpx7y5LPTmr0OtxH5ofLgQZ/messages/-KZojgrjk38q-LaWcavz/date",
                    "/users/k36LmNpx7y5LPTmr0OtxH5ofLgQZ/messages/-KZpoIc0ZfXNf8Ip-GGR/date",
                ]
            ),
            ("wedding", "/articles/{id}", ["/articles/-KlghgJVIq2b6HU44-VQ/createdAt"]),
        ]
        for (app, pattern, expected) in cases {
            let f = try findings([
                path("samples/\(app)/v2.expected.json"), "--schema", "\(pattern)=\(path("schemas/\(app)/v2.schema.json"))",
            ])
            XCTAssertEqual(f.status, 1, app)
            XCTAssertEqual(f.pointers.sorted(), expected.sorted(), app)
        }
        // The plan's own output of a clean record set validates cleanly.
        let clean = try TemporaryDirectory()
        try Data(#"{"articles":{"-KlghgJVIq2b6HU44-VQ":{"title":"t","createdAt":1480000000000}}}"#.utf8).write(
            to: clean.url.appendingPathComponent("d.json"))
        let r = try CLI.run(["validate", clean.path("d.json")])
        XCTAssertEqual(r.status, 0, r.stdout + r.stderr)
        XCTAssertTrue(r.stdout.contains("no findings"), r.stdout)
    }

    func testTodoAppRulesReportTheInvalidItemsAtTheirPaths() throws {
        let f = try findings([path("samples/todo-app/v1.json"), "--rules", path("samples/todo-app/database.rules.json")])
        XCTAssertEqual(f.status, 1)
        XCTAssertEqual(Set(f.rules), ["rules:.validate"])
        XCTAssertEqual(
            f.pointers.sorted(),
            [
                "/users/2WmQzCudiH7YFjS1on43XkMtECqO/items/-KkMQ-iISR-86S73e8TY/title",
                "/users/2WmQzCudiH7YFjS1on43XkMtECqO/items/-KlB9cEqTnEU49pcWPcT",
                "/users/oHBvRPOIvGrv5iFlbCBFNOgmBjMt/items/-KjW61a9RGzA5DIJq7lk/title",
            ])
        let readme = try String(contentsOfFile: path("samples/todo-app/README.md"), encoding: .utf8)
        for p in f.pointers { XCTAssertTrue(readme.contains(p), "README does not list \(p)") }
    }

    func testRuleFindingsAndSchemaFindingsUnderRulesCarryLineAndColumn() throws {
        func located(_ args: [String]) throws -> [String] {
            let r = try CLI.run(["validate"] + args + ["--format", "json"])
            XCTAssertEqual(r.status, 1, r.stderr)
            let list = (try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any])["findings"] as! [[String: Any]]
            return list.map { "\($0["line"] ?? "-"):\($0["column"] ?? "-") \($0["pointer"]!)" }.sorted()
        }
        // The offending values: `42` at 12:20, an item object at 17:33, `""` at 34:20.
        let rules = [path("samples/todo-app/v1.json"), "--rules", path("samples/todo-app/database.rules.json")]
        let expected = [
            "12:20 /users/2WmQzCudiH7YFjS1on43XkMtECqO/items/-KkMQ-iISR-86S73e8TY/title",
            "17:33 /users/2WmQzCudiH7YFjS1on43XkMtECqO/items/-KlB9cEqTnEU49pcWPcT",
            "34:20 /users/oHBvRPOIvGrv5iFlbCBFNOgmBjMt/items/-KjW61a9RGzA5DIJq7lk/title",
        ]
        XCTAssertEqual(try located(rules), expected)
        XCTAssertEqual(try located(rules + ["--rules-memory-limit", "0"]), expected)
        // Schemas checked over a dump held whole for the rules report the same places as streamed.
        let dir = try TemporaryDirectory()
        try Data(#"{"rules": {".write": true}}"#.utf8).write(to: dir.url.appendingPathComponent("open.rules.json"))
        let schema = ["--schema", "/v2/todolist/{id}=\(path("schemas/todolist/v2.schema.json"))"]
        let streamed = try located([path("samples/todolist/v2.expected.json")] + schema)
        XCTAssertEqual(streamed.count, 4)
        XCTAssertFalse(streamed.contains { $0.hasPrefix("-") }, "\(streamed)")
        XCTAssertEqual(try located([path("samples/todolist/v2.expected.json"), "--rules", dir.path("open.rules.json")] + schema), streamed)
    }

    func testLimitsAreReportedWithLineAndColumn() throws {
        let dir = try TemporaryDirectory()
        try Data("{\n  \"a.b\": 1,\n  \"ok\": {\".value\": 1, \"x\": 2}\n}".utf8).write(to: dir.url.appendingPathComponent("d.json"))
        let r = try CLI.run(["validate", dir.path("d.json")])
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.stdout.contains("d.json:2:3 /a.b: key contains '.'"), r.stdout)
        XCTAssertTrue(r.stdout.contains("limits:value-beside-children (error): 1 finding"), r.stdout)
    }

    /// The text output shows ten findings a rule and says how to see the others.
    func testTextOutputSaysHowToSeeTheFindingsItLeavesOut() throws {
        let dir = try TemporaryDirectory()
        let keys = (0..<15).map { "\"k.\($0)\": 1" }.joined(separator: ", ")
        try Data("{\(keys), \"x\": {\".value\": 1, \"y\": 2}}".utf8).write(to: dir.url.appendingPathComponent("d.json"))
        let r = try CLI.run(["validate", dir.path("d.json")])
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.stdout.contains("\n  ... and 5 more (--json lists them all)\n"), r.stdout)
        XCTAssertTrue(r.stdout.hasSuffix("d.json: 16 errors, 0 warnings\n"), r.stdout)
        let capped = try CLI.run(["validate", dir.path("d.json"), "--max-findings", "12"])
        XCTAssertTrue(
            capped.stdout.contains("\n  ... and 5 more (--json lists the first 12 findings; --max-findings N keeps more)\n"), capped.stdout)
    }

    /// Control characters in keys never reach the terminal raw (an escape sequence would recolour it
    /// or move the cursor): the text and GitHub outputs write them as `\u001B`; JSON keeps the key.
    func testControlCharactersInKeysAreEscaped() throws {
        let dir = try TemporaryDirectory()
        try Data(#"{"a\u001b[31mred": 1, "b\u0007x": {"c\nd": 2}}"#.utf8).write(to: dir.url.appendingPathComponent("d.json"))
        for format in ["text", "github"] {
            let r = try CLI.run(["validate", dir.path("d.json"), "--format", format])
            XCTAssertEqual(r.status, 1)
            XCTAssertFalse(r.stdout.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" || (0x7F..<0xA0).contains($0.value) }, r.stdout)
            XCTAssertEqual(r.stdout.split(separator: "\n").filter { $0.contains(format == "text" ? "  " : "::error") }.count, 3, r.stdout)
            for pointer in [#"/a\u001B[31mred: "#, #"/b\u0007x: "#, #"/b\u0007x/c\u000Ad: "#] {
                XCTAssertTrue(r.stdout.contains(pointer), "\(format): \(pointer)\n\(r.stdout)")
            }
        }
        XCTAssertTrue(try findings([dir.path("d.json")]).pointers.contains("/a\u{1B}[31mred"))
    }

    func testJUnitAndGitHubFormats() throws {
        let args = [path("samples/todolist/v1.json"), "--schema", "/v1/todolist/{id}=\(path("schemas/todolist/v1.schema.json"))"]
        let junit = try CLI.run(["validate"] + args + ["--format", "junit"])
        XCTAssertEqual(junit.status, 1)
        let doc = try XMLDocument(data: Data(junit.stdout.utf8))
        let cases = try doc.nodes(forXPath: "//testcase")
        let failures = try doc.nodes(forXPath: "//testcase/failure")
        XCTAssertEqual(cases.count, 9)
        XCTAssertEqual(failures.count, 1)
        XCTAssertTrue(failures[0].stringValue!.contains("/v1/todolist/-KeyiUZncrW-w2A84UeS/photo_count"))
        let gh = try CLI.run(["validate"] + args + ["--format", "github"])
        let lines = gh.stdout.split(separator: "\n")
        XCTAssertEqual(lines.count, 3)
        XCTAssertTrue(
            lines.allSatisfy { $0.hasPrefix("::error file=") && $0.contains(",line=") && $0.contains("title=schema%3A") }, gh.stdout)
    }

    func testBadSchemasAndRulesAreUsageErrorsBeforeAnyFinding() throws {
        let dir = try TemporaryDirectory()
        try Data(#"{"type": 12}"#.utf8).write(to: dir.url.appendingPathComponent("bad.schema.json"))
        try Data(#"{"$ref": "missing.json"}"#.utf8).write(to: dir.url.appendingPathComponent("ref.schema.json"))
        try Data("{\n  \"rules\": {\n    // comment\n    \".validate\": \"newData.exists( &&\"\n  }\n}".utf8).write(
            to: dir.url.appendingPathComponent("bad.rules.json"))
        try Data(#"{"rules": {".validate": "frobnicate(1)"}}"#.utf8).write(to: dir.url.appendingPathComponent("fn.rules.json"))
        let dump = path("samples/todolist/v1.json")
        for (args, expected) in [
            (["--schema", "/v1/todolist/{id}=\(dir.path("bad.schema.json"))"], "bad.schema.json: invalid schema"),
            (["--schema", "/v1/todolist/{id}=\(dir.path("ref.schema.json"))"], "missing.json"),
            (["--rules", dir.path("bad.rules.json")], "bad.rules.json:4:"),
            (["--rules", dir.path("fn.rules.json")], "unknown function 'frobnicate'"),
            (["--schema", "nopattern"], "PATTERN=FILE"),
        ] {
            let r = try CLI.run(["validate", dump] + args)
            XCTAssertEqual(r.status, 2, "\(args): \(r.stderr)")
            XCTAssertEqual(r.stdout, "", "\(args)")
            XCTAssertTrue(r.stderr.contains(expected), "\(args): \(r.stderr)")
        }
    }

    /// A pattern that matches no record (`/user/{uid}` for `/users/{uid}`) would let its schema check
    /// nothing: an error naming the pattern and the schema, unless `--allow-unmatched`.
    func testSchemaPatternThatMatchesNoRecordIsAnError() throws {
        let dump = path("samples/chat/v1.json")
        let schema = path("schemas/chat/v1.schema.json")
        let typo = ["--schema", "/user/{uid}/messages/{id}=\(schema)"]
        let r = try CLI.run(["validate", dump] + typo)
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertTrue(r.stdout.contains("schema:unmatched (error): 1 finding"), r.stdout)
        XCTAssertTrue(r.stdout.contains("no record matches /user/{uid}/messages/{id}: the schema \(schema) checked nothing"), r.stdout)
        // The same with the dump held whole for rules, and in JSON.
        let dir = try TemporaryDirectory()
        try Data(#"{"rules": {".write": true}}"#.utf8).write(to: dir.url.appendingPathComponent("open.rules.json"))
        let withRules = try findings([dump, "--rules", dir.path("open.rules.json")] + typo)
        XCTAssertEqual(withRules.status, 1)
        XCTAssertEqual(withRules.rules, ["schema:unmatched"])
        // A pattern that matches, beside it, is not reported; --allow-unmatched accepts the typo.
        let both = try findings([dump, "--schema", "/users/{uid}/messages/{id}=\(schema)"] + typo)
        XCTAssertEqual(both.rules.filter { $0 == "schema:unmatched" }.count, 1, "\(both.rules)")
        let allowed = try CLI.run(["validate", dump, "--allow-unmatched"] + typo)
        XCTAssertEqual(allowed.status, 0, allowed.stdout + allowed.stderr)
        XCTAssertTrue(allowed.stdout.contains("no findings"), allowed.stdout)
        // A schema map in the documented format (YAML, files relative to the map) is checked too.
        try FileManager.default.copyItem(atPath: schema, toPath: dir.path("message.schema.json"))
        try Data("/users/{uid}/messages/{id}: message.schema.json\n/user/{uid}/profile: message.schema.json\n".utf8)
            .write(to: dir.url.appendingPathComponent("schemas.yaml"))
        let map = try CLI.run(["validate", dump, "--schema-map", dir.path("schemas.yaml")])
        XCTAssertEqual(map.status, 1, map.stderr)
        XCTAssertTrue(
            map.stdout.contains("no record matches /user/{uid}/profile: the schema \(dir.path("message.schema.json"))"), map.stdout)
        XCTAssertTrue(map.stdout.contains("schema:unmatched (error): 1 finding"), map.stdout)
        let help = try CLI.run(["validate", "--help"])
        XCTAssertTrue(help.stdout.contains("--allow-unmatched"), help.stdout)
        XCTAssertTrue(help.stdout.contains("/users/{uid}: user.schema.json"), help.stdout)
    }

    /// A misspelt keyword is a warning naming the file, the place and the keyword meant (it does not
    /// fail the run); JSON findings carry the failed keyword's schema path.
    func testUnknownKeywordsWarnAndFindingsCarryTheirSchemaPath() throws {
        let dir = try TemporaryDirectory()
        try Data(#"{"type": "object", "properties": {"title": {"type": "string", "minLenght": 3}, "n": {"maximum": 1}}}"#.utf8)
            .write(to: dir.url.appendingPathComponent("todo.schema.json"))
        try Data(#"{"todos": {"a": {"title": "x", "n": 1}, "b": {"title": "y", "n": 2}}}"#.utf8).write(
            to: dir.url.appendingPathComponent("d.json"))
        let schema = ["--schema", "/todos/{id}=\(dir.path("todo.schema.json"))"]
        let text = try CLI.run(["validate", dir.path("d.json")] + schema)
        XCTAssertEqual(text.status, 1, text.stderr)
        XCTAssertTrue(
            text.stdout.contains(#"#/properties/title/minLenght: unknown keyword "minLenght" checks nothing; did you mean "minLength"?"#),
            text.stdout)
        let r = try CLI.run(["validate", dir.path("d.json"), "--format", "json"] + schema)
        let list = (try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any])["findings"] as! [[String: Any]]
        XCTAssertEqual(
            list.map { "\($0["rule"]!) \($0["severity"]!) \($0["pointer"]!) \($0["schemaPath"]!)" },
            [
                "schema:maximum error /todos/b/n #/properties/n/maximum",
                "schema:unknown-keyword warning  #/properties/title/minLenght",
            ])
        // Without the failing value, the warning alone leaves the exit code 0.
        try Data(#"{"todos": {"a": {"title": "x", "n": 1}}}"#.utf8).write(to: dir.url.appendingPathComponent("d.json"))
        XCTAssertEqual(try CLI.run(["validate", dir.path("d.json")] + schema).status, 0)
    }

    /// Schemas that name each other by `$id` resolve offline: by `$id` in the schema's folder and in
    /// `--schema-dir` folders, and through `--ref-map` prefixes.
    func testSchemasReferToEachOtherByID() throws {
        let dir = try TemporaryDirectory()
        func write(_ name: String, _ text: String) throws {
            let url = dir.url.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(text.utf8).write(to: url)
        }
        try write(
            "schemas/package.json",
            #"{"$id": "https://json.schemastore.org/package.json", "type": "object", "properties": {"eslintConfig": {"$ref": "eslintrc.json"}}}"#
        )
        try write(
            "schemas/eslintrc.json",
            #"{"$id": "https://json.schemastore.org/eslintrc.json", "type": "object", "properties": {"root": {"type": "boolean"}}}"#)
        try write(
            "schemas/team.json",
            """
            {"$id": "https://teams.example/team.json", "properties": {"lead": {"$ref": "https://people.example/v1/person.json"},
             "tags": {"$ref": "https://lib.example/common.json#/$defs/tags"}}}
            """)
        try write("people/v1/person.json", #"{"properties": {"name": {"type": "string"}}}"#)
        try write(
            "lib/nested/common.json",
            #"{"$id": "https://lib.example/common.json", "$defs": {"tags": {"type": "array", "items": {"type": "string"}}}}"#)
        try write(
            "d.json",
            """
            {"packages": {"a": {"eslintConfig": {"root": "yes"}}, "b": {"eslintConfig": {"root": true}}},
             "teams": {"t": {"lead": {"name": 5}, "tags": ["x", 1]}}}
            """)
        let dump = dir.path("d.json")
        // eslintrc.json is found by its $id in package.json's folder.
        let package = ["--schema", "/packages/{name}=\(dir.path("schemas/package.json"))"]
        let p = try findings([dump] + package)
        XCTAssertEqual(p.status, 1)
        XCTAssertEqual(p.pointers, ["/packages/a/eslintConfig/root"])
        // The others need --ref-map and --schema-dir (searched below the folder); without them the
        // error says where schemas are looked up.
        let team = ["--schema", "/teams/{t}=\(dir.path("schemas/team.json"))"]
        let missing = try CLI.run(["validate", dump] + team)
        XCTAssertEqual(missing.status, 2)
        XCTAssertTrue(missing.stderr.contains("no schema is known as https://people.example/v1/person.json"), missing.stderr)
        XCTAssertTrue(missing.stderr.contains("--ref-map"), missing.stderr)
        let t = try findings([dump, "--ref-map", "https://people.example/=\(dir.path("people"))", "--schema-dir", dir.path("lib")] + team)
        XCTAssertEqual(t.status, 1)
        XCTAssertEqual(t.pointers, ["/teams/t/lead/name", "/teams/t/tags/1"])
        // Two files with one $id are an error naming both.
        try FileManager.default.copyItem(atPath: dir.path("schemas/eslintrc.json"), toPath: dir.path("schemas/eslintrc-copy.json"))
        let twice = try CLI.run(["validate", dump] + package)
        XCTAssertEqual(twice.status, 2)
        XCTAssertTrue(twice.stderr.contains("eslintrc-copy.json"), twice.stderr)
        XCTAssertTrue(twice.stderr.contains("is also that of"), twice.stderr)
    }

    /// Every schema applies to every value its pattern matches: also inside the records of another
    /// pattern (the reader makes records of the outer one only) and beside a schema on the same pattern.
    func testSchemasOnNestedAndEqualPatternsAllApply() throws {
        let dump = path("samples/chat/v1.json")
        let message = path("schemas/chat/v1.schema.json")
        let dir = try TemporaryDirectory()
        try Data(#"{"required": ["profile"], "properties": {"profile": {"required": ["age"]}}}"#.utf8)
            .write(to: dir.url.appendingPathComponent("user.schema.json"))
        try Data(#"{"rules": {".write": true}}"#.utf8).write(to: dir.url.appendingPathComponent("open.rules.json"))
        let messages = try findings([dump, "--schema", "/users/{uid}/messages/{id}=\(message)"])
        XCTAssertEqual(messages.pointers.count, 1, "\(messages.pointers)")
        let users = try findings([dump, "--schema", "/users/{uid}=\(dir.path("user.schema.json"))"])
        XCTAssertEqual(users.pointers.count, 4, "\(users.pointers)")
        let both = [
            "--schema", "/users/{uid}=\(dir.path("user.schema.json"))", "--schema", "/users/{uid}/messages/{id}=\(message)",
            "--schema", "/users/*/messages/*=\(message)",
        ]
        for extra in [[], ["--rules", dir.path("open.rules.json")]] {
            let r = try findings([dump] + both + extra)
            XCTAssertEqual(r.status, 1)
            XCTAssertFalse(r.rules.contains("schema:unmatched"), "\(extra): \(r.rules)")
            XCTAssertEqual(r.pointers.sorted(), (users.pointers + messages.pointers + messages.pointers).sorted(), "\(extra)")
        }
        // Found inside a record's tape, a finding still carries its value's line:column.
        XCTAssertTrue(try CLI.run(["validate", dump] + both).stdout.contains("v1.json:110:19 \(messages.pointers[0]): "))
    }

    func testSchemaFindingsPointAtTheFailingValue() throws {
        let dir = try TemporaryDirectory()
        try Data(
            "{\"v1\":{\"todolist\":{\n \"a\":{\"_createdAt\":1,\"title\":\"t\"},\n \"b\":{\"_createdAt\":1,\n   \"title\":5, \"x\": [1,\n {\"y\":2}]},\n \"c\":{\"title\":\"t\", \"progress\": \"no\"}}}}\n"
                .utf8
        )
        .write(to: dir.url.appendingPathComponent("d.json"))
        let r = try CLI.run(["validate", dir.path("d.json"), "--schema", "/v1/todolist/{id}=\(path("schemas/todolist/v1.schema.json"))"])
        XCTAssertEqual(r.status, 1)
        for expected in [
            "d.json:4:12 /v1/todolist/b/title: expected string", "d.json:4:20 /v1/todolist/b/x: property \"x\" is not allowed",
            "d.json:6:6 /v1/todolist/c: missing required property", "d.json:6:32 /v1/todolist/c/progress: value must be one of",
        ] {
            XCTAssertTrue(r.stdout.contains(expected), "\(expected)\n\(r.stdout)")
        }
    }

    /// `--blobs`: references made by extract-blobs, checked against the store after one object is
    /// deleted, one corrupted and a stray one added; every format, standard input too.
    func testBlobReferencesAgainstAStore() throws {
        let dir = try TemporaryDirectory()
        let script = path("Scripts/gen_dataset.py")
        _ = try Shell.run("python3", [script, "images", "--size", "300KB", "--seed", "3", "-o", dir.path("in.json")])
        let extract = try CLI.run(["extract-blobs", dir.path("in.json"), "-o", dir.path("out.json"), "--blobs", dir.path("blobs")])
        XCTAssertEqual(extract.status, 0, extract.stderr)
        let objects = try FileManager.default.subpathsOfDirectory(atPath: dir.path("blobs"))
            .filter { !$0.hasPrefix(".dumpkit") && !FileManager.default.isDirectory(dir.path("blobs/" + $0)) }.sorted()
        XCTAssertGreaterThanOrEqual(objects.count, 3)
        let args = [dir.path("out.json"), "--blobs", dir.path("blobs")]

        // (The generated dump also has an integer-keyed object the limits check warns about.)
        let clean = try findings(args)
        XCTAssertEqual(clean.status, 0)
        XCTAssertEqual(clean.rules, ["limits:array-with-holes"])

        try FileManager.default.removeItem(atPath: dir.path("blobs/" + objects[0]))
        try Data("not the picture".utf8).write(to: dir.url.appendingPathComponent("blobs/" + objects[1]))
        try Data("stray".utf8).write(to: dir.url.appendingPathComponent("blobs/stray.txt"))
        let missing = "/" + objects[0].split(separator: ".").dropLast().joined(separator: ".")
        let corrupt = "/" + objects[1].split(separator: ".").dropLast().joined(separator: ".")
        let expected = [
            "error blobs:missing \(missing)", "error blobs:size \(corrupt)", "warning blobs:orphan ",
        ]
        for input in [dir.path("out.json"), "-"] {
            let r = try CLI.run(
                ["validate", input, "--blobs", dir.path("blobs"), "--format", "json"],
                stdin: input == "-" ? try Data(contentsOf: dir.url.appendingPathComponent("out.json")) : nil)
            XCTAssertEqual(r.status, 1, r.stderr)
            let o = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any]
            let list = o["findings"] as! [[String: Any]]
            let blobFindings = list.filter { ($0["rule"] as! String).hasPrefix("blobs:") }
            XCTAssertEqual(blobFindings.map { "\($0["severity"]!) \($0["rule"]!) \($0["pointer"]!)" }.sorted(), expected.sorted(), input)
            XCTAssertEqual(o["errors"] as? Int, 2)
            XCTAssertTrue(list.contains { ($0["message"] as? String) == #"object "stray.txt" is not referenced by the dump"# })
        }
        let text = try CLI.run(["validate"] + args)
        XCTAssertEqual(text.status, 1)
        // The reference's line:column in the (compact, one-line) output dump, then its pointer.
        let missingLine = text.stdout.split(separator: "\n").first {
            $0.hasSuffix(" \(missing): object \"\(objects[0])\" is not in the store")
        }
        XCTAssertNotNil(missingLine?.range(of: #"out\.json:1:[0-9]+ /"#, options: .regularExpression), text.stdout)
        XCTAssertTrue(text.stdout.contains("blobs:orphan (warning): 1 finding"), text.stdout)
        XCTAssertTrue(text.stdout.hasSuffix("2 errors, 2 warnings\n"), text.stdout)
        let junit = try XMLDocument(data: Data(try CLI.run(["validate"] + args + ["--format", "junit"]).stdout.utf8))
        XCTAssertEqual(try junit.nodes(forXPath: "//testcase/failure").count, 2)
        XCTAssertEqual(try junit.nodes(forXPath: "//testcase[@name='blobs:orphan']/system-out").count, 1)
        let gh = try CLI.run(["validate"] + args + ["--format", "github"])
        XCTAssertEqual(
            gh.stdout.split(separator: "\n").filter { $0.hasPrefix("::error ") && $0.contains("title=blobs%3A") }.count, 2, gh.stdout)
        XCTAssertEqual(
            gh.stdout.split(separator: "\n").filter { $0.hasPrefix("::warning ") && $0.contains("title=blobs%3Aorphan") }.count, 1,
            gh.stdout)
        // A store that is not there is a usage error before any finding.
        let none = try CLI.run(["validate", dir.path("out.json"), "--blobs", dir.path("nowhere")])
        XCTAssertEqual(none.status, 2, none.stderr)
        XCTAssertEqual(none.stdout, "")
    }

    /// Rules over --rules-memory-limit read the dump from disk and report what the in-memory path does.
    func testRulesOnDiskReportTheSameFindings() throws {
        let args = [path("samples/todo-app/v1.json"), "--rules", path("samples/todo-app/database.rules.json"), "--format", "json"]
        let inMemory = try CLI.run(["validate"] + args)
        let onDisk = try CLI.run(["validate"] + args + ["--rules-memory-limit", "0"])
        XCTAssertEqual(inMemory.status, 1)
        XCTAssertEqual(onDisk.status, 1, onDisk.stderr)
        XCTAssertEqual(onDisk.stdout, inMemory.stdout)
        let gz = try TemporaryDirectory()
        _ = try Shell.run("sh", ["-c", "gzip -c '\(path("samples/todo-app/v1.json"))' > '\(gz.path("v1.json.gz"))'"])
        let compressed = try CLI.run(["validate", gz.path("v1.json.gz")] + args.dropFirst() + ["--rules-memory-limit", "0"])
        XCTAssertEqual(
            compressed.stdout, inMemory.stdout.replacingOccurrences(of: path("samples/todo-app/v1.json"), with: gz.path("v1.json.gz")))
    }
}

private extension FileManager {
    func isDirectory(_ path: String) -> Bool {
        var isDir: ObjCBool = false
        return fileExists(atPath: path, isDirectory: &isDir) && isDir.boolValue
    }
}
