import DumpKit
import JSONStream
import XCTest

final class BlobReferenceTests: XCTestCase {
    func testNameTemplates() throws {
        let t = try BlobNameTemplate("v1/{model}/{id}/{field}/{sha256}.{ext}")
        XCTAssertEqual(t.captureNames, ["model", "id"])
        XCTAssertEqual(
            try t.render(
                path: ["v1", "todolist", "-Ka", "image1"], recordPath: ["v1", "todolist", "-Ka"],
                captures: ["model": "todolist", "id": "-Ka"],
                fileExtension: "jpg", sha256: "ab"), "v1/todolist/-Ka/image1/ab.jpg")
        XCTAssertEqual(
            try BlobNameTemplate.pathBased.render(
                path: ["v1", "todolist", "-Ka", "images", "0"], recordPath: [], captures: [:], fileExtension: "png", sha256: ""),
            "v1/todolist/-Ka/images/0.png")
        XCTAssertEqual(
            try BlobNameTemplate.contentAddressed.render(path: ["x"], recordPath: [], captures: [:], fileExtension: "pdf", sha256: "00ff"),
            "sha256/00ff.pdf")
        XCTAssertEqual(
            try BlobNameTemplate("{record}-{field}").render(
                path: ["a", "b", "c"], recordPath: ["a", "b"], captures: [:], fileExtension: "", sha256: ""), "a/b-c")
        XCTAssertThrowsError(try t.render(path: ["x"], recordPath: [], captures: [:], fileExtension: "jpg", sha256: "ab"))
        for bad in ["", "{path", "path}", "{}", "a{b{c}"] {
            XCTAssertThrowsError(try BlobNameTemplate(bad), bad)
        }
    }

    func testDownloadTokensAreStableUUIDsUniquePerName() {
        let a = DownloadToken.derive(sha256: "ab", name: "x/1.jpg")
        XCTAssertEqual(a, DownloadToken.derive(sha256: "ab", name: "x/1.jpg"))
        XCTAssertNotEqual(a, DownloadToken.derive(sha256: "ab", name: "x/2.jpg"))
        XCTAssertNotEqual(a, DownloadToken.derive(sha256: "ac", name: "x/1.jpg"))
        XCTAssertNotNil(
            a.range(of: "^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$", options: .regularExpression), a)
        XCTAssertNotNil(UUID(uuidString: a))
        // Pinned: stores written by earlier builds hold these tokens, and a re-run must find them equal.
        XCTAssertEqual(a, "a82e692e-b6b6-47f5-86a4-247aabc9613f")
        XCTAssertEqual(DownloadToken.derive(sha256: "ab", name: "x/é.jpg"), "386c3352-5f8e-4079-b807-99ec399ceae3")
    }

    func testDownloadURLsEncodeLikeTheFirebaseSDKs() {
        let url = BlobReference.downloadURL(bucket: "app.appspot.com", name: "v1/todo list/-Ka/写真.jpg", token: "t-1")
        XCTAssertEqual(
            url,
            "https://firebasestorage.googleapis.com/v0/b/app.appspot.com/o/v1%2Ftodo%20list%2F-Ka%2F%E5%86%99%E7%9C%9F.jpg?alt=media&token=t-1"
        )
        let parsed = BlobReference.parseDownloadURL(url)
        XCTAssertEqual(parsed?.name, "v1/todo list/-Ka/写真.jpg")
        XCTAssertEqual(parsed?.token, "t-1")
        XCTAssertNil(BlobReference.parseDownloadURL("https://example.com/v0/b/x/o/y"))
    }

    func testEveryStyleReadsBackWhatItWrites() throws {
        let forms: [EmbeddedFile.Form] = [
            .bare, .dataURI(header: "data:image/jpeg;base64,"), .dataURI(header: "data:image/png;name=a.png;base64,"),
        ]
        for form in forms {
            let r = BlobReference(
                name: "v1/todolist/-Ka/image1.jpg", contentType: "image/jpeg", size: 12, sha256: "ab", md5: "cd==", token: "tok", form: form
            )
            let object = r.jsonValue(style: .object, bucket: nil)
            let o = try XCTUnwrap(BlobReference(object, style: .object))
            XCTAssertEqual([o.name, o.contentType, o.sha256, o.md5], [r.name, r.contentType, r.sha256, r.md5])
            XCTAssertEqual(o.size, r.size)
            XCTAssertEqual(o.originalHeader(contentType: nil), r.originalHeader(contentType: nil))
            let salada = r.jsonValue(style: .salada, bucket: "b")
            XCTAssertEqual(salada.objectValue?.keys.prefix(3), ["name", "url", "mimeType"])
            XCTAssertEqual(salada.objectValue?["name"], .string("image1.jpg"))
            let s = try XCTUnwrap(BlobReference(salada, style: .salada))
            XCTAssertEqual(s.name, r.name)
            XCTAssertEqual(s.token, "tok")
            XCTAssertEqual(s.originalHeader(contentType: nil), r.originalHeader(contentType: nil))
            // Keys are valid database keys.
            for key in (object.objectValue?.keys ?? []) + (salada.objectValue?.keys ?? []) {
                XCTAssertFalse(key.contains { ".$#[]/".contains($0) }, key)
            }
        }
        let plain = BlobReference(
            name: "a.jpg", contentType: "image/jpeg", size: 1, sha256: "ab", form: .dataURI(header: "data:image/jpeg;base64,"))
        XCTAssertEqual(plain.jsonValue(style: .object, bucket: nil).objectValue?.keys, ["path", "contentType", "size", "sha256"])
        XCTAssertEqual(
            BlobReference(name: "a.jpg", contentType: "image/jpeg", form: .bare).jsonValue(style: .object, bucket: nil).objectValue?[
                "encoding"], .string("base64"))
        XCTAssertEqual(BlobReference(.string("v1/a.jpg"), style: .path)?.name, "v1/a.jpg")
        XCTAssertEqual(BlobReference(plain.jsonValue(style: .url, bucket: "b"), style: .url)?.name, "a.jpg")
        // Objects with other keys are not references.
        XCTAssertNil(
            BlobReference(
                .object(["path": .string("a.jpg"), "sha256": .string("ab"), "size": .number("1"), "title": .string("x")]), style: .object))
        XCTAssertNil(
            BlobReference(
                .object(["name": .string("a"), "url": .string("https://example.com/a"), "mimeType": .string("image/png")]), style: .salada))
        XCTAssertEqual(plain.originalHeader(contentType: nil), "data:image/jpeg;base64,")
        XCTAssertEqual(BlobReference(name: "a", contentType: nil).originalHeader(contentType: "image/gif"), "data:image/gif;base64,")
    }

    func testOptionsThatDoNotFitTogether() {
        var o = ExtractBlobs.Options()
        o.referenceStyle = .salada
        XCTAssertThrowsError(try ExtractBlobs.check(o)) { XCTAssertTrue("\($0)".contains("--bucket"), "\($0)") }
        o.bucket = "b"
        XCTAssertNoThrow(try ExtractBlobs.check(o))
        o.naming = try! BlobNameTemplate("{id}/{field}.{ext}")
        // A plan's record pattern may capture {id}; the job's records only have --match captures.
        XCTAssertNoThrow(try ExtractBlobs.check(o))
        XCTAssertThrowsError(try ExtractBlobsJob.check(o))
        o.match = [try! PathPattern("/v1/todolist/{id}")]
        XCTAssertNoThrow(try ExtractBlobsJob.check(o))
        o.match.append(try! PathPattern("/v1/other/*"))
        XCTAssertThrowsError(try ExtractBlobsJob.check(o))
        o.minimumBytes = 0
        XCTAssertThrowsError(try ExtractBlobs.check(o))
    }
}
