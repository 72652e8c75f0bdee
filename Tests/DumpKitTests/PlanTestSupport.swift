import Foundation
import JSONStream
import TestSupport
import XCTest

@testable import DumpKit

/// Helpers for the plan tests: reading JSON, walking a dump for records, and rebuilding it.
enum PlanFixtures {
    /// Parses JSON text.
    static func json(_ text: String) throws -> JSONValue {
        try JSONReader(source: MemoryByteSource(Array(text.utf8))).readValue()
    }

    /// Reads a JSON file below the project root.
    static func json(file relativePath: String) throws -> JSONValue {
        let url = TestData.projectRoot.appendingPathComponent(relativePath)
        return try JSONReader(source: MemoryByteSource(Array(try Data(contentsOf: url)))).readValue()
    }

    /// A file below the project root.
    static func path(_ relativePath: String) -> String { TestData.projectRoot.appendingPathComponent(relativePath).path }

    /// The canonical pretty text of a value (members in the database's key order).
    static func canonical(_ value: JSONValue) throws -> String {
        let sink = MemoryByteSink()
        let writer = JSONWriter(sink: sink, options: .init(pretty: true, sortKeys: true))
        try writer.value(value)
        try writer.flush()
        return sink.string
    }

    /// A plan from YAML text, named `test.yaml` in errors.
    static func plan(_ yaml: String, file: String = "test.yaml") throws -> MigrationPlan {
        try MigrationPlan.parse(text: yaml, fileName: file)
    }

    /// The records of `tree` at paths the patterns match, in document order (as a reader yields them).
    static func records(in tree: JSONValue, patterns: [PathPattern]) -> [Record] {
        var out: [Record] = []
        func walk(_ value: JSONValue, _ path: [String]) {
            for p in patterns {
                if let captures = p.match(path) {
                    out.append(Record(path: path, captures: captures, value: value))
                    return
                }
            }
            guard case .object(let o) = value, patterns.contains(where: { $0.isPrefix(path) }) else { return }
            for m in o.members { walk(m.value, path + [m.key]) }
        }
        walk(tree, [])
        return out
    }

    /// Runs the plans over every record of `tree` and rebuilds the tree: records are removed from where
    /// they were read and their outputs placed at their paths (objects left empty disappear).
    static func migrate(_ tree: JSONValue, _ runner: PlanRunner) throws -> (tree: JSONValue, rejects: [Reject]) {
        var result = tree
        var outputs: [Record] = []
        var rejects: [Reject] = []
        for record in records(in: tree, patterns: runner.patterns) {
            let r = try runner.apply(record)
            result.removeField(FieldPath(segments: record.path))
            outputs += r.records
            rejects += r.rejects
        }
        for record in outputs {
            let field = FieldPath(segments: record.path)
            XCTAssertNil(result.field(field), "\(record.pointer) is written twice")
            try result.setField(field, record.value!)
        }
        return (result, rejects)
    }
}
