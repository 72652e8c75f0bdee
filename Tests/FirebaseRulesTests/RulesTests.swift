import JSONStream
import XCTest

@testable import FirebaseRules

final class RulesTests: XCTestCase {
    // MARK: - Helpers

    private func json(_ text: String) throws -> JSONValue {
        try JSONReader(bytes: Array(text.utf8)).readValue()
    }

    /// Evaluates a `.validate` expression with `newData` and `root` on `database` at `path`.
    private func evaluate(
        _ expression: String, database: JSONValue = .null, at path: [String] = [], auth: JSONValue = .null,
        wildcards: [String: String] = [:]
    ) throws -> Bool {
        let names = wildcards.keys.sorted()
        let rule = try RulesRule(expression: expression, kind: .validate, wildcards: names)
        func evaluate(on source: any RulesSnapshotSource) throws -> Bool {
            let context = RulesContext(
                auth: auth, now: 1_000, root: RulesSnapshot(source: source),
                data: RulesSnapshot(source: InMemoryRulesSource(.null), path: path),
                newData: RulesSnapshot(source: source, path: path), captures: names.map { wildcards[$0]! })
            return try rule.evaluate(in: context)
        }
        // The on-disk source must agree, in outcome and in run-time errors.
        let onDisk = Result { try evaluate(on: try OnDiskRulesSourceTests.source(database)) }
        let inMemory = Result { try evaluate(on: InMemoryRulesSource(database)) }
        XCTAssertEqual(try? onDisk.get(), try? inMemory.get(), "\(expression) on disk")
        return try inMemory.get()
    }

    private func assertTrue(
        _ expression: String, database: JSONValue = .null, at path: [String] = [], auth: JSONValue = .null,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        check(expression, true, database: database, at: path, auth: auth, file: file, line: line)
    }

    private func assertFalse(
        _ expression: String, database: JSONValue = .null, at path: [String] = [], auth: JSONValue = .null,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        check(expression, false, database: database, at: path, auth: auth, file: file, line: line)
    }

    private func check(
        _ expression: String, _ expected: Bool, database: JSONValue, at path: [String], auth: JSONValue,
        file: StaticString, line: UInt
    ) {
        do {
            let value = try evaluate(expression, database: database, at: path, auth: auth)
            XCTAssertEqual(value, expected, expression, file: file, line: line)
        } catch {
            XCTFail("\(expression): \(error)", file: file, line: line)
        }
    }

    private func assertRuntimeError(
        _ expression: String, database: JSONValue = .null, auth: JSONValue = .null,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertThrowsError(try evaluate(expression, database: database, auth: auth), expression, file: file, line: line) { error in
            XCTAssertTrue(error is RulesEvaluationError, "\(expression): \(error)", file: file, line: line)
        }
    }

    private func rejection(_ expression: String, kind: RulesRule.Kind = .validate, wildcards: [String] = []) -> RulesExpressionError? {
        do {
            _ = try RulesRule(expression: expression, kind: kind, wildcards: wildcards)
            return nil
        } catch {
            return error
        }
    }

    private func load(_ text: String) throws -> RulesFile {
        try RulesFile(bytes: Array(text.utf8), name: "test.rules.json")
    }

    // MARK: - Parse and load errors

    func testSyntaxErrorsCarryOffsets() {
        XCTAssertEqual(rejection("newData.val() ==")?.offset, 16)
        XCTAssertEqual(rejection("newData.val() = 1")?.offset, 14)
        XCTAssertEqual(rejection("(1 < 2")?.message, "expected ')' before the end of expression")
        XCTAssertEqual(rejection("auth.uid === '5'; true")?.offset, 16)
        XCTAssertEqual(rejection("'unterminated")?.offset, 0)
        XCTAssertEqual(rejection("2 ** 2 == 4")?.offset, 3)
        XCTAssertEqual(rejection("a & b")?.message, "bitwise '&' is not supported; use '&&'")
    }

    /// Nesting past 256 levels is a load error at the offset where it happens, not a stack overflow.
    func testDeepNestingIsRefusedWithItsOffset() {
        let limit = "expression nested deeper than 256 levels"
        let parens = String(repeating: "(", count: 10_000) + "true" + String(repeating: ")", count: 10_000)
        XCTAssertEqual(rejection(parens), RulesExpressionError(limit, at: 256))
        XCTAssertEqual(rejection(String(repeating: "!", count: 100_000) + "true"), RulesExpressionError(limit, at: 256))
        XCTAssertEqual(rejection(String(repeating: "-", count: 100_000) + "1 > 0"), RulesExpressionError(limit, at: 256))
        XCTAssertEqual(rejection(String(repeating: "true ? true : ", count: 10_000) + "true")?.message, limit)
        XCTAssertEqual(rejection(String(repeating: "[", count: 10_000))?.message, limit)
        let sum = "1" + String(repeating: " + 1", count: 300) + " > 0"
        XCTAssertEqual(rejection(sum), RulesExpressionError(limit, at: 1 + 4 * 255 + 1))
        XCTAssertNil(rejection(String(repeating: "(", count: 255) + "true" + String(repeating: ")", count: 255)))
        XCTAssertNil(rejection(String(repeating: "!", count: 254) + "true"))
    }

    /// `&&` and `||` chains stay flat: 100,000 operands compile and evaluate without deep recursion.
    func testLongLogicalChainsCompileAndEvaluate() throws {
        let n = 100_000
        assertTrue(String(repeating: "false || ", count: n) + "true")
        assertFalse(String(repeating: "false || ", count: n) + "false")
        assertTrue(String(repeating: "newData.exists() && ", count: n) + "true", database: .bool(true))
        assertFalse(String(repeating: "true && ", count: n) + "1 > 2")
        assertTrue(String(repeating: "false || 1 < 2 && ", count: n / 2) + "true")
        XCTAssertEqual(
            rejection("true || true || 1 || true"),
            RulesExpressionError("'||' needs boolean operands; its right operand is a number", at: 13))
        XCTAssertEqual(
            rejection("1 && true && true"), RulesExpressionError("'&&' needs boolean operands; its left operand is a number", at: 2))
    }

    /// A pathological pattern on long strings: the rule's answer, no crash, no hang (30,000 characters
    /// through the automaton, 10 MiB through the backtracker).
    func testRegularExpressionsOnLongStrings() throws {
        let rules = try load(#"{"rules": {"$k": {".validate": "newData.val().matches(/^(a+)+$/)"}}}"#)
        let dump: JSONObject = [
            "short": .string(String(repeating: "a", count: 30_000) + "!"), "long": .string(String(repeating: "a", count: 10 << 20)),
        ]
        let findings = RulesEvaluator(rules: rules, now: 0).validateDump(InMemoryRulesSource(.object(dump)))
        XCTAssertEqual(findings.map(\.pointer), ["/short"])
    }

    func testUnknownNamesAreRejected() {
        XCTAssertEqual(rejection("foo(1) == true"), RulesExpressionError("unknown function 'foo'", at: 0))
        XCTAssertEqual(rejection("skies === 'blue'"), RulesExpressionError("unknown variable 'skies'", at: 0))
        XCTAssertEqual(rejection("newData.bogus()"), RulesExpressionError("unknown snapshot method 'bogus'", at: 8))
        XCTAssertEqual(rejection("newData.val().bogus() == 1"), RulesExpressionError("unknown method 'bogus'", at: 14))
        XCTAssertEqual(rejection("'x'.bogus == 1"), RulesExpressionError("unknown string property 'bogus'", at: 4))
        XCTAssertEqual(rejection("$uid == 'a'"), RulesExpressionError("unknown variable '$uid'", at: 0))
        XCTAssertNil(rejection("$uid == 'a'", wildcards: ["$uid"]))
        XCTAssertNotNil(rejection("query.orderByKey == true"), "query is only for .read")
        XCTAssertNil(rejection("query.orderByKey == true", kind: .read))
        XCTAssertNotNil(rejection("newData.exists()", kind: .read), "newData is not for .read")
    }

    func testTypeErrorsAreRejected() {
        XCTAssertNotNil(rejection("7"))
        XCTAssertNotNil(rejection("newData.val()"))
        XCTAssertNotNil(rejection("newData.exists"))
        XCTAssertNotNil(rejection("newData == null"))
        XCTAssertNotNil(rejection("newData.val() > true"))
        XCTAssertNotNil(rejection("'a' < 1"))
        XCTAssertNotNil(rejection("!auth.admin"))
        XCTAssertNotNil(rejection("newData.hasChildren('a', 'b')"))
        XCTAssertNotNil(rejection("newData.hasChildren([])"))
        XCTAssertNotNil(rejection("newData.hasChildren(['a', 1])"))
        XCTAssertNotNil(rejection("newData.child(1).exists()"))
        XCTAssertNotNil(rejection("'a'.matches('a')"))
        XCTAssertNotNil(rejection("[1] == 1"))
    }

    func testLoadErrorsGiveFileLineColumnAndExpression() throws {
        let text = """
            {
              // comment
              "rules": {
                "users": {
                  "$uid": {
                    /* a block
                       comment */
                    ".validate": "newData.hasChildren() && foo(1)"
                  }
                }
              }
            }
            """
        XCTAssertThrowsError(try load(text)) { error in
            let e = error as! RulesFileError
            XCTAssertEqual(e.line, 8)
            XCTAssertEqual(e.column, 22)
            XCTAssertEqual(e.offset, 25)
            XCTAssertEqual(e.expression, "newData.hasChildren() && foo(1)")
            XCTAssertEqual(e.rulePath, "/rules/users/$uid")
            XCTAssertEqual(
                e.description,
                """
                test.rules.json:8:22: unknown function 'foo' in .validate at /rules/users/$uid: offset 25 in "newData.hasChildren() && foo(1)"
                """)
        }
        // A string spanning lines: the position is where the string starts.
        XCTAssertThrowsError(try load("{\"rules\": {\".write\": \"\n  true &&\n  \"}}")) { error in
            let e = error as! RulesFileError
            XCTAssertEqual(e.line, 1)
            XCTAssertEqual(e.column, 22)
            XCTAssertEqual(e.offset, 13)
            XCTAssertEqual(e.message, "unexpected end of expression")
        }
        XCTAssertThrowsError(try load("{\"rules\": {\"a\": {\".read\": 7}}}")) { error in
            XCTAssertEqual(
                (error as! RulesFileError).description,
                "test.rules.json:1:27: .read must be a string or a boolean, not a number at /rules/a")
        }
        XCTAssertThrowsError(try load("{\"rules\": {,}}")) { error in
            XCTAssertEqual((error as! RulesFileError).line, 1)
        }
    }

    func testStructureErrors() {
        for text in [
            "{\"rules\": {\".woops\": true}}",
            "{\"rules\": {\"a\": {\"$x\": {}, \"$y\": {}}}}",
            "{\"rules\": {\"$x\": {\"a\": {\"$x\": {}}}}}",
            "{\"rules\": {\".indexOn\": [1]}}",
            "{\"rules\": {\".indexOn\": true}}",
            "{\"rules\": {\"a\": null}}",
            "{\"rules\": {}, \"other\": 1}",
            "{\"rules\": {\"a\": {}, \"a\": {}}}",
            "[]",
        ] {
            XCTAssertThrowsError(try load(text), text)
        }
    }

    func testLoadsRulesTree() throws {
        let rules = try load(
            """
            {"rules": {".read": true, "users": {".indexOn": ["name", "age"], "$uid": {".write": "auth.uid == $uid",
             "name": {".validate": false}}}, "tags": {".indexOn": ".value"}}}
            """)
        XCTAssertEqual(rules.root.read?.source, "true")
        let users = try XCTUnwrap(rules.root.children["users"])
        XCTAssertEqual(users.indexOn, ["name", "age"])
        XCTAssertEqual(users.wildcard, "$uid")
        XCTAssertEqual(users.child(for: "u1")?.captured, "u1")
        XCTAssertEqual(users.child(for: "u1")?.node.path, "/rules/users/$uid")
        XCTAssertEqual(users.child(for: "u1")?.node.children["name"]?.validate?.source, "false")
        XCTAssertEqual(rules.root.children["tags"]?.indexOn, [".value"])
    }

    // MARK: - Operators

    func testOperators() throws {
        assertTrue("1 + 2 * 3 == 7")
        assertTrue("(1 + 2) * 3 == 9")
        assertTrue("7 % 4 == 3 && -7 % 4 == -3")
        assertTrue("10 / 4 == 2.5")
        assertTrue("-(1 - 3) == 2")
        assertTrue("1 < 2 && 2 <= 2 && 3 > 2 && 3 >= 3")
        assertTrue("'a' < 'b' && 'B' < 'a' && 'ab' > 'a'")
        assertTrue("true ? 1 == 1 : false")
        assertTrue("false ? false : true ? true : false")
        assertTrue("!(1 == 2) && 1 != 2 && 1 !== 2 && 1 === 1")
        assertTrue("1 == 2 || 2 == 2")
        assertTrue("'a' + 'b' == 'ab' && 'n' + 1 == 'n1' && 1 + 'n' == '1n'")
        assertTrue("(0.1 + 0.2) + '' == '0.30000000000000004'")
        assertTrue("(1e21 + '') == '1e+21' && (0.0000001 + '') == '1e-7' && (100 + '') == '100'")
        assertTrue("(1 / 0) + '' == 'NaN'")
        assertFalse("(1 / 0) == (1 / 0)")
        assertFalse("'1' == 1")
        assertFalse("null == false")
        assertTrue("null == null && null <= null")
        assertTrue(
            "auth.token.email == 'a@b.c' && auth.token['email_verified'] == true",
            auth: try json(#"{"uid": "u", "token": {"email": "a@b.c", "email_verified": true}}"#))
    }

    func testRuntimeErrorsDeny() throws {
        assertRuntimeError("auth.uid.length > 0")
        assertRuntimeError("auth.contains('x')")
        assertRuntimeError("auth.name - 1 == 0", auth: .object(["name": .string("a")]))
        assertRuntimeError("1 + auth.none == 1")
        assertRuntimeError("'a' > auth.none")
        assertRuntimeError("newData.val() > 1", database: .string("a"))
        assertRuntimeError("root.parent().exists()")
        assertRuntimeError("newData.child(auth.uid).exists()")
        // Member access on null is null, not an error.
        assertTrue("auth.token.email == null")
    }

    // MARK: - Strings and regular expressions

    func testStringMethods() {
        assertTrue("'hello'.length == 5 && ''.length == 0 && 'é🙂'.length == 3")
        assertTrue("'hello'.contains('ell') && !'hello'.contains('x') && 'hello'.contains('')")
        assertTrue("'hello'.beginsWith('he') && !'hello'.beginsWith('lo')")
        assertTrue("'hello'.endsWith('lo') && !'hello'.endsWith('he')")
        assertTrue("'a.b.c'.replace('.', '/') == 'a/b/c' && 'abc'.replace('', 'x') == 'abc'")
        assertTrue("'MiXed'.toLowerCase() == 'mixed' && 'MiXed'.toUpperCase() == 'MIXED'")
        assertTrue("'it\\'s' == \"it's\" && '\\u0041\\x42\\n'.length == 3")
        assertTrue("newData.val().matches(/^[a-z0-9._%+-]+@[a-z0-9.-]+\\.[a-z]{2,}$/i)", database: .string("Someone@Example.COM"))
        assertFalse("newData.val().matches(/^\\d+$/)", database: .string("12a"))
        assertRuntimeError("'abc'.contains(auth.uid)")
    }

    func testRegularExpressions() throws {
        func matches(_ pattern: String, _ s: String, flags: String = "") throws -> Bool {
            try RulesRegex(pattern: pattern, flags: flags).matches(s)
        }
        XCTAssertTrue(try matches("bar", "foobarbaz"))
        XCTAssertFalse(try matches("^bar", "foobar"))
        XCTAssertTrue(try matches("bar$", "foobar"))
        XCTAssertTrue(try matches("^a|b$", "xxb"))
        XCTAssertTrue(try matches("^(19|20)\\d\\d-(0[1-9]|1[012])$", "2015-12"))
        XCTAssertFalse(try matches("^(19|20)\\d\\d-(0[1-9]|1[012])$", "2015-13"))
        XCTAssertTrue(try matches("^([a-z0-9]+-)+[a-z0-9]+$", "this-is-a-slug"))
        XCTAssertFalse(try matches("^([a-z0-9]+-)+[a-z0-9]+$", "double--hyphen"))
        XCTAssertTrue(try matches("^a{2,3}$", "aaa"))
        XCTAssertFalse(try matches("^a{2,3}$", "aaaa"))
        XCTAssertTrue(try matches("^[^0-9\\s]+$", "abc"))
        XCTAssertFalse(try matches("^[^0-9\\s]+$", "a c"))
        XCTAssertTrue(try matches("\\bword\\b", "a word here"))
        XCTAssertFalse(try matches("\\bword\\b", "swordfish"))
        XCTAssertTrue(try matches("^ABC$", "abc", flags: "i"))
        XCTAssertTrue(try matches("^[A-C]+$", "abc", flags: "i"))
        XCTAssertTrue(try matches("^.$", "🙂"))
        XCTAssertFalse(try matches("^.$", "\n"))
        XCTAssertTrue(try matches("^(?:ab)*?c$", "ababc"))
        XCTAssertTrue(try matches("\\{foo}", "{foo}"))
        XCTAssertTrue(try matches("^.+\\.(com|org)$", String(repeating: "x", count: 100_000) + ".org"))
        for (pattern, flags) in [
            ("a", "g"), ("a", "m"), ("(^a)", ""), ("a$b", ""), ("^(a|)$", ""), ("a||b", ""), ("(a)\\1", ""),
            ("*a", ""), ("a**", ""), ("(a", ""), ("a)", ""), ("[]", ""), ("[b-a]", ""), ("a{3,2}", ""),
            ("(?=a)", ""), ("\\q", ""), ("^*", ""),
        ] {
            XCTAssertThrowsError(try RulesRegex(pattern: pattern, flags: flags), "/\(pattern)/\(flags)")
        }
        XCTAssertEqual(rejection("newData.val().matches(/(^a)/)")?.offset, 24)
        XCTAssertEqual(rejection("newData.val().matches(/a/g)")?.message, "unsupported regular expression flags 'g' (only 'i' is allowed)")
        XCTAssertNil(rejection("(10 / 2 / 5 == 1) && newData.val().matches(/a\\/b/)"), "division and escaped slash")
    }

    // MARK: - Snapshots

    func testSnapshotMethods() throws {
        let db = try json(
            """
            {"users": {"u1": {"name": "Ann", "age": 30, "admin": true, "tags": {"a": true}, "empty": {}, "nothing": null},
                       "u2": {".priority": 5, "name": {".value": "Bob", ".priority": "p"}}},
             "list": [10, null, 30]}
            """)
        assertTrue("newData.child('name').val() == 'Ann' && newData.child('age').val() == 30", database: db, at: ["users", "u1"])
        assertTrue(
            "newData.child('name').isString() && newData.child('age').isNumber() && newData.child('admin').isBoolean()", database: db,
            at: ["users", "u1"])
        assertFalse(
            "newData.child('tags').isString() || newData.child('age').isString() || newData.child('missing').isNumber()", database: db,
            at: ["users", "u1"])
        assertTrue(
            "newData.hasChild('tags/a') && !newData.hasChild('empty') && !newData.hasChild('nothing') && !newData.hasChild('')",
            database: db, at: ["users", "u1"])
        assertTrue(
            "newData.hasChildren() && newData.hasChildren(['name', 'age']) && !newData.hasChildren(['name', 'missing'])", database: db,
            at: ["users", "u1"])
        assertFalse("newData.child('name').hasChildren()", database: db, at: ["users", "u1"])
        assertTrue(
            "newData.child('missing/deeper').val() == null && !newData.child('missing').exists()", database: db, at: ["users", "u1"])
        assertTrue(
            "newData.parent().child('u2').exists() && newData.parent().parent().child('list/2').val() == 30", database: db,
            at: ["users", "u1"])
        assertTrue("root.child('users/u1/name').val() == newData.child('name').val()", database: db, at: ["users", "u1"])
        assertTrue("root.child('list').hasChildren(['0', '2']) && !root.child('list').hasChild('1')", database: db)
        assertTrue(
            "newData.getPriority() == 5 && newData.child('name').getPriority() == 'p' && newData.child('name').val() == 'Bob'",
            database: db, at: ["users", "u2"])
        assertTrue("newData.child('name').isString() && root.child('users/u1').getPriority() == null", database: db, at: ["users", "u2"])
        assertTrue(
            "newData.child('tags').val() != null && newData.child('tags').val() == root.child('users/u1/tags').val()", database: db,
            at: ["users", "u1"])
        assertTrue("data.val() == null && !data.exists()", database: db, at: ["users", "u1"])
        assertTrue("root['exists']() && newData.child('name')['val']() == 'Ann'", database: db, at: ["users", "u1"])
    }

    // MARK: - Dumps

    private let chatRules = """
        {
          "rules": {
            ".write": "auth != null",
            "rooms": {
              "$room": {
                ".validate": "newData.hasChildren(['name', 'creator'])",
                "name": { ".validate": "newData.isString() && newData.val().length > 0" },
                "creator": { ".validate": "root.child('users').hasChild(newData.val())" },
                "$other": { ".validate": false }
              },
              "lobby": { ".validate": "newData.hasChild('name')" }
            },
            "users": {
              "$uid": {
                ".write": "auth == null && $uid == 'guest'",
                ".validate": "newData.child('email').val().matches(/@/)"
              }
            }
          }
        }
        """

    private let chatDump = """
        {
          "users": {"ann": {"email": "ann@example.com"}, "bob": {"email": "nope"}, "eve": {"nick": "e"}, "guest": {"email": "g@x"}},
          "rooms": {
            "r1": {"name": "General", "creator": "ann"},
            "r2": {"name": "", "creator": "zed", "topic": "x"},
            "r3": {"creator": "bob"},
            "lobby": {"name": "Lobby", "creator": "ann", "extra": 1}
          }
        }
        """

    func testDumpFindingsAtExactPointers() throws {
        let rules = try load(chatRules)
        let dump = InMemoryRulesSource(try json(chatDump))
        let findings = RulesEvaluator(rules: rules, now: 0).validateDump(dump)
        XCTAssertEqual(
            findings.map(\.pointer),
            [
                "/users/bob", "/users/eve",
                "/rooms/r2/name", "/rooms/r2/creator", "/rooms/r2/topic",
                "/rooms/r3",
            ])
        XCTAssertTrue(findings.allSatisfy { $0.rule == .validate })
        XCTAssertEqual(findings[0].message, "newData.child('email').val().matches(/@/) is false (.validate at /rules/users/$uid)")
        XCTAssertEqual(
            findings[1].message,
            "newData.child('email').val().matches(/@/) is false: 'matches' needs a string, got null (.validate at /rules/users/$uid)")
        XCTAssertEqual(findings[4].message, "false is false (.validate at /rules/rooms/$room/$other)")
        // Literal `lobby` takes precedence over `$room`: its `extra` and missing `$room` checks do not apply.
        XCTAssertFalse(findings.contains { $0.pointer.hasPrefix("/rooms/lobby") })
    }

    func testDumpSubtreeAndSingleNode() throws {
        let rules = try load(chatRules)
        let dump = InMemoryRulesSource(try json(chatDump))
        let evaluator = RulesEvaluator(rules: rules, now: 0)
        XCTAssertEqual(
            evaluator.validateDump(dump, at: ["rooms", "r2"]).map(\.pointer), ["/rooms/r2/name", "/rooms/r2/creator", "/rooms/r2/topic"])
        XCTAssertEqual(evaluator.validateDump(dump, at: ["rooms", "missing"]), [])
        XCTAssertEqual(evaluator.validateNode(dump, at: ["rooms", "r3"]).map(\.pointer), ["/rooms/r3"])
        XCTAssertEqual(evaluator.validateNode(dump, at: ["rooms", "r2"]), [])
        XCTAssertEqual(evaluator.validateNode(dump, at: ["nowhere"]), [])
    }

    func testStrictReportsTopmostUnwritableSubtrees() throws {
        let rules = try load(chatRules)
        let dump = InMemoryRulesSource(try json(chatDump))
        // Signed in: the root `.write` grants everything.
        let signedIn = RulesEvaluator(rules: rules, auth: try json(#"{"uid": "ann"}"#), now: 0).validateDump(dump, strict: true)
        XCTAssertFalse(signedIn.contains { $0.rule == .write })
        // Anonymous: only /users/guest may be written, so the other users and all rooms are reported.
        let anonymous = RulesEvaluator(rules: rules, now: 0).validateDump(dump, strict: true).filter { $0.rule == .write }
        XCTAssertEqual(anonymous.map(\.pointer), ["/users/ann", "/users/bob", "/users/eve", "/rooms"])
        let record = RulesEvaluator(rules: rules, now: 0).validateDump(dump, at: ["users", "ann"], strict: true)
        XCTAssertEqual(record.map(\.pointer), ["/users/ann"])
        let everything = try load("{\"rules\": {\"a\": {\".validate\": true}}}")
        XCTAssertEqual(RulesEvaluator(rules: everything, now: 0).validateDump(dump, strict: true).map(\.pointer), [""])
    }

    func testWildcardsCaptureKeys() throws {
        let rules = try load(
            """
            {"rules": {"$a": {"$b": {".validate": "$a != $b && newData.val() == $a + '/' + $b"}, "same": {".validate": "$a == 'x'"}}}}
            """)
        let dump = InMemoryRulesSource(try json(#"{"x": {"y": "x/y", "x": "x/x", "same": {"k": 1}}, "z": {"same": 2}}"#))
        let findings = RulesEvaluator(rules: rules, now: 0).validateDump(dump)
        XCTAssertEqual(findings.map(\.pointer), ["/x/x", "/z/same"])
    }

    func testWriteAndReadSimulation() throws {
        let rules = try load(
            """
            {"rules": {"posts": {"$id": {".read": "data.child('public').val() == true", ".write": "!data.exists() && newData.child('by').val() == auth.uid",
              ".validate": "newData.hasChildren(['by'])", "by": {".validate": "newData.isString()"}, "at": {".validate": "newData.val() <= now"}}}}}
            """)
        let before = try json(#"{"posts": {"p1": {"by": "ann", "public": true}}}"#)
        let evaluator = RulesEvaluator(rules: rules, auth: try json(#"{"uid": "bob"}"#), now: 100)
        let ok = try json(#"{"posts": {"p1": {"by": "ann", "public": true}, "p2": {"by": "bob", "at": 99}}}"#)
        XCTAssertTrue(
            evaluator.checkWrite(at: ["posts", "p2"], data: InMemoryRulesSource(before), newData: InMemoryRulesSource(ok)).allowed)
        let late = try json(#"{"posts": {"p1": {"by": "ann", "public": true}, "p2": {"by": "bob", "at": 101}}}"#)
        let result = evaluator.checkWrite(at: ["posts", "p2"], data: InMemoryRulesSource(before), newData: InMemoryRulesSource(late))
        XCTAssertTrue(result.permitted)
        XCTAssertEqual(result.failures.map(\.pointer), ["/posts/p2/at"])
        let overwrite = try json(#"{"posts": {"p1": {"by": "bob"}}}"#)
        XCTAssertFalse(
            evaluator.checkWrite(at: ["posts", "p1"], data: InMemoryRulesSource(before), newData: InMemoryRulesSource(overwrite)).permitted)
        XCTAssertTrue(evaluator.canRead(at: ["posts", "p1"], data: InMemoryRulesSource(before)))
        XCTAssertFalse(evaluator.canRead(at: ["posts", "p2"], data: InMemoryRulesSource(before)))
        XCTAssertFalse(evaluator.canRead(at: ["posts"], data: InMemoryRulesSource(before)))
    }
}
