import Foundation
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
        let p = Process()
        p.executableURL = binary
        p.arguments = arguments
        if let directory { p.currentDirectoryURL = directory }
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        let input = Pipe()
        p.standardInput = input
        try p.run()
        // Feed standard input from another thread so a large input cannot deadlock with the output pipes.
        let writer = Thread {
            if let stdin { input.fileHandleForWriting.write(stdin) }
            try? input.fileHandleForWriting.close()
        }
        writer.start()
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return Result(status: p.terminationStatus, stdout: String(decoding: o, as: UTF8.self), stderr: String(decoding: e, as: UTF8.self))
    }

    private final class Marker {}
}
