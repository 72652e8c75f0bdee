import Foundation
import XCTest

/// Finds a command-line tool a test needs (installed by `Scripts/setup.sh`). Where it is missing, the
/// test skips with a message; with `CI=true` it fails instead, so CI can never pass by skipping.
public enum RequiredTool {
    /// The tool's path on `PATH`, or a skip (a failure when `CI=true`) naming the Debian package.
    public static func path(_ name: String, package: String) throws -> String {
        let directories = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        for directory in directories {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw missing("\(name) is not installed (apt-get install -y \(package), or run Scripts/setup.sh)")
    }

    /// A skip with `message`, or a failure when `CI=true`.
    public static func missing(_ message: String) -> Error {
        if ProcessInfo.processInfo.environment["CI"] == "true" { return TestData.Missing(description: message) }
        return XCTSkip(message)
    }
}
