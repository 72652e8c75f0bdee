import Foundation
import JSONStream
import TestSupport
import XCTest

@testable import FirebaseRules

/// Runs third-party rules test material from `../shared/testdata/rules-cases` (see its README):
/// targaryen's expression fixtures, bolt's steps recorded against a live server, targaryen's rules
/// documents that must load or be rejected, and the real rules files in `../shared/testdata/real-rules`.
final class RulesConformanceTests: XCTestCase {
    /// Fixture indexes we do not pass, each with why; the test fails when one of them starts passing.
    static let targaryenExpectedFailures: [Int: String] = [:]
    /// Bolt steps (`<test> #<step index>`) we do not pass, each with why.
    static let boltExpectedFailures: [String: String] = [:]

    func testTargaryenExpressionFixtures() throws {
        try targaryenExpressionFixtures("in memory") { InMemoryRulesSource($0) }
    }

    func testTargaryenExpressionFixturesOnDisk() throws {
        try targaryenExpressionFixtures("on disk") { try OnDiskRulesSourceTests.source($0) }
    }

    private func targaryenExpressionFixtures(_ sourceName: String, _ makeSource: (JSONValue) throws -> any RulesSnapshotSource) throws {
        let dir = try TestData.directory("rules-cases")
        let fixtures = try Self.readJSON(dir.appendingPathComponent("targaryen/parser-fixtures.json"))
        let users = try XCTUnwrap(fixtures[segment: "users"]?.objectValue)
        let tests = try XCTUnwrap(fixtures[segment: "tests"]?.arrayValue)
        XCTAssertEqual(tests.count, 186)
        var failures: [Int: String] = [:]
        for (i, test) in tests.enumerated() {
            let rule = test[segment: "rule"]?.stringValue ?? ""
            let isValid = test[segment: "isValid"]?.boolValue ?? true
            let failAtRuntime = test[segment: "failAtRuntime"]?.boolValue ?? false
            let expected = test[segment: "evaluateTo"]?.boolValue
            let wild = test[segment: "wildchildren"]?.objectValue ?? JSONObject()
            let compiled: RulesRule
            do {
                compiled = try RulesRule(expression: rule, kind: .read, wildcards: wild.keys)
            } catch {
                if isValid { failures[i] = "`\(rule)`: rejected (\(error)), expected it to load" }
                continue
            }
            guard isValid else {
                failures[i] = "`\(rule)`: loaded, expected a rejection"
                continue
            }
            let database = try makeSource(test[segment: "data"] ?? .null)
            let context = RulesContext(
                auth: users[test[segment: "user"]?.stringValue ?? "unauth"] ?? .null, now: 1_500_000_000_000,
                root: RulesSnapshot(source: database), data: RulesSnapshot(source: database),
                query: test[segment: "query"] ?? .object(JSONObject()), captures: wild.members.compactMap(\.value.stringValue))
            do {
                let value = try compiled.evaluate(in: context)
                if failAtRuntime {
                    failures[i] = "`\(rule)`: evaluated to \(value), expected a run-time error"
                } else if value != expected {
                    failures[i] = "`\(rule)`: evaluated to \(value), expected \(expected.map(String.init) ?? "nil")"
                }
            } catch {
                if !failAtRuntime { failures[i] = "`\(rule)`: run-time error (\(error)), expected \(expected.map(String.init) ?? "nil")" }
            }
        }
        Self.report(
            "targaryen expression fixtures (\(sourceName))", total: tests.count, failures: failures,
            expected: Self.targaryenExpectedFailures)
    }

    func testBoltLiveServerSteps() throws {
        try boltLiveServerSteps("in memory") { InMemoryRulesSource($0) }
    }

    func testBoltLiveServerStepsOnDisk() throws {
        try boltLiveServerSteps("on disk") { try OnDiskRulesSourceTests.source($0) }
    }

    private func boltLiveServerSteps(_ sourceName: String, _ makeSource: (JSONValue) throws -> any RulesSnapshotSource) throws {
        let dir = try TestData.directory("rules-cases").appendingPathComponent("bolt")
        let cases = try XCTUnwrap(try Self.readJSON(dir.appendingPathComponent("bolt-live-cases.json"))[segment: "cases"]?.arrayValue)
        let now = 1_500_000_000_000.0
        var failures: [String: String] = [:]
        var total = 0
        for test in cases {
            let name = test[segment: "test"]?.stringValue ?? test[segment: "suite"]?.stringValue ?? "?"
            let rulesName = try XCTUnwrap(test[segment: "rules"]?.stringValue)
            let rules = try RulesFile(contentsOfFile: dir.appendingPathComponent(rulesName).path)
            var state = JSONValue.null
            var user = "anon"
            var pushes = 0
            for (index, step) in (test[segment: "steps"]?.arrayValue ?? []).enumerated() {
                let op = step[segment: "op"]?.stringValue ?? ""
                if op == "as" {
                    user = step[segment: "user"]?.stringValue ?? "anon"
                    continue
                }
                var path = (step[segment: "path"]?.stringValue ?? "").split(separator: "/").map(String.init)
                let auth: JSONValue = user == "anon" || user == "admin" ? .null : .object(["uid": .string("{uid:\(user)}")])
                let evaluator = RulesEvaluator(rules: rules, auth: auth, now: now)
                let allowed: Bool
                let detail: String
                if op == "read" {
                    allowed = try user == "admin" || evaluator.canRead(at: path, data: makeSource(state))
                    detail = ""
                } else {
                    if op == "push" {
                        pushes += 1
                        path.append("-Kpush" + String(repeating: "0", count: 14 - String(pushes).count) + String(pushes))
                    }
                    let value = Self.resolvingServerValues(step[segment: "value"] ?? .null, now: now)
                    let newState = Self.setting(state, path[...], value)
                    if user == "admin" {
                        allowed = true
                        detail = ""
                    } else {
                        let result = evaluator.checkWrite(at: path, data: try makeSource(state), newData: try makeSource(newState))
                        allowed = result.allowed
                        detail =
                            (result.permitted ? "" : " (no .write granted)")
                            + result.failures.map { " [\($0.pointer): \($0.message)]" }.joined()
                    }
                    if allowed { state = newState }
                }
                guard let expect = step[segment: "expect"]?.stringValue else { continue }
                total += 1
                if allowed != (expect == "allow") {
                    let note = step[segment: "note"]?.stringValue ?? ""
                    failures["\(name) #\(index)"] =
                        "\(op) \(step[segment: "path"]?.stringValue ?? "") as \(user): \(allowed ? "allowed" : "denied"), expected \(expect) — \(note)\(detail)"
                }
            }
        }
        XCTAssertEqual(total, 148)
        Self.report("bolt live-server steps (\(sourceName))", total: total, failures: failures, expected: Self.boltExpectedFailures)
    }

    func testTargaryenRulesDocuments() throws {
        let dir = try TestData.directory("rules-cases")
        let cases = try Self.readJSON(dir.appendingPathComponent("targaryen/db-cases.transcribed.json"))
        for (set, mustLoad) in [("rulesets_valid", true), ("rulesets_invalid", false)] {
            let documents = try XCTUnwrap(cases[segment: set]?.objectValue)
            XCTAssertFalse(documents.isEmpty)
            for document in documents {
                let sink = MemoryByteSink()
                let writer = JSONWriter(sink: sink)
                try writer.value(document.value)
                try writer.flush()
                do {
                    _ = try RulesFile(bytes: sink.bytes, name: document.key)
                    XCTAssertTrue(mustLoad, "\(set) \"\(document.key)\" loaded, expected a rejection")
                } catch {
                    XCTAssertFalse(mustLoad, "\(set) \"\(document.key)\" was rejected: \(error)")
                }
            }
        }
        XCTAssertThrowsError(try RulesFile(contentsOfFile: dir.appendingPathComponent("targaryen/docs-chai-bad-rules.json").path))
    }

    /// Bolt's generated rules that Firebase would not deploy either, each with why.
    static let boltGeneratedInvalid: [String: String] = [
        "rules-functional.json": "its .validate `(newData.val() + 2) * 3` is a number, not a boolean",
        "rules-groups.json": "its .validate uses `members`, which is no variable (bolt emitted a property name)",
    ]

    func testRealAndGeneratedRulesFilesLoad() throws {
        let real = try TestData.directory("real-rules")
        let realFiles = try TestData.files(in: real, withExtension: "json")
        XCTAssertEqual(realFiles.count, 6)
        let cases = try TestData.directory("rules-cases")
        let targaryen = ["integration-rules.json", "docs-chai-rules.json"].map { cases.appendingPathComponent("targaryen/\($0)") }
        for file in realFiles + targaryen {
            XCTAssertNoThrow(try RulesFile(contentsOfFile: file.path), file.lastPathComponent)
        }
        let generated = try TestData.files(in: cases.appendingPathComponent("bolt"), withExtension: "json")
            .filter { $0.lastPathComponent.hasPrefix("rules-") }
        XCTAssertEqual(generated.count, 22)
        for file in generated {
            if let reason = Self.boltGeneratedInvalid[file.lastPathComponent] {
                XCTAssertThrowsError(try RulesFile(contentsOfFile: file.path), "\(file.lastPathComponent) should be rejected: \(reason)")
            } else {
                XCTAssertNoThrow(try RulesFile(contentsOfFile: file.path), file.lastPathComponent)
            }
        }
    }

    // MARK: - Helpers

    static func readJSON(_ url: URL) throws -> JSONValue {
        let bytes = [UInt8](try Data(contentsOf: url))
        return try JSONReader(source: MemoryByteSource(bytes)).readValue()
    }

    /// Prints the pass count and fails with every unexpected failure and every stale expected failure.
    static func report<Key: Hashable & Comparable>(_ suite: String, total: Int, failures: [Key: String], expected: [Key: String]) {
        print("\(suite): \(total - failures.count)/\(total) passed")
        for key in failures.keys.sorted() where expected[key] == nil {
            XCTFail("\(suite) \(key): \(failures[key]!)")
        }
        for key in expected.keys.sorted() where failures[key] == nil {
            XCTFail("\(suite) \(key) is listed as an expected failure but passes; remove it from the list")
        }
        XCTAssertGreaterThanOrEqual(Double(total - failures.count), 0.95 * Double(total), "\(suite): below 95%")
    }

    /// Replaces `{".sv": "timestamp"}` with `now`.
    static func resolvingServerValues(_ value: JSONValue, now: Double) -> JSONValue {
        guard case .object(var object) = value else { return value }
        if object[".sv"]?.stringValue == "timestamp" { return .number(JSONNumber(now)) }
        for i in object.members.indices { object.members[i].value = resolvingServerValues(object.members[i].value, now: now) }
        return .object(object)
    }

    /// The database after a REST PUT of `value` at `path`: arrays stored as objects, empties pruned.
    static func setting(_ root: JSONValue, _ path: ArraySlice<String>, _ value: JSONValue) -> JSONValue {
        guard let key = path.first else { return stored(value) }
        var object = root.objectValue ?? JSONObject()
        object[key] = Optional(setting(object[key] ?? .null, path.dropFirst(), value)).flatMap { $0.isNull ? nil : $0 }
        return object.isEmpty ? .null : .object(object)
    }

    private static func stored(_ value: JSONValue) -> JSONValue {
        var object = JSONObject()
        switch value {
        case .object(let o):
            for m in o.members { object[m.key] = Optional(stored(m.value)).flatMap { $0.isNull ? nil : $0 } }
        case .array(let items):
            for (i, item) in items.enumerated() { object[String(i)] = Optional(stored(item)).flatMap { $0.isNull ? nil : $0 } }
        default:
            return value
        }
        return object.isEmpty ? .null : .object(object)
    }
}
