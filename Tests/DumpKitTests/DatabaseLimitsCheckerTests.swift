import DumpKit
import JSONStream
import XCTest

final class DatabaseLimitsCheckerTests: XCTestCase {
    private func check(_ text: String, patterns: [String] = []) throws -> [Finding] {
        var findings: [Finding] = []
        let checker = DatabaseLimitsChecker(patterns: try patterns.map { try PathPattern($0) }) { findings.append($0) }
        let reader = JSONReader(source: MemoryByteSource(text), options: .init(maxDepth: 100))
        while true {
            let k = try reader.next()
            if k == .end { break }
            checker.observe(k, reader)
        }
        return findings
    }

    func testKeysDepthStringsAndNumbers() throws {
        let deep = String(repeating: "{\"d\":", count: 33) + "1" + String(repeating: "}", count: 33)
        let text = "{\"a.b\":1,\"ok\":{\"x$\":2},\"" + String(repeating: "k", count: 769) + "\":3,\"n\":1e400,\"deep\":" + deep + "}"
        let f = try check(text)
        XCTAssertEqual(
            f.map(\.rule), ["limits:key-characters", "limits:key-characters", "limits:key-length", "limits:non-finite", "limits:depth"])
        XCTAssertEqual(f[0].pointer, "/a.b")
        XCTAssertEqual(f[1].pointer, "/ok/x$")
        XCTAssertEqual(f[3].pointer, "/n")
        XCTAssertEqual(f[4].pointer, "/deep" + String(repeating: "/d", count: 32))
        XCTAssertEqual(f[0].line, 1)
        XCTAssertEqual(f[0].column, 2)
    }

    /// Keys are scanned a word at a time, the last word overlapping the one before: forbidden bytes
    /// are found anywhere, and the first one is named.
    func testForbiddenBytesAnywhereInLongKeys() throws {
        let clean = String(repeating: "abcdefgh", count: 5)
        for (key, named) in [
            (clean + "/", "'/'"), (String(clean.prefix(17)) + "]x", "']'"), ("-KVSAs1hM7KC#S43IOLg", "'#'"),
            (clean + "\\u007F", "control character 0x7F"),
            (String(clean.prefix(15)) + "\\u0001" + clean, "control character 0x1"), ("a[" + clean + ".", "'['"),
            ("abcdefg.", "'.'"), ("abcdefgh.", "'.'"), ("a.cdefgh/", "'.'"), ("abcdefgh$", "'$'"), ("ab.", "'.'"),
        ] {
            let f = try check("{\"" + key + "\":1}")
            XCTAssertEqual(f.map(\.rule), ["limits:key-characters"], key)
            XCTAssertTrue(f.first?.message.contains("key contains " + named + ";") == true, "\(key): \(f)")
        }
        XCTAssertEqual(try check("{\"" + clean + "\u{e9}\u{1F600}" + clean + "\":1}"), [])
    }

    func testExportFormatAndServerValues() throws {
        XCTAssertEqual(try check(#"{"a":{".value":1,".priority":2},"t":{".sv":"timestamp"},"i":{".sv":{"increment":1}}}"#), [])
        let f = try check(#"{"a":{".value":1,"b":2},"t":{".sv":"now"},"i":{".sv":{"incr":1}}}"#)
        XCTAssertEqual(f.map(\.rule), ["limits:value-beside-children", "limits:server-value", "limits:server-value"])
        XCTAssertEqual(f[0].pointer, "/a")
    }

    func testArraysWithHolesAndPushIDs() throws {
        let f = try check(
            #"{"list":{"0":"a","2":"c"},"full":{"0":"a","1":"b"},"sparse":{"0":1,"9":2},"v1":{"todo":{"-KVSAs1hM7KCYS43IOLg":1,"bad id":2}}}"#,
            patterns: ["/v1/todo/{pushId}"])
        XCTAssertEqual(f.map(\.rule), ["limits:array-with-holes", "limits:push-id"])
        XCTAssertEqual(f[0].pointer, "/list")
        XCTAssertEqual(f[0].severity, .warning)
        XCTAssertEqual(f[1].pointer, "/v1/todo/bad id")
    }

    func testPushIDTimestamp() {
        XCTAssertEqual(PushID.timestamp("-KVSAs1hM7KCYS43IOLg").map { $0 / 1000 }, 1_477_958_402)
        XCTAssertNil(PushID.timestamp("short"))
    }
}
