import Foundation
import JSONStream
import TestSupport
import XCTest

@testable import JSONSchema

/// Schemas evaluated on tapes the reader fills (as `validate` reads records) against the same
/// instances as `JSONValue`s: the same verdicts and violations over the whole JSON-Schema-Test-Suite.
final class JSONSchemaTapeTests: XCTestCase {
    func testSuiteInstancesReadOntoTapesGiveTheSameVerdictsAndFindings() throws {
        let suite = try TestData.directory("JSON-Schema-Test-Suite")
        let resolver = JSONSchemaResolver.directory(suite.appendingPathComponent("remotes"), servedAs: "http://localhost:1234/")
        let runs: [(String, JSONSchema.Dialect, Bool)] = [
            ("draft2020-12", .draft2020_12, false), ("draft7", .draft7, false),
            ("draft2020-12/optional/format", .draft2020_12, true),
        ]
        let tape = JSONTape()
        for (folder, dialect, assertFormat) in runs {
            let options = JSONSchema.Options(defaultDialect: dialect, assertFormat: assertFormat)
            var instances = 0
            for file in try TestData.files(in: suite.appendingPathComponent("tests/" + folder), withExtension: "json") {
                guard case .array(let groups) = try JSONReader(source: MemoryByteSource([UInt8](Data(contentsOf: file)))).readValue() else {
                    XCTFail("\(file.lastPathComponent) is not an array")
                    continue
                }
                for group in groups {
                    let schema = try JSONSchema.compile(group[segment: "schema"] ?? .bool(true), resolver: resolver, options: options)
                    for test in group[segment: "tests"]?.arrayValue ?? [] {
                        let data = test[segment: "data"] ?? .null
                        let name =
                            "\(folder)/\(file.lastPathComponent): \(group[segment: "description"]?.stringValue ?? "?") / \(test[segment: "description"]?.stringValue ?? "?")"
                        // Every token crosses a refill of a 64-byte buffer fed 5 bytes at a time.
                        let reader = JSONReader(
                            source: MemoryByteSource(try Self.compact(data), chunkSize: 5), options: .init(bufferSize: 64))
                        try reader.readValue(into: tape)
                        XCTAssertEqual(schema.isValid(tape), test[segment: "valid"]?.boolValue, name)
                        XCTAssertEqual(schema.isValid(tape), schema.isValid(data), name)
                        XCTAssertEqual(schema.validate(tape, pointerPrefix: "/r"), schema.validate(data, pointerPrefix: "/r"), name)
                        instances += 1
                    }
                }
            }
            print("JSON-Schema-Test-Suite \(folder): \(instances) instances, tape and JSONValue agree")
            XCTAssertGreaterThan(instances, 700)
        }
    }

    private static func compact(_ value: JSONValue) throws -> [UInt8] {
        let sink = MemoryByteSink()
        let writer = JSONWriter(sink: sink)
        try writer.value(value)
        try writer.flush()
        return sink.bytes
    }
}
