import Foundation

/// Runs command-line tools (gzip, zstd, bsdtar...) for interoperability tests.
public enum Shell {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Runs `tool` (looked up on PATH) and returns its standard output as bytes.
    public static func runData(_ tool: String, _ arguments: [String], stdin: Data? = nil, in directory: URL? = nil) throws -> Data {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = [tool] + arguments
        if let directory { p.currentDirectoryURL = directory }
        let out = Pipe(), err = Pipe(), input = Pipe()
        p.standardOutput = out
        p.standardError = err
        p.standardInput = input
        try p.run()
        let writer = Thread {
            if let stdin { input.fileHandleForWriting.write(stdin) }
            try? input.fileHandleForWriting.close()
        }
        writer.start()
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else {
            throw Failure(description: "\(tool) \(arguments.joined(separator: " ")) exited \(p.terminationStatus): \(String(decoding: e, as: UTF8.self))")
        }
        return o
    }

    /// Runs `tool` and returns its standard output as text.
    public static func run(_ tool: String, _ arguments: [String], stdin: Data? = nil, in directory: URL? = nil) throws -> String {
        String(decoding: try runData(tool, arguments, stdin: stdin, in: directory), as: UTF8.self)
    }
}
