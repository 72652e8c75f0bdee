import Foundation
import JSONStream
import RTDBTestServer
import TestSupport
import XCTest

/// The test server's database against what the REST reference says
/// (firebase.google.com/docs/reference/rest/database, /docs/database/rest/retrieve-data and save-data).
final class RTDBDatabaseTests: XCTestCase {
    private func database(_ json: String = "{}", _ configure: (inout RTDBDatabase.Configuration) -> Void = { _ in }) throws -> RTDBDatabase
    {
        var configuration = RTDBDatabase.Configuration(namespace: "ns1")
        configure(&configuration)
        let db = RTDBDatabase(configuration: configuration)
        try db.load(json: Array(json.utf8))
        return db
    }

    private func send(_ db: RTDBDatabase, _ method: String, _ target: String, _ body: String = "", bearer: String? = nil) -> (Int, String) {
        let request = RESTRequest(method: method, target: target, authorization: bearer.map { "Bearer \($0)" }, body: Array(body.utf8))!
        let response = db.handle(request)
        return (response.status, String(decoding: response.body, as: UTF8.self))
    }

    func testGetReturnsKeysInDatabaseOrder() throws {
        let db = try database(#"{"b":1,"a":{"z":true,"10":"x","9":"y","-1":0},"A":"s"}"#)
        let (status, body) = send(db, "GET", "/.json")
        XCTAssertEqual(status, 200)
        XCTAssertEqual(body, #"{"A":"s","a":{"-1":0,"9":"y","10":"x","z":true},"b":1}"#)
        XCTAssertEqual(send(db, "GET", "/a/9.json").1, #""y""#)
        XCTAssertEqual(send(db, "GET", "/missing/x.json").1, "null")
    }

    func testDenseIntegerKeysReadBackAsArrayWithHoles() throws {
        let db = try database(#"{"list":["a",null,"c"],"sparse":{"0":"a","7":"b"}}"#)
        XCTAssertEqual(send(db, "GET", "/.json").1, #"{"list":["a",null,"c"],"sparse":{"0":"a","7":"b"}}"#)
        // format=export keeps objects (the SDKs' export values never become arrays).
        XCTAssertEqual(send(db, "GET", "/list.json?format=export").1, #"{"0":"a","2":"c"}"#)
    }

    func testShallowTruncatesChildrenToTrue() throws {
        let db = try database(#"{"a":{"x":{"deep":1}},"b":"leaf","c":[1,2]}"#)
        XCTAssertEqual(send(db, "GET", "/.json?shallow=true").1, #"{"a":true,"b":true,"c":true}"#)
        XCTAssertEqual(send(db, "GET", "/b.json?shallow=true").1, #""leaf""#)
        XCTAssertEqual(send(db, "GET", "/c.json?shallow=true").1, #"{"0":true,"1":true}"#)
        let (status, body) = send(db, "GET", "/.json?shallow=true&orderBy=%22%24key%22&limitToFirst=1")
        XCTAssertEqual(status, 400)
        XCTAssertTrue(body.contains("shallow"), body)
    }

    func testKeyQueriesFilterAndLimitInKeyOrder() throws {
        let db = try database(#"{"k":{"a":1,"b":2,"c":3,"d":4,"1":0,"2":0}}"#)
        let orderBy = "orderBy=%22%24key%22"
        XCTAssertEqual(send(db, "GET", "/k.json?\(orderBy)&startAt=%22b%22&endAt=%22c%22").1, #"{"b":2,"c":3}"#)
        XCTAssertEqual(send(db, "GET", "/k.json?\(orderBy)&limitToFirst=3").1, #"{"1":0,"2":0,"a":1}"#)
        XCTAssertEqual(send(db, "GET", "/k.json?\(orderBy)&limitToLast=2").1, #"{"c":3,"d":4}"#)
        XCTAssertEqual(send(db, "GET", "/k.json?\(orderBy)&startAt=%22b%22&limitToFirst=2").1, #"{"b":2,"c":3}"#)
        XCTAssertEqual(send(db, "GET", "/k.json?orderBy=\"$key\"&equalTo=\"d\"").1, #"{"d":4}"#)
        // Parameters without orderBy, other orderings and unquoted keys are refused.
        XCTAssertEqual(send(db, "GET", "/k.json?limitToFirst=1").0, 400)
        XCTAssertEqual(send(db, "GET", "/k.json?orderBy=%22%24value%22&limitToFirst=1").0, 400)
        XCTAssertEqual(send(db, "GET", "/k.json?\(orderBy)&startAt=b").0, 400)
    }

    func testOversizeReadGetsTheDocumentedError() throws {
        let db = try database(#"{"a":"0123456789","b":"0123456789"}"#) { $0.maxResponseBytes = 20 }
        let (status, body) = send(db, "GET", "/.json")
        XCTAssertEqual(status, 400)
        XCTAssertEqual(body, #"{"error":"Data requested exceeds the maximum size that can be accessed with a single request."}"#)
        XCTAssertEqual(send(db, "GET", "/a.json").0, 200)
        XCTAssertEqual(send(db, "GET", "/.json?orderBy=%22%24key%22&limitToFirst=1").1, #"{"a":"0123456789"}"#)
    }

    /// The limit is on every response ("Size of a single response served by the database",
    /// firebase.google.com/docs/database/usage/limits), listings of keys too.
    func testAShallowListingOverTheLimitGetsTheDocumentedError() throws {
        let db = try database(#"{"a":1,"b":2,"c":3,"d":4}"#) { $0.maxResponseBytes = 20 }
        XCTAssertEqual(send(db, "GET", "/.json?shallow=true").1, #"{"error":"\#(RTDBDatabase.readTooLargeMessage)"}"#)
        XCTAssertEqual(send(db, "GET", "/.json?shallow=true").0, 400)
        XCTAssertEqual(send(db, "GET", "/.json?orderBy=%22%24key%22&startAt=%22b%20%22&limitToFirst=2").1, #"{"c":3,"d":4}"#)
        XCTAssertEqual(send(db, "GET", "/c.json?shallow=true").1, "3")
    }

    /// A served file answers every read as the same data loaded in memory does: real dumps and one
    /// with integer keys, escaped keys, arrays and deep values (no priorities: a file holds none), indexed 1 to 3 levels down, with
    /// queries at indexed and parsed levels and answers over the limit.
    func testAServedFileAnswersReadsAsTheDataInMemory() throws {
        var dumps = try TestData.files(in: try TestData.directory("real-dumps"), withExtension: "json").map { try contents($0.path) }
        dumps.append(
            Array(
                #"{"a":{"0":{"x":1},"1":"one","2":[1,2,{"y":null,"z":true}],"k\"q":{"w\\v":{"deep":{"deeper":"s"}}},"m":{"v":1}},"b":[5,6,7],"c":"leaf","d":{"7":1,"9":2,"10":3}}"#
                    .utf8))
        let tmp = try TemporaryDirectory()
        for (n, dump) in dumps.enumerated() {
            let memory = try database() { $0.maxResponseBytes = 2048 }
            try memory.load(json: dump)
            let file = tmp.path("served-\(n).json")
            try Data(memory.contents()).write(to: URL(fileURLWithPath: file))
            var targets: [String] = []
            var paths: [[String]] = [[], ["nope"], ["a", "nope", "x"]]
            for key in try JSONReader(bytes: memory.contents()).readValue().objectValue?.members.map(\.key) ?? [] {
                paths.append([key])
                let inner = try JSONReader(bytes: memory.contents(at: [key])).readValue()
                for sub in (inner.objectValue?.members.map(\.key) ?? []).prefix(3) { paths.append([key, sub]) }
            }
            for path in paths {
                let p = "/" + path.map { $0.addingPercentEncoding(withAllowedCharacters: .alphanumerics)! }.joined(separator: "/") + ".json"
                let keys =
                    (try JSONReader(bytes: memory.contents(at: path)).readValue().objectValue?.members.map(\.key) ?? ["0", "1", "2"])
                func q(_ k: String) -> String { "%22" + k.addingPercentEncoding(withAllowedCharacters: .alphanumerics)! + "%22" }
                let first = keys.first ?? "a", middle = keys[keys.count / 2..<keys.count].first ?? "m"
                targets += [
                    p, p + "?shallow=true", p + "?format=export", p + "?orderBy=%22%24key%22&limitToFirst=2",
                    p + "?orderBy=%22%24key%22&limitToLast=3", p + "?orderBy=%22%24key%22&startAt=\(q(middle))",
                    p + "?orderBy=%22%24key%22&startAt=\(q(first))&endAt=\(q(middle))&format=export",
                    p + "?orderBy=%22%24key%22&equalTo=\(q(middle))", p + "?orderBy=%22%24key%22&startAt=\(q(first + " "))&limitToFirst=1",
                    p + "?startAt=\(q(first))", p + "?shallow=true&limitToFirst=1", p + "?orderBy=%22v%22",
                ]
            }
            for depth in 1...3 {
                let served = try database() { $0.maxResponseBytes = 2048 }
                try served.serve(file: file, indexDepth: depth)
                for target in targets {
                    let a = send(memory, "GET", target), b = send(served, "GET", target)
                    XCTAssertEqual(a.0, b.0, "dump \(n), depth \(depth): \(target)")
                    XCTAssertEqual(a.1, b.1, "dump \(n), depth \(depth): \(target)")
                }
                XCTAssertEqual(send(served, "PUT", "/a.json", "1").0, 405)
            }
        }
    }

    func testAFileThatIsNotCanonicalIsRefusedWhereItIsIndexed() throws {
        let tmp = try TemporaryDirectory()
        for (text, detail) in [(#"{"b":1,"a":2}"#, "is not after"), (#"{"a": 1}"#, "space around"), (#"{"a":1 ,"b":2}"#, "space after")] {
            try Data(text.utf8).write(to: URL(fileURLWithPath: tmp.path("bad.json")))
            XCTAssertThrowsError(try database().serve(file: tmp.path("bad.json"))) {
                XCTAssertTrue("\($0)".contains(detail), "\($0)")
            }
        }
    }

    func testPutReplacesPatchMergesMultiPathAndDeleteRemoves() throws {
        let db = try database(#"{"u":{"jack":{"first":"Jack","last":"Sparrow"},"jill":{"x":1}}}"#)
        XCTAssertEqual(send(db, "PATCH", "/u/jack.json", #"{"last":"Jones"}"#).0, 200)
        XCTAssertEqual(db.contents(at: ["u", "jack"]), Array(#"{"first":"Jack","last":"Jones"}"#.utf8))
        XCTAssertEqual(send(db, "PATCH", "/u.json", #"{"jack/first":"J","jill/y/z":2,"new/a":[true]}"#).0, 200)
        XCTAssertEqual(
            String(decoding: db.contents(), as: UTF8.self),
            #"{"u":{"jack":{"first":"J","last":"Jones"},"jill":{"x":1,"y":{"z":2}},"new":{"a":[true]}}}"#)
        XCTAssertEqual(send(db, "PUT", "/u/jack.json", #"{"only":1}"#).1, #"{"only":1}"#)
        XCTAssertEqual(db.contents(at: ["u", "jack"]), Array(#"{"only":1}"#.utf8))
        XCTAssertEqual(send(db, "DELETE", "/u/jill.json").1, "null")
        XCTAssertEqual(send(db, "PATCH", "/u.json", #"{"new":null,"jack":{}}"#).0, 200)
        XCTAssertEqual(String(decoding: db.contents(), as: UTF8.self), "null")
    }

    func testMultiPathUpdateWithOverlappingPathsIsRefusedWhole() throws {
        let db = try database(#"{"a":1}"#)
        let (status, body) = send(db, "PATCH", "/.json", #"{"x/y":1,"x":{"z":2},"a":2}"#)
        XCTAssertEqual(status, 400, body)
        XCTAssertEqual(String(decoding: db.contents(), as: UTF8.self), #"{"a":1}"#)
    }

    func testPrintSilentAnswers204WithoutBody() throws {
        let db = try database()
        let (status, body) = send(db, "PUT", "/a.json?print=silent", "3")
        XCTAssertEqual(status, 204)
        XCTAssertEqual(body, "")
        XCTAssertEqual(send(db, "GET", "/a.json?print=silent").0, 204)
        XCTAssertEqual(db.contents(at: ["a"]), Array("3".utf8))
    }

    func testOversizeWriteGetsTheDocumentedErrorAndChangesNothing() throws {
        let db = try database(#"{"a":1}"#) { $0.maxWriteBytes = 10 }
        let (status, body) = send(db, "PATCH", "/.json", #"{"b":"0123456789"}"#)
        XCTAssertEqual(status, 400)
        XCTAssertEqual(body, #"{"error":"Data to write exceeds the maximum size that can be modified with a single request."}"#)
        XCTAssertEqual(String(decoding: db.contents(), as: UTF8.self), #"{"a":1}"#)
    }

    func testForbiddenKeysAndBadJSONAreRefused() throws {
        let db = try database()
        XCTAssertEqual(send(db, "PUT", "/a.json", #"{"b.c":1}"#).0, 400)
        XCTAssertEqual(send(db, "PUT", "/a.json", #"{"b":"#).0, 400)
        XCTAssertEqual(send(db, "PUT", "/a%23b.json", "1").0, 400)
        XCTAssertEqual(send(db, "PATCH", "/a.json", "[1]").0, 400)
        // The refusal names where the bad value is.
        let deep = send(db, "PATCH", "/a.json", #"{"x/y":{"list":[1,{"k~":{"b$":1}}]}}"#)
        XCTAssertEqual(deep.0, 400)
        XCTAssertTrue(deep.1.contains("couldn't parse key beginning at /a/x/y/list/1/k~0/b$"), deep.1)
        let value = send(db, "PUT", "/a.json", #"{"p":{".value":1,"q":2}}"#)
        XCTAssertTrue(value.1.contains(".value cannot be set beside other children at /a/p"), value.1)
        let server = send(db, "PUT", "/a.json", #"{"s":[0,{".sv":"never"}]}"#)
        XCTAssertTrue(server.1.contains("unknown server value at /a/s/1"), server.1)
        // A body that does not parse is answered as such, even past a refused key; one with content
        // after its value does not parse.
        let late = send(db, "PATCH", "/a.json", #"{"b$":1,"c":[}"#)
        XCTAssertTrue(late.1.contains("couldn't parse JSON"), late.1)
        XCTAssertTrue(send(db, "PUT", "/a.json", "1 2").1.contains("couldn't parse JSON"))
        XCTAssertEqual(String(decoding: db.contents(), as: UTF8.self), "null")
        // A load with content after its value changes nothing. A name twice in one object counts
        // once, first (as in a JSON value read whole).
        XCTAssertThrowsError(try db.load(json: Array(#"{"a":1} x"#.utf8)))
        XCTAssertEqual(String(decoding: db.contents(), as: UTF8.self), "null")
        XCTAssertTrue(send(db, "PUT", "/v.json", #"{".value":{"a":1},".value":1}"#).1.contains(".value must be a leaf at /v"))
        XCTAssertEqual(String(decoding: db.contents(), as: UTF8.self), "null")
        // What sits beside a server value is neither written nor judged.
        XCTAssertEqual(send(db, "PUT", "/t.json", #"{".sv":{"increment":2},"b$":1}"#).0, 200)
        XCTAssertEqual(String(decoding: db.contents(), as: UTF8.self), #"{"t":2}"#)
    }

    func testDiscardedWritesAreCheckedAndAnsweredButNotKept() throws {
        let db = try database { $0.discardsWrites = true }
        XCTAssertEqual(send(db, "PUT", "/a.json?print=silent", #"{"b":1}"#).0, 204)
        XCTAssertEqual(send(db, "PATCH", "/.json", #"{"a/c":2,"d":{"e":3}}"#).0, 200)
        XCTAssertEqual(send(db, "PUT", "/a.json", #"{"b.c":1}"#).0, 400)
        XCTAssertEqual(send(db, "GET", "/.json").1, "null")
    }

    func testWrongNamespaceIsNotFound() throws {
        let db = try database(#"{"a":1}"#)
        XCTAssertEqual(send(db, "GET", "/a.json?ns=ns1").1, "1")
        let (status, body) = send(db, "GET", "/a.json?ns=other")
        XCTAssertEqual(status, 404)
        XCTAssertTrue(body.contains("other"), body)
        XCTAssertEqual(send(db, "PUT", "/a.json?ns=other", "2").0, 404)
        XCTAssertEqual(db.contents(at: ["a"]), Array("1".utf8))
    }

    func testRequiredCredentialByAuthAccessTokenOrBearer() throws {
        let db = try database(#"{"a":1}"#) { $0.requiredCredential = "s3cret" }
        XCTAssertEqual(send(db, "GET", "/a.json").0, 401)
        XCTAssertEqual(send(db, "GET", "/a.json?auth=wrong").0, 401)
        XCTAssertEqual(send(db, "PUT", "/a.json?access_token=wrong", "2").0, 401)
        XCTAssertEqual(send(db, "GET", "/a.json", bearer: "nope").0, 401)
        XCTAssertEqual(send(db, "GET", "/a.json?auth=s3cret").1, "1")
        XCTAssertEqual(send(db, "GET", "/a.json?access_token=s3cret").1, "1")
        XCTAssertEqual(send(db, "GET", "/a.json", bearer: "s3cret").1, "1")
        XCTAssertEqual(db.contents(at: ["a"]), Array("1".utf8))
    }

    func testDeniedPathsRefuseWritesBelowThemWithPermissionDenied() throws {
        let db = try database(#"{"open":1}"#) { $0.deniedWritePaths = [["locked"]] }
        let (status, body) = send(db, "PATCH", "/.json", #"{"open":2,"locked/x":1}"#)
        XCTAssertEqual(status, 401)
        XCTAssertEqual(body, #"{"error":"Permission denied"}"#)
        XCTAssertEqual(String(decoding: db.contents(), as: UTF8.self), #"{"open":1}"#)
    }

    func testPrioritiesAndServerValues() throws {
        let db = try database()
        _ = send(db, "PUT", "/p.json", #"{".value":"v",".priority":3}"#)
        _ = send(db, "PUT", "/o.json", #"{"a":1,".priority":"x"}"#)
        _ = send(db, "PUT", "/n.json", #"{"c":{".sv":{"increment":2}}}"#)
        _ = send(db, "PATCH", "/n.json", #"{"c":{".sv":{"increment":5}}}"#)
        XCTAssertEqual(send(db, "GET", "/.json").1, #"{"n":{"c":7},"o":{"a":1},"p":"v"}"#)
        XCTAssertEqual(
            send(db, "GET", "/.json?format=export").1,
            #"{"n":{"c":7},"o":{".priority":"x","a":1},"p":{".priority":3,".value":"v"}}"#)
        _ = send(db, "PUT", "/t.json", #"{".sv":"timestamp"}"#)
        XCTAssertGreaterThan(Int(send(db, "GET", "/t.json").1) ?? 0, 1_700_000_000_000)
    }

    /// Rules at /.settings/rules.json: GET returns them, PUT replaces them all, kept byte for byte
    /// (firebase.google.com/docs/database/rest/app-management).
    func testRulesAreReadAndReplacedAtSettingsRules() throws {
        let db = try database(#"{"a":1}"#) { $0.requiredCredential = "secret" }
        XCTAssertEqual(send(db, "GET", "/.settings/rules.json").0, 401, "rules need credentials like data")
        let (status, body) = send(db, "GET", "/.settings/rules.json?auth=secret")
        XCTAssertEqual(status, 200)
        XCTAssertEqual(body, "{\n  \"rules\": {\n    \".read\": false,\n    \".write\": false\n  }\n}")

        let rules = "// who may read\n{\"rules\": {\".read\": \"auth != null\", /* no writes */ \".write\": false}}\n"
        XCTAssertEqual(send(db, "PUT", "/.settings/rules.json?auth=secret", rules).0, 200)
        XCTAssertEqual(send(db, "GET", "/.settings/rules.json?auth=secret").1, rules, "comments and spacing kept")
        XCTAssertEqual(String(decoding: db.rules ?? [], as: UTF8.self), rules)

        // Not a rules object: refused, the rules stay.
        XCTAssertEqual(send(db, "PUT", "/.settings/rules.json?auth=secret", #"{"read":true}"#).0, 400)
        XCTAssertEqual(send(db, "PUT", "/.settings/rules.json?auth=secret", "{not json").0, 400)
        XCTAssertEqual(String(decoding: db.rules ?? [], as: UTF8.self), rules)
        // Another namespace: 404; the data is untouched by all of it.
        XCTAssertEqual(send(db, "GET", "/.settings/rules.json?auth=secret&ns=other").0, 404)
        XCTAssertEqual(send(db, "GET", "/.json?auth=secret").1, #"{"a":1}"#)
        // Other .settings paths are not data paths either.
        XCTAssertEqual(send(db, "GET", "/.settings/other.json?auth=secret").0, 400)
    }
}
