import ArchiveKit
import Foundation
import TestSupport
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
    _ = try Shell.run("python3", ["-c", script])
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

/// The command-line tool of `filter` (`gzip`, `zstd`, `xz`, `bzip2`), as `RequiredTool` finds it.
func commandLineTool(for filter: CompressionFilter) throws -> String {
    try RequiredTool.path(filter.rawValue, package: filter == .xz ? "xz-utils" : filter.rawValue)
}

/// Runs `command` in `sh`; throws with its standard error unless it exits 0.
func shell(_ command: String) throws {
    _ = try Shell.run("sh", ["-c", command])
}

/// The compressed filters, each with a command-line tool.
let compressedFilters: [CompressionFilter] = CompressionFilter.allCases.filter { $0 != .none }

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
        let writer = try CompressingWriter(
            sink: DescriptorSink(fileDescriptor: fd, name: path), filter: filter, level: level, threads: threads, name: path)
        try bytes.withUnsafeBytes { all in
            for start in stride(from: 0, to: all.count, by: chunkSize) {
                try writer.write(UnsafeRawBufferPointer(rebasing: all[start..<min(start + chunkSize, all.count)]))
            }
        }
        try writer.finish()
    }
}

/// A reader of a decompressed stream: `DecompressingReader` and `GzipReader`.
protocol DecompressedStream {
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int
}

extension DecompressingReader: DecompressedStream {}
extension GzipReader: DecompressedStream {}

/// Reads everything `reader` yields, asking for `bufferSize` bytes at a time.
func readAll(_ reader: some DecompressedStream, bufferSize: Int) throws -> [UInt8] {
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
