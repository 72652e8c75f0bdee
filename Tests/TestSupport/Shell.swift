import Foundation

/// Runs command-line tools (gzip, zstd, bsdtar, the built dumpkit) for end-to-end tests.
public enum Shell {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String

        public init(description: String) {
            self.description = description
        }
    }

    /// What a finished process left.
    public struct Result {
        public var status: Int32
        public var stdout: Data
        public var stderr: Data
    }

    /// Runs `executable` with `arguments`, feeding `stdin` from another thread so that large inputs
    /// cannot deadlock with the output pipes.
    public static func execute(
        _ executable: URL, _ arguments: [String], stdin: Data? = nil, in directory: URL? = nil,
        environment: [String: String]? = nil
    ) throws -> Result {
        let p = Process()
        p.executableURL = executable
        p.arguments = arguments
        if let environment { p.environment = environment }
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
        return Result(status: p.terminationStatus, stdout: o, stderr: e)
    }

    /// Runs `tool` (looked up on PATH) and returns its standard output; fails unless it exits 0.
    public static func runData(_ tool: String, _ arguments: [String], stdin: Data? = nil, in directory: URL? = nil) throws -> Data {
        let r = try execute(URL(fileURLWithPath: "/usr/bin/env"), [tool] + arguments, stdin: stdin, in: directory)
        guard r.status == 0 else {
            throw Failure(
                description: "\(tool) \(arguments.joined(separator: " ")) exited \(r.status): \(String(decoding: r.stderr, as: UTF8.self))")
        }
        return r.stdout
    }

    /// Runs `tool` and returns its standard output as text.
    public static func run(_ tool: String, _ arguments: [String], stdin: Data? = nil, in directory: URL? = nil) throws -> String {
        String(decoding: try runData(tool, arguments, stdin: stdin, in: directory), as: UTF8.self)
    }
}
