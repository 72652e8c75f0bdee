import Foundation
import TestSupport
import XCTest

/// Runs the built `dumpkit` binary and captures its output and exit status.
enum CLI {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// The `dumpkit` binary next to the test bundle in the build folder.
    static var binary: URL {
        var dir = Bundle(for: Marker.self).bundleURL
        while dir.path != "/" {
            let candidate = dir.appendingPathComponent("dumpkit")
            var isDir: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isDir), !isDir.boolValue {
                return candidate
            }
            dir.deleteLastPathComponent()
        }
        fatalError("dumpkit binary not found beside the test bundle")
    }

    /// Runs `dumpkit` with `arguments`, optional standard input, in `directory`.
    static func run(_ arguments: [String], stdin: Data? = nil, in directory: URL? = nil) throws -> Result {
        let r = try Shell.execute(binary, arguments, stdin: stdin, in: directory)
        return Result(
            status: r.status, stdout: String(decoding: r.stdout, as: UTF8.self), stderr: String(decoding: r.stderr, as: UTF8.self))
    }

    private final class Marker {}
}
