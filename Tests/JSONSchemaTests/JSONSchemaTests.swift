import Foundation
import JSONStream
import TestSupport
import XCTest

@testable import JSONSchema

final class JSONSchemaTests: XCTestCase {
    private func json(_ text: String) throws -> JSONValue {
        try JSONReader(source: MemoryByteSource(text)).readValue()
    }

    private func compile(_ text: String, options: JSONSchema.Options = .init(), resolver: JSONSchemaResolver = .none) throws -> JSONSchema {
        try JSONSchema.compile(json(text), resolver: resolver, options: options)
    }

    private func compileError(_ text: String) throws -> JSONSchemaError? {
        let schema = try json(text)
        do throws(JSONSchemaError) {
            _ = try JSONSchema.compile(schema)
            return nil
        } catch {
            return error
        }
    }

    func testFindingsNameRuleInstancePointerAndMessage() throws {
        let schema = try compile(
            """
            {"type": "object", "required": ["title", "done"],
             "properties": {
                "title": {"type": "string", "maxLength": 5, "pattern": "^[a-z]+$"},
                "done": {"type": "boolean"},
                "tags": {"type": "array", "items": {"enum": ["a", "b"]}},
                "n": {"minimum": 0}},
             "additionalProperties": false}
            """)
        let record = try json(#"{"title": "Hello World", "tags": ["a", "c"], "n": -1, "extra/key": true, "done": false}"#)
        let findings = schema.validate(record, pointerPrefix: "/v1/todo/-K1")
        XCTAssertEqual(
            findings.map { "\($0.keyword) \($0.pointer)" },
            [
                "maxLength /v1/todo/-K1/title",
                "pattern /v1/todo/-K1/title",
                "enum /v1/todo/-K1/tags/1",
                "minimum /v1/todo/-K1/n",
                "additionalProperties /v1/todo/-K1/extra~1key",
            ])
        XCTAssertTrue(findings.allSatisfy { !$0.message.contains("\n") })
        XCTAssertEqual(findings[0].message, "string is longer than 5 characters (11)")
        XCTAssertEqual(findings[2].message, #"value must be one of "a", "b""#)
        XCTAssertEqual(findings[4].message, #"property "extra/key" is not allowed"#)

        let missing = schema.validate(try json(#"{"title": "ok"}"#))
        XCTAssertEqual(missing.map(\.message), [#"missing required property "done""#])
        XCTAssertEqual(missing.first?.pointer, "")
        XCTAssertTrue(schema.validate(try json(#"{"title": "ok", "done": true}"#)).isEmpty)
        XCTAssertTrue(schema.isValid(try json(#"{"title": "ok", "done": true}"#)))
        XCTAssertFalse(schema.isValid(record))
    }

    /// Findings say where the failed keyword is written (ajv's `schemaPath`), through `$ref`s too;
    /// members that are no keyword of the draft are listed with a near keyword when there is one.
    func testFindingsCarryTheSchemaPathAndUnknownKeywordsAreListed() throws {
        let common = try json(#"{"$defs": {"name": {"type": "string", "minLength": 2}}}"#)
        let resolver = JSONSchemaResolver { uri in uri == "https://example.com/common.json" ? common : nil }
        let schema = try JSONSchema.compile(
            json(
                """
                {"$id": "https://example.com/todo.json", "required": ["title"],
                 "properties": {"title": {"$ref": "#/$defs/title"}, "owner": {"$ref": "common.json#/$defs/name"},
                                "tags": {"items": {"type": "string", "minLenght": 1}}},
                 "x-ui": {"widget": "list"}, "additionalProperties": false, "$defs": {"title": {"maxLength": 3, "descripton": "typo"}}, "colour": "red"}
                """), resolver: resolver)
        let findings = schema.validate(try json(#"{"title": "long", "owner": "x", "tags": [1], "extra": 0}"#))
        XCTAssertEqual(
            findings.map { "\($0.pointer) \($0.schemaPath)" },
            [
                "/title #/$defs/title/maxLength",
                "/owner https://example.com/common.json#/$defs/name/minLength",
                "/tags/0 #/properties/tags/items/type",
                "/extra #/additionalProperties",
            ])
        XCTAssertEqual(schema.validate(try json("{}")).map(\.schemaPath), ["#/required"])
        XCTAssertEqual(
            schema.unknownKeywords.map { "\($0.schemaPath) \($0.suggestion ?? "-")" }.sorted(),
            [
                "#/$defs/title/descripton description",
                "#/colour -",
                "#/properties/tags/items/minLenght minLength",
            ])
        // A draft-07 keyword is unknown to 2020-12 and the other way round.
        XCTAssertEqual(
            try compile(#"{"additionalItems": false, "dependentRequired": {}}"#).unknownKeywords.map(\.name), ["additionalItems"])
        XCTAssertEqual(
            try compile(#"{"$schema": "http://json-schema.org/draft-07/schema#", "dependentRequired": {}}"#).unknownKeywords.map(\.name),
            ["dependentRequired"])
    }

    func testPatternOverBudgetIsAViolation() throws {
        let schema = try JSONSchema.compile(
            try JSONReader(
                bytes: Array(
                    #"""
                    {"properties": {"name": {"pattern": "^(a+)+\\1$"}}, "patternProperties": {"^(b+)+\\1$": {}}}
                    """#.utf8)
            ).readValue())
        let slowKey = String(repeating: "b", count: 30) + "!"
        let text = #"{"name": "\#(String(repeating: "a", count: 30))!", "\#(slowKey)": 1}"#
        let instance = try JSONReader(bytes: Array(text.utf8)).readValue()
        let violations = schema.validate(instance)
        XCTAssertEqual(violations.map(\.keyword), ["pattern-budget", "pattern-budget"])
        XCTAssertEqual(Set(violations.map(\.pointer)), ["/name", "/" + slowKey])
        XCTAssertTrue(violations[0].message.contains(#""^(a+)+\\1$""#), violations[0].message)
        XCTAssertTrue(violations[0].message.contains("31-byte string"), violations[0].message)
        XCTAssertFalse(schema.isValid(instance))
    }

    func testApplicatorFindings() throws {
        let schema = try compile(#"{"anyOf": [{"type": "string"}, {"type": "integer"}], "not": {"const": 3}}"#)
        XCTAssertEqual(schema.validate(.bool(true)).map(\.keyword), ["anyOf"])
        XCTAssertEqual(schema.validate(try json("3")).map(\.keyword), ["not"])
        let oneOf = try compile(#"{"oneOf": [{"minimum": 1}, {"maximum": 5}]}"#)
        XCTAssertEqual(oneOf.validate(try json("3")).map(\.message), ["value matches oneOf alternatives 0 and 1; exactly one must match"])
    }

    func testCompileErrorsPointAtTheKeyword() throws {
        let negative = try XCTUnwrap(compileError(#"{"properties": {"a": {"minLength": -1}}}"#))
        XCTAssertEqual(negative.kind, .invalidKeyword)
        XCTAssertEqual(negative.pointer, "/properties/a/minLength")

        let type = try XCTUnwrap(compileError(#"{"items": {"type": 1}}"#))
        XCTAssertEqual(type.pointer, "/items/type")

        let pattern = try XCTUnwrap(compileError(#"{"pattern": "(a"}"#))
        XCTAssertEqual(pattern.pointer, "/pattern")
        XCTAssertTrue(pattern.message.contains("invalid regular expression"), pattern.message)

        let ref = try XCTUnwrap(compileError(##"{"$defs": {"a": true}, "properties": {"x": {"$ref": "#/$defs/b"}}}"##))
        XCTAssertEqual(ref.kind, .unresolvableReference)
        XCTAssertEqual(ref.pointer, "/properties/x/$ref")
        XCTAssertTrue(ref.message.contains(##""#/$defs/b""##), ref.message)
        XCTAssertTrue(ref.description.hasPrefix("urn:dumpkit:schema#/properties/x/$ref: "), ref.description)

        let remote = try XCTUnwrap(compileError(#"{"$ref": "https://example.com/other.json"}"#))
        XCTAssertEqual(remote.kind, .unresolvableReference)

        let dialect = try XCTUnwrap(compileError(#"{"$schema": "https://json-schema.org/draft/2019-09/schema"}"#))
        XCTAssertEqual(dialect.kind, .unsupportedDialect)

        XCTAssertNil(try compileError(#"{"maxLength": 2.0, "required": [], "type": ["string", "null"]}"#))
    }

    func testNumbersAndEqualityAreMathematical() throws {
        XCTAssertTrue(try compile(#"{"const": 1}"#).isValid(json("1.0")))
        XCTAssertTrue(try compile(#"{"enum": [100]}"#).isValid(json("1e2")))
        XCTAssertFalse(try compile(#"{"const": 12345678901234567890}"#).isValid(json("12345678901234567891")))
        XCTAssertFalse(try compile(#"{"uniqueItems": true}"#).isValid(json(#"[1, {"a": 1, "b": [2]}, 1.0]"#)))
        XCTAssertFalse(try compile(#"{"uniqueItems": true}"#).isValid(json(#"[{"a": 1, "b": 2}, {"b": 2.0, "a": 1}]"#)))
        let many = "[" + (0..<40).map(String.init).joined(separator: ",") + ",39.0]"
        XCTAssertFalse(try compile(#"{"uniqueItems": true}"#).isValid(json(many)))
        XCTAssertTrue(try compile(#"{"uniqueItems": true}"#).isValid(json(#"["é", "e\u0301", 1, true]"#)))
        XCTAssertTrue(try compile(#"{"multipleOf": 0.01}"#).isValid(json("19.99")))
        XCTAssertTrue(try compile(#"{"multipleOf": 0.0001}"#).isValid(json("0.0075")))
        XCTAssertFalse(try compile(#"{"multipleOf": 0.123456789}"#).isValid(json("1e308")))
        XCTAssertFalse(try compile(#"{"maximum": 18446744073709551615}"#).isValid(json("18446744073709551616")))
        XCTAssertTrue(try compile(#"{"exclusiveMinimum": 0.1}"#).isValid(json("0.10000000000000001")))
        XCTAssertTrue(try compile(#"{"type": "integer"}"#).isValid(json("1.0e3")))
        XCTAssertFalse(try compile(#"{"type": "integer"}"#).isValid(json("1.5")))
    }

    func testStringLengthCountsCodePoints() throws {
        let schema = try compile(#"{"minLength": 2, "maxLength": 2}"#)
        XCTAssertTrue(schema.isValid(.string("💩💩")))
        XCTAssertTrue(schema.isValid(.string("e\u{301}")))
        XCTAssertFalse(schema.isValid(.string("💩")))
    }

    func testDraft7RefOverridesSiblings() throws {
        let text = ##"{"definitions": {"a": {"type": "array"}}, "properties": {"x": {"$ref": "#/definitions/a", "maxItems": 1}}}"##
        let draft7 = try compile(text, options: .init(defaultDialect: .draft7))
        let draft2020 = try compile(text)
        let instance = try json(#"{"x": [1, 2]}"#)
        XCTAssertTrue(draft7.isValid(instance))
        XCTAssertFalse(draft2020.isValid(instance))
        let bySchema = try compile(
            #"{"$schema": "http://json-schema.org/draft-07/schema#", "items": [{"type": "string"}], "additionalItems": false}"#)
        XCTAssertTrue(bySchema.isValid(try json(#"["a"]"#)))
        XCTAssertEqual(bySchema.validate(try json(#"["a", 1]"#)).map(\.keyword), ["additionalItems"])
    }

    func testMetaschemasAreBuiltIn() throws {
        let meta = try compile(#"{"$ref": "https://json-schema.org/draft/2020-12/schema"}"#)
        XCTAssertTrue(meta.isValid(try json(#"{"properties": {"a": {"type": "string"}}}"#)))
        XCTAssertFalse(meta.isValid(try json(#"{"properties": {"a": {"minLength": -1}}}"#)))
        let draft7 = try compile(#"{"$ref": "http://json-schema.org/draft-07/schema#"}"#)
        XCTAssertFalse(draft7.isValid(try json(#"{"type": 1}"#)))
    }

    func testDirectoryResolverServesFilesOnly() throws {
        let dir = try TemporaryDirectory()
        try Data(#"{"$defs": {"id": {"type": "string", "pattern": "^-"}}}"#.utf8).write(to: dir.url.appendingPathComponent("common.json"))
        let resolver = JSONSchemaResolver.directory(dir.url, servedAs: "https://schemas.example/")
        let schema = try compile(
            #"{"$id": "https://schemas.example/todo.json", "properties": {"id": {"$ref": "common.json#/$defs/id"}}}"#,
            resolver: resolver)
        XCTAssertTrue(schema.isValid(try json(#"{"id": "-Kabc"}"#)))
        XCTAssertFalse(schema.isValid(try json(#"{"id": "Kabc"}"#)))
        XCTAssertThrowsError(try compile(#"{"$ref": "https://schemas.example/../etc/passwd"}"#, resolver: resolver))
        XCTAssertThrowsError(try compile(#"{"$ref": "https://schemas.example/missing.json"}"#, resolver: resolver))
    }

    func testFormatIsAnAnnotationUnlessAsserted() throws {
        let text = #"{"format": "date"}"#
        XCTAssertTrue(try compile(text).isValid(.string("2024-02-30")))
        let asserted = try compile(text, options: .init(assertFormat: true))
        XCTAssertTrue(asserted.isValid(.string("2024-02-29")))
        XCTAssertEqual(asserted.validate(.string("2024-02-30")).map(\.message), ["string is not a valid date"])
        XCTAssertTrue(asserted.isValid(.number("3")))
    }

    func testUnevaluatedPropertiesSeesAdjacentAndNestedAnnotations() throws {
        let schema = try compile(
            """
            {"properties": {"a": true}, "allOf": [{"properties": {"b": true}}],
             "anyOf": [{"properties": {"c": {"const": 1}}}, true], "unevaluatedProperties": false}
            """)
        XCTAssertTrue(schema.isValid(try json(#"{"a": 1, "b": 2, "c": 1}"#)))
        XCTAssertEqual(schema.validate(try json(#"{"a": 1, "c": 2}"#)).map { "\($0.keyword) \($0.pointer)" }, ["unevaluatedProperties /c"])
    }

    func testReferenceCycleWithoutProgressFailsInsteadOfLooping() throws {
        let schema = try compile(##"{"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}"##)
        // Run on a secondary thread too: the guard must trip before a default-sized stack overflows.
        final class Box: @unchecked Sendable { var violations: [SchemaViolation] = [] }
        let box = Box()
        let done = expectation(description: "validated")
        let thread = Thread {
            box.violations = schema.validate(.null)
            done.fulfill()
        }
        thread.start()
        wait(for: [done], timeout: 30)
        XCTAssertEqual(box.violations.map(\.keyword), ["$ref"])
    }
}
