import Foundation
import XCTest

/// Runs the built `dumpkit` binary and captures its output and exit status.
public enum CLI {
    public struct Result {
        public var status: Int32
        public var stdout: String
        public var stderr: String

        public init(status: Int32, stdout: String, stderr: String) {
            self.status = status
            self.stdout = stdout
            self.stderr = stderr
        }
    }

    /// The `dumpkit` binary next to the test bundle in the build folder.
    public static var binary: URL {
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

    /// Runs `dumpkit` with `arguments`, optional standard input, in `directory`, with this
    /// process's environment or `environment`.
    public static func run(_ arguments: [String], stdin: Data? = nil, in directory: URL? = nil, environment: [String: String]? = nil) throws
        -> Result
    {
        let r = try Shell.execute(binary, arguments, stdin: stdin, in: directory, environment: environment)
        return Result(
            status: r.status, stdout: String(decoding: r.stdout, as: UTF8.self), stderr: String(decoding: r.stderr, as: UTF8.self))
    }

    /// Runs `dumpkit` as `run` does, under `/usr/bin/time`: its result (without time's line) and
    /// its peak resident memory in bytes.
    public static func runMeasuringMemory(_ arguments: [String], environment: [String: String]? = nil) throws -> (result: Result, peak: Int)
    {
        let time = try RequiredTool.path("time", package: "time")
        let r = try Shell.execute(URL(fileURLWithPath: time), ["-f", "maxrss %M", binary.path] + arguments, environment: environment)
        var lines = String(decoding: r.stderr, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        guard let at = lines.lastIndex(where: { $0.hasPrefix("maxrss ") }), let kib = Int(lines[at].dropFirst("maxrss ".count)) else {
            throw Shell.Failure(description: "/usr/bin/time printed no maxrss: \(String(decoding: r.stderr, as: UTF8.self))")
        }
        lines.remove(at: at)
        return (
            Result(status: r.status, stdout: String(decoding: r.stdout, as: UTF8.self), stderr: lines.joined(separator: "\n")), kib << 10
        )
    }

    private final class Marker {}
}
