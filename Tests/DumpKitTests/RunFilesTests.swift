import XCTest

@testable import DumpKit

/// `RunFiles`: a run's files beside a local path, and in TMPDIR for a location without a folder of
/// its own (a bucket URL, `-`), named by the whole location so the same command finds them again.
final class RunFilesTests: XCTestCase {
    func testBesideAPathAndInTheTemporaryFolderForAURL() {
        XCTAssertEqual(RunFiles.beside("/data/v1.json", suffix: "dumpkit-export.d"), "/data/.v1.json.dumpkit-export.d")
        XCTAssertEqual(RunFiles.beside("v1.json", suffix: "x.d"), URL(fileURLWithPath: ".v1.json.x.d").path)
        let remote = RunFiles.beside("s3://bucket/backups/v1.json", suffix: "dumpkit-export.d")
        let temporary = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        XCTAssertTrue(remote.hasPrefix(URL(fileURLWithPath: temporary).path + "/.v1.json-"), remote)
        XCTAssertTrue(remote.hasSuffix(".dumpkit-export.d"), remote)
        XCTAssertEqual(remote, RunFiles.beside("s3://bucket/backups/v1.json", suffix: "dumpkit-export.d"), "the same again")
        XCTAssertNotEqual(remote, RunFiles.beside("gs://bucket/backups/v1.json", suffix: "dumpkit-export.d"))
        XCTAssertFalse(RunFiles.beside("-", suffix: "j").contains("//"))
    }
}
