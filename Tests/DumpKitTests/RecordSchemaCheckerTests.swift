import Foundation
import JSONSchema
import JSONStream
import TestSupport
import XCTest

@testable import DumpKit

/// `ValidateJob`'s schema findings (records read onto tapes, checked on a thread of their own)
/// against a per-record reference: each record built as a `JSONValue` and validated alone.
final class RecordSchemaCheckerTests: XCTestCase {
    /// A generated errors dump (about 1% invalid records, read across buffer refills).
    func testGeneratedErrorsDumpMatchesPerRecordValidation() throws {
        let dir = try TemporaryDirectory()
        let dump = dir.path("errors.json")
        _ = try Shell.run(
            "python3",
            [
                TestData.projectRoot.appendingPathComponent("Scripts/gen_dataset.py").path,
                "errors", "--size", "3MB", "--seed", "7", "-o", dump,
            ])
        let count = try assertSameSchemaFindings(dump: dump, pattern: "/v1/todolist/{id}", schema: "schemas/todolist/v1.schema.json")
        XCTAssertGreaterThan(count, 20)
    }

    /// Records that are not objects, huge strings across the 1 MiB read buffer, deep nesting,
    /// non-ASCII and duplicate keys, numbers at the edges of `integer`.
    func testAwkwardRecordsMatchPerRecordValidation() throws {
        let dir = try TemporaryDirectory()
        let schema = dir.path("schema.json")
        try Data(
            #"""
            {"type": "object", "required": ["n", "名前"], "additionalProperties": false,
             "properties": {
               "n": {"type": "integer", "minimum": 0, "maximum": 1e300},
               "名前": {"type": "string", "minLength": 2, "maxLength": 3000000, "pattern": "^[^x]"},
               "café": {"const": {"a": [1, 2.0]}},
               "deep": {"$ref": "#/$defs/deep"},
               "tags": {"type": "array", "uniqueItems": true, "items": {"enum": ["a", "b", "ü", 1]}},
               "either": {"oneOf": [{"type": "string"}, {"type": "number", "multipleOf": 0.5}]}
             },
             "$defs": {"deep": {"anyOf": [{"type": "null"}, {"type": "array", "items": {"$ref": "#/$defs/deep"}}]}}}
            """#.utf8
        ).write(to: URL(fileURLWithPath: schema))
        let huge = String(repeating: "é", count: 1_100_000)
        let deep = String(repeating: "[", count: 30) + "null" + String(repeating: "]", count: 30)
        let records: [String] = [
            #"{"n": 1, "名前": "ok"}"#,
            #"{"n": 1.0, "名前": "float one is an integer"}"#,
            #"{"n": -0, "名前": "minus zero"}"#,
            #"{"n": 1e400, "名前": "past the maximum"}"#,
            #"{"n": 1.5, "名前": "x not an integer"}"#,
            #"{"n": 1, "名前": "\#(huge)"}"#,
            #"{"n": 1, "名前": "\#(huge)x"}"#,
            #"{"n": 2, "名前": "dup", "n": "dup", "n": 3}"#,
            #"{"n": 2, "名前": "ok", "cafe\u0301": {"a": [1, 2]}, "café": {"a": [1.0, 2]}}"#,
            #"{"n": 2, "名前": "ok", "café": {"a": [1, 3]}}"#,
            #"{"n": 2, "名前": "ok", "deep": \#(deep)}"#,
            #"{"n": 2, "名前": "ok", "deep": [[[1]]]}"#,
            #"{"n": 2, "名前": "ok", "tags": ["a", "ü", 1, 1.0]}"#,
            #"{"n": 2, "名前": "ok", "either": 2.5, "extra": {"k": [1, {"m": 2}]}}"#,
            #"{"n": 2, "名前": "ok", "either": 2.25}"#,
            #""a string record""#, "42", "null", "[1, 2, 3]", "{}",
        ]
        let text =
            "{\n  \"v1\": {\"todolist\": {\n" + records.enumerated().map { "    \"r\($0.offset)\": \($0.element)" }.joined(separator: ",\n")
            + "\n  }}\n}\n"
        let dump = dir.path("dump.json")
        try Data(text.utf8).write(to: URL(fileURLWithPath: dump))
        let count = try assertSameSchemaFindings(dump: dump, pattern: "/v1/todolist/{id}", schema: schema)
        XCTAssertGreaterThan(count, 12)
    }

    /// Runs `ValidateJob` and checks its schema findings (in order, with line:column) against each
    /// record read as a `JSONValue` and validated alone, positions found by counting the values
    /// before the failing one in document order (the way `validate` found them before tapes).
    private func assertSameSchemaFindings(
        dump: String, pattern: String, schema: String,
        file: StaticString = #filePath, line: UInt = #line
    ) throws -> Int {
        let schemaPath = schema.hasPrefix("/") ? schema : TestData.projectRoot.appendingPathComponent(schema).path
        var job = ValidateJob(input: dump)
        job.schemas = [try SchemaBinding.load(pattern: pattern, file: schemaPath)]
        job.maxFindings = .max
        let got = try job.run().findings.filter { $0.rule.hasPrefix("schema:") }

        let binding = job.schemas[0]
        let reader = DumpReader(
            source: MemoryByteSource([UInt8](try Data(contentsOf: URL(fileURLWithPath: dump)))), patterns: [binding.pattern])
        var starts: [(line: Int, column: Int)] = []
        reader.reader.tokenObserver = { token, r in
            switch token {
            case .name, .endObject, .endArray, .end: return
            default: starts.append(r.location)
            }
        }
        var expected: [Finding] = []
        while let record = try reader.next(passThrough: DiscardingPassThrough()) {
            let value = try XCTUnwrap(record.value)
            let first = starts.count - Self.count(value)
            for violation in binding.schema.validate(value, pointerPrefix: record.pointer) {
                var f = Finding(violation)
                let segments = JSONPointer.segments(String(f.pointer.dropFirst(record.pointer.count))) ?? []
                let at = starts[first + (Self.index(of: segments[...], in: value) ?? 0)]
                f.line = at.line
                f.column = at.column
                f.group = "schema:" + binding.file
                expected.append(f)
            }
        }
        XCTAssertEqual(got.count, expected.count, file: file, line: line)
        for (g, e) in zip(got, expected) where g != e {
            XCTFail("validate: \(g)\nexpected: \(e)", file: file, line: line)
            break
        }
        return got.count
    }

    /// How many values come before the one at `path` in document order, counting `value` itself.
    private static func index(of path: ArraySlice<String>, in value: JSONValue) -> Int? {
        guard let key = path.first else { return 0 }
        var before = 1
        switch value {
        case .object(let o):
            for m in o.members {
                if m.key == key { return index(of: path.dropFirst(), in: m.value).map { before + $0 } }
                before += count(m.value)
            }
            return nil
        case .array(let a):
            guard let n = Int(key), n >= 0, n < a.count, key == String(n) else { return nil }
            for e in a[..<n] { before += count(e) }
            return index(of: path.dropFirst(), in: a[n]).map { before + $0 }
        default:
            return nil
        }
    }

    /// The number of values in `value`, itself included.
    private static func count(_ value: JSONValue) -> Int {
        switch value {
        case .object(let o): return o.members.reduce(1) { $0 + count($1.value) }
        case .array(let a): return a.reduce(1) { $0 + count($1) }
        default: return 1
        }
    }
}
