import Foundation
import JSONStream
import TestSupport
import XCTest

@testable import FirebaseRules

/// The on-disk rules source gives the findings the in-memory one gives, whatever it keeps in its index.
final class OnDiskRulesSourceTests: XCTestCase {
    /// Cross-references between records (`root.child(...)`), `parent()`, priorities, `.value` leaves,
    /// arrays, nulls and `val()` of objects.
    static let rules = #"""
        {"rules": {
          "rooms": {"$room": {
            ".validate": "newData.hasChildren(['name'])",
            "owner": {".validate": "root.child('users').child(newData.val()).exists()"},
            "members": {"$uid": {".validate": "root.child('users/' + $uid + '/rooms/' + $room).val() == true && newData.parent().parent().child('name').isString()"}},
            "name": {".validate": "newData.isString() && newData.val().length < 10"},
            "settings": {".validate": "newData.val() == root.child('defaults').val() || newData.child('color').exists()"}
          }},
          "users": {"$uid": {
            ".validate": "newData.child('name').isString() && (newData.getPriority() == null || newData.getPriority() > 0)",
            "rooms": {".validate": "newData.hasChildren()"},
            ".write": "auth.uid == $uid"
          }},
          "defaults": {".validate": "newData.hasChildren(['color', 'size'])"},
          "list": {".validate": "newData.hasChildren(['0', '2'])", "$i": {".validate": "newData.isNumber() && newData.parent().child('0').exists()"}},
          "wrapped": {".validate": "newData.val() == 5 && root.child('list/1').val() == 2"}
        }}
        """#

    static let dump = #"""
        {
          "defaults": {"color": "red", "size": 2},
          "list": [1, 2, null, "x"],
          "wrapped": {".value": 5, ".priority": 1},
          "rooms": {
            "r1": {"name": "one", "owner": "u1", "members": {"u1": true, "u2": true}, "settings": {"size": 2, "color": "red"}},
            "r2": {"name": "a long room name", "owner": "nobody", "members": {"u2": true}, "settings": {"size": 3}},
            "r3": {"owner": "u2", "members": {}, "empty": null},
            "r4": {"name": {".value": "four", ".priority": 2}, "owner": "u1", "members": {"u1": true}}
          },
          "users": {
            "u1": {".priority": 3, "name": "Ann", "rooms": {"r1": true, "r4": true}},
            "u2": {".priority": -1, "name": "Bob", "rooms": {"r1": true}},
            "u3": {"name": 7, "rooms": {}},
            "u\u00e9": {"name": "Zoë", "rooms": {"r\"x": true}}
          }
        }
        """#

    static func source(_ text: String, expandBytes: Int64) throws -> OnDiskRulesSource {
        let dir = try TemporaryDirectory()
        try Data(text.utf8).write(to: dir.url.appendingPathComponent("dump.json"))
        // The open file outlives the folder's removal.
        return try OnDiskRulesSource.indexing(try ReadOnlyFile(path: dir.path("dump.json")), name: "dump.json", expandBytes: expandBytes)
    }

    /// An on-disk source over `value` written out, with every container indexed.
    static func source(_ value: JSONValue, expandBytes: Int64 = 0) throws -> OnDiskRulesSource {
        let sink = MemoryByteSink()
        let writer = JSONWriter(sink: sink)
        try writer.value(value)
        try writer.flush()
        return try source(sink.string, expandBytes: expandBytes)
    }

    func testFindingsMatchTheInMemorySourceAtEveryIndexDepth() throws {
        let rules = try RulesFile(bytes: Array(Self.rules.utf8), name: "test.rules.json")
        let memory = InMemoryRulesSource(try JSONReader(bytes: Array(Self.dump.utf8)).readValue())
        for strict in [false, true] {
            let evaluator = RulesEvaluator(rules: rules, auth: .object(["uid": .string("u1")]), now: 1_000)
            let expected = evaluator.validateDump(memory, strict: strict)
            XCTAssertGreaterThan(expected.count, 5)
            for expandBytes: Int64 in [0, 8, 40, 100, 300, 1 << 20] {
                let disk = try Self.source(Self.dump, expandBytes: expandBytes)
                XCTAssertEqual(evaluator.validateDump(disk, strict: strict), expected, "strict \(strict), expandBytes \(expandBytes)")
                XCTAssertNil(disk.readError)
                for path in [
                    [], ["rooms"], ["rooms", "r4", "name"], ["wrapped"], ["list"], ["list", "2"], ["list", "02"], ["users", "u\u{e9}"],
                    ["nothing"],
                ] {
                    XCTAssertEqual(disk.content(at: path), memory.content(at: path), "\(path) at \(expandBytes)")
                    XCTAssertEqual(disk.childKeys(at: path), memory.childKeys(at: path), "\(path) at \(expandBytes)")
                    XCTAssertEqual(disk.priority(at: path), memory.priority(at: path), "\(path) at \(expandBytes)")
                    XCTAssertEqual(disk.value(at: path), memory.value(at: path), "\(path) at \(expandBytes)")
                }
            }
        }
    }

    func testTodoAppSampleGivesTheSameFindings() throws {
        let root = TestData.projectRoot
        let rules = try RulesFile(contentsOfFile: root.appendingPathComponent("samples/todo-app/database.rules.json").path)
        let dump = try String(contentsOf: root.appendingPathComponent("samples/todo-app/v1.json"), encoding: .utf8)
        let evaluator = RulesEvaluator(rules: rules, now: Date().timeIntervalSince1970 * 1000)
        let expected = evaluator.validateDump(InMemoryRulesSource(try JSONReader(bytes: Array(dump.utf8)).readValue()))
        XCTAssertEqual(expected.count, 3)
        for expandBytes: Int64 in [0, 200, 1 << 20] {
            XCTAssertEqual(evaluator.validateDump(try Self.source(dump, expandBytes: expandBytes)), expected)
        }
    }
}
