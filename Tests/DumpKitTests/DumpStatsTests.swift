import DumpKit
import JSONStream
import XCTest

/// `DumpStats`: which keys collapse into which captures, and the record patterns it suggests.
final class DumpStatsTests: XCTestCase {
    private func stats(_ json: String) throws -> DumpStats {
        try DumpStats.gather(from: MemoryByteSource(json))
    }

    private func patterns(_ json: String) throws -> [String] {
        try stats(json).patterns.map(\.pattern)
    }

    func testIDsCollapseIntoCapturesNamedAfterTheirShape() throws {
        let p = try patterns(
            """
            {"users": {"1vOKf7Xdx8ebPphBdnLP7ochEYs1": {"name": "a", "posts": {"-KVSAs1hM7KCYS43IOLg": {"t": 1}}},
                       "2Y7eq5uBDgSsDsCtLAcoKfaWGcY2": {"name": "b"}},
             "invites": {"ann@example,com": true, "bob@example,org": false},
             "series": {"1551605266823": 1.5, "12345678901234567890": 2},
             "matrix": [[1, 2], [3]]}
            """)
        XCTAssertEqual(
            p,
            [
                "/", "/invites", "/invites/{email}", "/matrix", "/matrix/{n}", "/matrix/{n}/{n2}", "/series", "/series/{n}",
                "/users", "/users/{uid}", "/users/{uid}/name", "/users/{uid}/posts", "/users/{uid}/posts/{id}", "/users/{uid}/posts/{id}/t",
            ])
    }

    func testAUIDWithoutDigitsBesideUIDsIsAUID() throws {
        let p = try patterns(#"{"users": {"1vOKf7Xdx8ebPphBdnLP7ochEYs1": {"a": 1}, "abcdefghijklmnopqrstuvwxyzAB": {"a": 2}}}"#)
        XCTAssertEqual(p, ["/", "/users", "/users/{uid}", "/users/{uid}/a"])
        // Alone, a 28-letter key is a name.
        XCTAssertEqual(
            try patterns(#"{"settings": {"notificationsEnabledForMobile": true}}"#),
            ["/", "/settings", "/settings/notificationsEnabledForMobile"])
    }

    func testSiblingsWithTheSameMembersCollapse() throws {
        let s = try stats(
            """
            {"dinosaurs": {"lambeosaurus": {"height": 2.1, "order": "ornithischia"}, "stegosaurus": {"height": 4, "order": "ornithischia"}},
             "message": {"text": "hi", "sender": {"name": "a", "id": 1}, "recipient": {"name": "b", "id": 2}},
             "v1": {"a": 1}, "v2": {"a": 2}}
            """)
        XCTAssertEqual(
            s.patterns.map(\.pattern),
            [
                "/", "/dinosaurs", "/dinosaurs/{key}", "/dinosaurs/{key}/height", "/dinosaurs/{key}/order",
                // Not when other fields sit beside them, and not at the top level.
                "/message", "/message/recipient", "/message/recipient/id", "/message/recipient/name",
                "/message/sender", "/message/sender/id", "/message/sender/name", "/message/text",
                "/v1", "/v1/a", "/v2", "/v2/a",
            ])
        XCTAssertEqual(s.patterns.first { $0.pattern == "/dinosaurs/{key}" }?.count, 2)
        XCTAssertEqual(s.recordPatterns, ["/dinosaurs/{key}"])
    }

    func testManySiblingsCollapseIntoKey() throws {
        let members = (0..<70).map { #""name\#($0)": \#($0)"# }.joined(separator: ",")
        XCTAssertEqual(try patterns("{\"scores\": {\(members)}}"), ["/", "/scores", "/scores/{key}"])
    }

    func testRecordPatternsAreTheObjectsKeyedByIDs() throws {
        // Users holding only their messages: the messages are the records.
        XCTAssertEqual(
            try stats(
                #"{"users": {"1vOKf7Xdx8ebPphBdnLP7ochEYs1": {"messages": {"-KVSAs1hM7KCYS43IOLg": {"text": "hi"}}, "profile": {"name": "a"}}}}"#
            )
            .recordPatterns, ["/users/{uid}/messages/{id}"])
        // Articles with fields of their own are the records, their comments inside them.
        XCTAssertEqual(
            try stats(#"{"articles": {"-KVSAs1hM7KCYS43IOLg": {"title": "t", "comments": {"-KVSAs1hM7KCYS43IOLh": {"text": "c"}}}}}"#)
                .recordPatterns, ["/articles/{id}"])
        // List items are records only with no id-keyed record around them.
        XCTAssertEqual(
            try stats(#"{"items": [{"a": 1}, {"a": 2}], "users": {"1vOKf7Xdx8ebPphBdnLP7ochEYs1": {"games": [{"score": 1}]}}}"#)
                .recordPatterns, ["/items/{n}", "/users/{uid}"])
    }

    func testBase64FilesAreCountedPerPatternAndTheLargestRecordsRanked() throws {
        let jpeg = "data:image/jpeg;base64,/9j/4AAQSkZJRgABAQAAAQABAAD"
        let records = (0..<12).map { i in
            #""-KVSAs1hM7KCYS43IO\#(String(format: "%02d", i))": {"title": "\#(String(repeating: "x", count: i))", "photo": "\#(i % 4 == 0 ? jpeg : "none")"}"#
        }
        let s = try stats("{\"posts\": {\(records.joined(separator: ","))}}")
        let photo = try XCTUnwrap(s.patterns.first { $0.pattern == "/posts/{id}/photo" })
        XCTAssertEqual(photo.files, 3)
        XCTAssertEqual(photo.fileBytes, Int64(3 * jpeg.utf8.count))
        XCTAssertEqual(s.patterns.first { $0.pattern == "/posts/{id}/title" }?.files, 0)
        XCTAssertEqual(s.base64Images, 3)
        // The ten largest records, largest first: those with an image, then the longest titles.
        XCTAssertEqual(s.largestRecords.count, DumpStats.largestRecordCount)
        XCTAssertEqual(s.largestRecords.first?.pointer, "/posts/-KVSAs1hM7KCYS43IO08")
        XCTAssertEqual(s.largestRecords.map(\.bytes), s.largestRecords.map(\.bytes).sorted(by: >))
        XCTAssertFalse(s.largestRecords.contains { $0.pointer == "/posts/-KVSAs1hM7KCYS43IO01" })
        let json = s.jsonValue
        XCTAssertEqual(json.objectValue?["largestRecords"]?.arrayValue?.count, 10)
    }
}
