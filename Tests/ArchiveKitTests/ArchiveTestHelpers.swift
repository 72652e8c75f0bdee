import ArchiveKit
import Foundation
import XCTest

/// An `ArchiveSink` writing to a file descriptor (or failing after `limit` bytes, like a full disk).
final class FileSink: ArchiveSink {
    struct DiskFull: Error {}
    private let descriptor: Int32
    private let limit: Int?
    private var written = 0

    init(descriptor: Int32, limit: Int? = nil) {
        self.descriptor = descriptor
        self.limit = limit
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        if let limit, written + bytes.count > limit { throw DiskFull() }
        var done = 0
        while done < bytes.count {
            let n = Foundation.write(descriptor, bytes.baseAddress! + done, bytes.count - done)
            guard n > 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            done += n
        }
        written += bytes.count
    }
}

/// Writes an archive of `entries` (each with its data) to `path`.
func writeArchive(
    _ path: String, format: ArchiveFormat = .tar, compression: CompressionFilter = .zstd, level: Int? = nil, threads: Int? = nil,
    _ entries: [(ArchiveEntry, [UInt8])]
) throws {
    try withFileDescriptor(path, writing: true) { fd in
        let writer = try ArchiveWriter(
            sink: FileSink(descriptor: fd), format: format, compression: compression, level: level, threads: threads, name: path)
        for (entry, data) in entries {
            try writer.begin(entry)
            try data.withUnsafeBytes { try writer.write($0) }
        }
        try writer.finish()
    }
}

/// Every entry of the archive at `path` with its data.
func readArchive(_ path: String) throws -> [(ArchiveEntry, [UInt8])] {
    let reader = try ArchiveReader(path: path)
    var result: [(ArchiveEntry, [UInt8])] = []
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 1)
    defer { buffer.deallocate() }
    while let entry = try reader.nextEntry() {
        var data: [UInt8] = []
        while true {
            let n = try reader.read(into: buffer)
            if n == 0 { break }
            data += buffer.prefix(n)
        }
        result.append((entry, data))
    }
    return result
}

/// Runs a Python script (tarfile/zipfile) to make archives no well-behaved writer would.
func python(_ script: String) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", "-c", script]
    let errors = Pipe()
    process.standardError = errors
    try process.run()
    let message = errors.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    if process.terminationStatus != 0 {
        XCTFail("python3 failed: \(String(decoding: message, as: UTF8.self))")
        throw CommandFailed()
    }
}

/// Extracts every entry of the archive at `path` into `destination`, returning each entry's outcome by stored path.
func extractAll(
    _ path: String, to destination: String, overwrite: SafeExtractor.OverwritePolicy = .ifDifferent, limits: ExtractionLimits = .standard
) throws -> [(String, SafeExtractor.Outcome)] {
    let reader = try ArchiveReader(path: path)
    let extractor = try SafeExtractor(destination: destination, overwrite: overwrite, limits: limits)
    var outcomes: [(String, SafeExtractor.Outcome)] = []
    while let entry = try reader.nextEntry() {
        outcomes.append((entry.path, try extractor.extract(entry, from: reader)))
    }
    return outcomes
}

/// Every path below `directory` (files, directories and links), relative and sorted.
func tree(_ directory: String) -> [String] {
    guard let enumerator = FileManager.default.enumerator(atPath: directory) else { return [] }
    return (enumerator.allObjects as? [String] ?? []).sorted()
}

/// Whether something (even a dangling link) exists at `path`.
func exists(_ path: String) -> Bool {
    var status = stat()
    return lstat(path, &status) == 0
}
