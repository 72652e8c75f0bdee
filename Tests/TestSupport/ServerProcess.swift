import Foundation
import XCTest

/// A server a test starts (SeaweedFS, fake-gcs-server, a Python script) on 127.0.0.1, stopped by its
/// own process id.
public final class ServerProcess: @unchecked Sendable {
    public let process: Process
    private let output: Pipe
    public let logFile: URL

    /// Starts `executable` with `arguments`, its output going to `logFile`.
    public init(_ executable: String, _ arguments: [String], environment: [String: String]? = nil, logFile: URL) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        FileManager.default.createFile(atPath: logFile.path, contents: nil)
        let handle = try FileHandle(forWritingTo: logFile)
        process.standardOutput = handle
        process.standardError = handle
        output = Pipe()
        process.standardInput = output
        self.logFile = logFile
        try process.run()
    }

    /// Waits until a TCP connection to 127.0.0.1:`port` succeeds (and `ready`, when given, returns
    /// true), failing after `timeout` seconds with the server's log.
    public func waitUntilListening(port: Int, timeout: Double = 60, ready: (() -> Bool)? = nil) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            guard process.isRunning else { throw failure("exited with status \(process.terminationStatus) before it listened on \(port)") }
            if canConnect(port: port), ready?() ?? true { return }
            Thread.sleep(forTimeInterval: 0.2)
        }
        throw failure("did not listen on port \(port) within \(timeout) s")
    }

    /// The server's log so far.
    public var log: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    private func failure(_ what: String) -> Error {
        Shell.Failure(description: "\(process.executableURL!.lastPathComponent) \(what); log:\n\(log.suffix(4000))")
    }

    /// Stops the server (SIGTERM to its process id, SIGKILL after five seconds) and waits for it.
    public func stop() {
        guard process.isRunning else { return }
        process.terminate()
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    deinit { stop() }
}

/// A TCP port on 127.0.0.1 nobody listens on now (the kernel's choice for port 0).
public func freePort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw Shell.Failure(description: "socket() failed") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard bound == 0 else { throw Shell.Failure(description: "bind() failed") }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// Whether something accepts TCP connections on 127.0.0.1:`port`.
public func canConnect(port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = UInt16(port).bigEndian
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    } == 0
}
