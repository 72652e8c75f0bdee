import DumpKit
import JSONStream
import TestSupport
import XCTest

@testable import LiveDatabase

/// What `import --verify` counts as the same: the comparison of a dump with an export, both
/// canonicalized, walked side by side.
final class ImportVerificationTests: XCTestCase {
    /// The differences between `dump` and `database` (JSON texts) as the verification finds them.
    private func differences(_ dump: String, _ database: String, replace: Bool = false) throws -> [ImportVerification.Difference] {
        let tmp = try TemporaryDirectory()
        try Data(dump.utf8).write(to: URL(fileURLWithPath: tmp.path("dump.json")))
        try Data(database.utf8).write(to: URL(fileURLWithPath: tmp.path("db.json")))
        try ImportVerification.canonicalize(tmp.path("dump.json"), to: tmp.path("dump.c.json"), temporary: tmp.url.path)
        try ImportVerification.canonicalize(tmp.path("db.json"), to: tmp.path("db.c.json"), temporary: tmp.url.path)
        let walk = CanonicalComparison(
            dump: JSONReader(source: try InputFile(path: tmp.path("dump.c.json"))),
            database: JSONReader(source: try InputFile(path: tmp.path("db.c.json"))), replace: replace, shown: 10)
        try walk.compare([])
        XCTAssertEqual(walk.differences, walk.first.count)
        return walk.first
    }

    func testAMergeNeedsTheDumpContainedAsTheDatabaseStoresIt() throws {
        // The database's own forms: arrays for integer keys, numbers by value, nulls and empty objects gone.
        XCTAssertEqual(
            try differences(
                #"{"z":{"b":1.50,"a":[10,null,{"x":"y"}]},"n":null,"e":{},"p":{".priority":3,".value":"v"},"big":12345678901234567891}"#,
                #"{"big":12345678901234567000,"extra":{"q":1},"p":"v","z":{"a":{"0":10,"2":{"x":"y"}},"b":1.5,"more":true}}"#),
            [])
        XCTAssertEqual(
            try differences(#"{"a":{"b":"Ann","c":[1,2]},"d":true,"f":{"g":1}}"#, #"{"a":{"b":"Eve","c":[1]},"f":2}"#),
            [
                .init(pointer: "/a/b", detail: #"the dump has "Ann", the database "Eve""#),
                .init(pointer: "/a/c/1", detail: "not in the database"),
                .init(pointer: "/d", detail: "not in the database"),
                .init(pointer: "/f", detail: "the dump has an object, the database a value"),
            ])
        XCTAssertEqual(try differences(#"{"a":1}"#, "null"), [.init(pointer: "/a", detail: "not in the database")])
        XCTAssertEqual(try differences(#"{"a":"1"}"#, #"{"a":1}"#), [.init(pointer: "/a", detail: #"the dump has "1", the database 1"#)])
    }

    func testAReplaceNeedsTopLevelChildrenEqualAsAWhole() throws {
        XCTAssertEqual(
            try differences(#"{"a":{"x":1}}"#, #"{"a":{"x":1},"other":2}"#, replace: true), [], "other top-level children are not looked at"
        )
        XCTAssertEqual(
            try differences(#"{"a":{"x":1}}"#, #"{"a":{"x":1,"y":{"z":2}}}"#, replace: true),
            [.init(pointer: "/a/y", detail: "in the database, not in the dump")])
        XCTAssertEqual(try differences(#"{"a":{"x":1}}"#, #"{"a":{"x":1,"y":{"z":2}}}"#), [], "a merge leaves y alone")
    }

    func testOnlyTheFirstDifferencesAreKeptAllAreCounted() throws {
        let dump = "{" + (0..<25).map { "\"k\($0)\":\($0)" }.joined(separator: ",") + "}"
        let walk = CanonicalComparison(
            dump: JSONReader(bytes: Array(dump.utf8)), database: JSONReader(bytes: Array("{}".utf8)), replace: false, shown: 10)
        try walk.compare([])
        XCTAssertEqual(walk.differences, 25)
        XCTAssertEqual(walk.first.count, 10)
    }
}
