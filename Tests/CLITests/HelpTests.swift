import Foundation
import TestSupport
import XCTest

/// Every command's `--help`: examples that can be copied as they are.
final class HelpTests: XCTestCase {
    private let commands = [
        "convert", "stats", "migrate", "validate", "extract-blobs", "inline-blobs", "check-blobs", "archive", "backup", "list",
        "verify", "restore", "copy", "index", "merge",
    ]

    func testExamplesAreNeverWrappedInTheMiddleOfACommand() throws {
        for command in commands {
            let r = try CLI.run([command, "--help"])
            XCTAssertEqual(r.status, 0, command)
            let lines = r.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            guard let start = lines.firstIndex(of: "Examples:") else { continue }
            var previous = ""
            for line in lines[(start + 1)...] {
                if line.isEmpty { break }
                // Each example starts indented by two; a continuation by six, after a line ending in '\'.
                XCTAssertTrue(line.hasPrefix("  "), "\(command): a wrapped example line: '\(line)'")
                if line.hasPrefix("      ") { XCTAssertTrue(previous.hasSuffix("\\"), "\(command): '\(line)' continues nothing") }
                XCTAssertLessThanOrEqual(line.count, 80, "\(command): '\(line)'")
                previous = line
            }
        }
    }
}
