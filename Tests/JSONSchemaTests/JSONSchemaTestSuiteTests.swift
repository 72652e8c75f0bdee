import Foundation
import JSONSchema
import JSONStream
import TestSupport
import XCTest

/// Runs the official JSON-Schema-Test-Suite (`../shared/testdata/JSON-Schema-Test-Suite`) against
/// `JSONSchema`: every required test of draft 2020-12 and draft-07 must pass, and the optional
/// `format` tests (with format assertion on) are run and counted.
final class JSONSchemaTestSuiteTests: XCTestCase {
    /// Required tests that are known to fail, as `"<file>: <group> / <test>"` with the reason.
    /// Empty: all required tests pass. A listed test that starts passing fails the run, so the
    /// list can only shrink deliberately.
    static let expectedFailures: [String: String] = [:]

    /// The suite's required test counts (COUNTS.txt without `optional/`); a changed suite fails here.
    static let requiredTotals = ["draft2020-12": 1299, "draft7": 927]

    func testDraft2020_12() throws {
        try runRequired("draft2020-12", dialect: .draft2020_12)
    }

    func testDraft7() throws {
        try runRequired("draft7", dialect: .draft7)
    }

    /// Optional: reported, not required to pass.
    func testOptionalFormatDraft2020_12() throws {
        let suite = try TestData.directory("JSON-Schema-Test-Suite")
        let folder = suite.appendingPathComponent("tests/draft2020-12/optional/format")
        let result = try run(folder: folder, suite: suite, dialect: .draft2020_12, assertFormat: true)
        print("JSON-Schema-Test-Suite draft2020-12 optional/format: \(result.passed)/\(result.total) passed")
        for line in result.perFile { print("  " + line) }
        for failure in result.failures { print("  optional failure: \(failure)\(result.details[failure] ?? "")") }
        XCTAssertGreaterThan(result.total, 0)
    }

    private func runRequired(_ draft: String, dialect: JSONSchema.Dialect) throws {
        let suite = try TestData.directory("JSON-Schema-Test-Suite")
        let result = try run(folder: suite.appendingPathComponent("tests/\(draft)"), suite: suite, dialect: dialect, assertFormat: false)
        print("JSON-Schema-Test-Suite \(draft): \(result.passed)/\(result.total) passed")
        for line in result.perFile { print("  " + line) }
        XCTAssertEqual(result.total, Self.requiredTotals[draft], "the number of required \(draft) tests changed")
        let expected = Self.expectedFailures.filter { $0.key.hasPrefix("\(draft)/") }
        for failure in result.failures where expected[failure] == nil {
            XCTFail("failed: \(failure)\(result.details[failure] ?? "")")
        }
        for (name, reason) in expected where !result.failures.contains(name) {
            XCTFail("expected failure now passes (remove it from the list): \(name) [\(reason)]")
        }
    }

    private struct Result {
        var passed = 0
        var total = 0
        var perFile: [String] = []
        var failures: [String] = []
        /// Extra information for some failures (a compile error).
        var details: [String: String] = [:]
    }

    /// Runs every `*.json` file directly in `folder` (not subfolders).
    private func run(folder: URL, suite: URL, dialect: JSONSchema.Dialect, assertFormat: Bool) throws -> Result {
        let resolver = JSONSchemaResolver.directory(suite.appendingPathComponent("remotes"), servedAs: "http://localhost:1234/")
        let options = JSONSchema.Options(defaultDialect: dialect, assertFormat: assertFormat)
        let draft = folder.path.components(separatedBy: "/tests/").last ?? folder.lastPathComponent
        var result = Result()
        for file in try TestData.files(in: folder, withExtension: "json") {
            let bytes = try [UInt8](Data(contentsOf: file))
            guard case .array(let groups) = try JSONReader(source: MemoryByteSource(bytes)).readValue() else {
                XCTFail("\(file.lastPathComponent) is not an array")
                continue
            }
            var filePassed = 0, fileTotal = 0
            for group in groups {
                let groupName = group[segment: "description"]?.stringValue ?? "?"
                let tests = group[segment: "tests"]?.arrayValue ?? []
                let schema: JSONSchema?
                var compileError = ""
                do {
                    schema = try JSONSchema.compile(group[segment: "schema"] ?? .bool(true), resolver: resolver, options: options)
                } catch {
                    schema = nil
                    compileError = " (compile error: \(error))"
                }
                for test in tests {
                    fileTotal += 1
                    let data = test[segment: "data"] ?? .null
                    let valid = test[segment: "valid"]?.boolValue ?? false
                    let name = "\(draft)/\(file.lastPathComponent): \(groupName) / \(test[segment: "description"]?.stringValue ?? "?")"
                    guard let schema else {
                        result.failures.append(name)
                        result.details[name] = compileError
                        continue
                    }
                    let findings = schema.validate(data)
                    // The fast check and the full report must agree with each other and the suite.
                    if schema.isValid(data) == valid && findings.isEmpty == valid {
                        filePassed += 1
                    } else {
                        result.failures.append(name)
                    }
                }
            }
            result.passed += filePassed
            result.total += fileTotal
            result.perFile.append("\(file.lastPathComponent): \(filePassed)/\(fileTotal)")
        }
        return result
    }
}
