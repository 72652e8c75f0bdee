import XCTest

@testable import ObjectStores

/// Path-style addressing for custom endpoints, virtual-host style for AWS (path-style for dotted buckets).
final class S3AddressingTests: XCTestCase {
    func client(_ location: String, endpoint: String?) throws -> S3Client {
        S3Client(
            url: try XCTUnwrap(ObjectStoreURL(location)),
            configuration: AWSConfiguration(
                credentials: AWSCredentials(accessKeyID: "A", secretAccessKey: "S"), region: "eu-west-1", endpoint: endpoint))
    }

    func testCustomEndpointsArePathStyle() throws {
        let c = try client("s3://backups/p", endpoint: "http://127.0.0.1:8333")
        XCTAssertTrue(c.address(key: "p/a b.png") == ("http://127.0.0.1:8333", "127.0.0.1:8333", "/backups/p/a b.png"))
        XCTAssertTrue(c.address(key: nil) == ("http://127.0.0.1:8333", "127.0.0.1:8333", "/backups/"))
        XCTAssertEqual(c.endpoint, "http://127.0.0.1:8333")
    }

    func testAWSIsVirtualHostStyleExceptForDottedBuckets() throws {
        let c = try client("s3://backups/p", endpoint: nil)
        XCTAssertTrue(
            c.address(key: "p/x.png") == ("https://backups.s3.eu-west-1.amazonaws.com", "backups.s3.eu-west-1.amazonaws.com", "/p/x.png"))
        XCTAssertTrue(c.address(key: nil) == ("https://backups.s3.eu-west-1.amazonaws.com", "backups.s3.eu-west-1.amazonaws.com", "/"))
        XCTAssertEqual(c.endpoint, "https://s3.eu-west-1.amazonaws.com")
        let dotted = try client("s3://my.backups/p", endpoint: nil)
        XCTAssertTrue(
            dotted.address(key: "p/x.png") == ("https://s3.eu-west-1.amazonaws.com", "s3.eu-west-1.amazonaws.com", "/my.backups/p/x.png"))
    }

    func testPartSizes() {
        XCTAssertEqual(S3Client.partSize(for: 20 << 20), 8 << 20)
        XCTAssertEqual(S3Client.partSize(for: 1 << 40), Int(((1 << 40) + 9999) / 10_000), "a terabyte in at most 10,000 parts")
        XCTAssertLessThanOrEqual(
            (Int64(1) << 40 + Int64(S3Client.partSize(for: 1 << 40)) - 1) / Int64(S3Client.partSize(for: 1 << 40)), 10_000)
    }
}
