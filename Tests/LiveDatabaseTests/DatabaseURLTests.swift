import LiveDatabase
import XCTest

/// Database URLs: the two host forms, paths, the emulator convention, and what is refused.
final class DatabaseURLTests: XCTestCase {
    func testHostFormsAndPaths() throws {
        let a = try DatabaseURL("https://my-app.firebaseio.com/users/u%201.json", emulatorHost: nil)
        XCTAssertEqual(a.namespace, "my-app")
        XCTAssertEqual(a.path, ["users", "u 1"])
        XCTAssertEqual(
            a.restURL(["x"], query: [("orderBy", "\"$key\""), ("startAt", "\"a b\"")]),
            "https://my-app.firebaseio.com/users/u%201/x.json?orderBy=%22%24key%22&startAt=%22a%20b%22")
        XCTAssertTrue(a.sendsCredentials)
        let b = try DatabaseURL("https://my-app-default-rtdb.europe-west1.firebasedatabase.app", emulatorHost: nil)
        XCTAssertEqual(b.namespace, "my-app-default-rtdb")
        XCTAssertEqual(b.path, [])
        XCTAssertEqual(b.restURL(), "https://my-app-default-rtdb.europe-west1.firebasedatabase.app/.json")
        XCTAssertEqual(b.description, "https://my-app-default-rtdb.europe-west1.firebasedatabase.app/")
    }

    func testEmulatorHostSendsPlainHTTPWithTheNamespaceAndNoCredentials() throws {
        let u = try DatabaseURL("https://demo-app.firebaseio.com/a/b", emulatorHost: "127.0.0.1:9000")
        XCTAssertEqual(u.restURL(query: [("shallow", "true")]), "http://127.0.0.1:9000/a/b.json?ns=demo-app&shallow=true")
        XCTAssertFalse(u.sendsCredentials)
        XCTAssertEqual(u.appending(["c"]).restURL(), "http://127.0.0.1:9000/a/b/c.json?ns=demo-app")
    }

    func testWhatIsNotADatabaseURLIsRefusedWithTheReason() {
        for bad in [
            "http://my-app.firebaseio.com", "https://example.com/x", "my-app.firebaseio.com",
            "https://my-app.firebaseio.com/a?auth=x", "https://my-app.firebaseio.com/a.b/c",
            "https://a.b.firebaseio.com", "https://my-app.firebasedatabase.app",
        ] {
            XCTAssertThrowsError(try DatabaseURL(bad, emulatorHost: nil), bad) { error in
                XCTAssertTrue("\(error)".hasPrefix(bad), "\(error)")
            }
        }
    }
}
