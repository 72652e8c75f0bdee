import ArchiveKit
import Foundation
import XCTest

/// Test inputs, generated deterministically so failures reproduce.
enum SampleBytes {
    /// 5 MB: 2.5 MB of pseudo-random bytes followed by 2.5 MB of JSON-like text.
    static let mixed: [UInt8] = random(count: 2_500_000, seed: 1) + text(count: 2_500_000)

    /// `count` pseudo-random bytes (xorshift64*), incompressible.
    static func random(count: Int, seed: UInt64) -> [UInt8] {
        var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        var words = [UInt64](repeating: 0, count: (count + 7) / 8)
        for i in words.indices {
            state ^= state >> 12
            state ^= state << 25
            state ^= state >> 27
            words[i] = state &* 0x2545_F491_4F6C_DD1D
        }
        return words.withUnsafeBytes { Array($0.prefix(count)) }
    }

    /// `count` bytes of repetitive JSON-like text, very compressible.
    static func text(count: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count + 100)
        var i = 0
        while bytes.count < count {
            bytes += Array(#"{"id":"-K\#(i)","title":"todo number \#(i)","done":\#(i % 3 == 0)},"#.utf8)
            i += 1
        }
        return Array(bytes.prefix(count))
    }
}

/// A shell command that exited with a nonzero status (already reported with `XCTFail`).
struct CommandFailed: Error {}

/// Runs `command` in `/bin/sh` and fails with its standard error if it exits with a nonzero status.
func shell(_ command: String, file: StaticString = #filePath, line: UInt = #line) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", command]
    let errors = Pipe()
    process.standardError = errors
    try process.run()
    let message = errors.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    if process.terminationStatus != 0 {
        let output = String(decoding: message, as: UTF8.self)
        XCTFail("`\(command)` exited with \(process.terminationStatus): \(output)", file: file, line: line)
        throw CommandFailed()
    }
}

/// The command-line tool that handles `filter` (`gzip`, `zstd`, `xz`, `bzip2`); skips the test when it
/// is not installed, unless `CI=true`, where a missing tool fails instead.
func commandLineTool(for filter: CompressionFilter) throws -> String {
    let tool = filter.rawValue
    let found = ["/usr/bin", "/bin", "/usr/local/bin", "/opt/homebrew/bin"].contains {
        FileManager.default.isExecutableFile(atPath: "\($0)/\(tool)")
    }
    if !found {
        let message = "`\(tool)` is not installed; install it to run this test"
        if ProcessInfo.processInfo.environment["CI"] == "true" { XCTFail(message) }
        throw XCTSkip(message)
    }
    return tool
}

/// The compressed filters, each with a command-line tool.
let compressedFilters: [CompressionFilter] = CompressionFilter.allCases.filter { $0 != .none }

func writeFile(_ path: String, _ bytes: [UInt8]) throws {
    try Data(bytes).write(to: URL(fileURLWithPath: path))
}

func readFile(_ path: String) throws -> [UInt8] {
    try Array(Data(contentsOf: URL(fileURLWithPath: path)))
}

/// Opens `path` read-only (or for writing, created and truncated) and passes its descriptor to `body`.
func withFileDescriptor<T>(_ path: String, writing: Bool = false, _ body: (Int32) throws -> T) throws -> T {
    let fd = writing ? open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644) : open(path, O_RDONLY)
    guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    defer { close(fd) }
    return try body(fd)
}

/// Compresses `bytes` into `path` with `CompressingWriter`, writing chunks of `chunkSize` bytes.
func compress(
    _ bytes: [UInt8], to path: String, filter: CompressionFilter, level: Int? = nil, threads: Int? = nil,
    chunkSize: Int = 1 << 20
) throws {
    try withFileDescriptor(path, writing: true) { fd in
        let writer = try CompressingWriter(fileDescriptor: fd, filter: filter, level: level, threads: threads, name: path)
        try bytes.withUnsafeBytes { all in
            for start in stride(from: 0, to: all.count, by: chunkSize) {
                try writer.write(UnsafeRawBufferPointer(rebasing: all[start..<min(start + chunkSize, all.count)]))
            }
        }
        try writer.finish()
    }
}

/// Reads everything `reader` yields, asking for `bufferSize` bytes at a time.
func readAll(_ reader: DecompressingReader, bufferSize: Int) throws -> [UInt8] {
    var result: [UInt8] = []
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bufferSize, alignment: 1)
    defer { buffer.deallocate() }
    while true {
        let count = try reader.read(into: buffer)
        if count == 0 { return result }
        result += buffer.prefix(count)
    }
}

/// Decompresses the file at `path` with `DecompressingReader`; returns the bytes and the detected filter.
func decompress(_ path: String, bufferSize: Int = 1 << 20) throws -> (bytes: [UInt8], filter: CompressionFilter) {
    try withFileDescriptor(path) { fd in
        let reader = try DecompressingReader(fileDescriptor: fd, name: path)
        return (try readAll(reader, bufferSize: bufferSize), reader.filter)
    }
}

/// The `ArchiveError` that `body` throws; fails the test if it throws none or another error.
func archiveError(
    file: StaticString = #filePath, line: UInt = #line, _ body: () throws -> Void
) -> ArchiveError? {
    do {
        try body()
        XCTFail("expected an ArchiveError, got none", file: file, line: line)
    } catch let error as ArchiveError {
        return error
    } catch {
        XCTFail("expected an ArchiveError, got \(error)", file: file, line: line)
    }
    return nil
}
