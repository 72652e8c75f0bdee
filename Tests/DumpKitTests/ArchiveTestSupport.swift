import ArchiveKit
import Foundation
import JSONStream
import TestSupport
import XCTest

@testable import DumpKit

/// A small bucket directory for archive tests: a JPEG, a JSON record, a text file with a non-ASCII name,
/// each with a fixed modification time.
struct ArchiveTestBucket {
    let root: String
    static let times: [String: Int64] = [
        "v1/todolist/-Ka/image1/1479566994988": 1_479_566_994, "v1/todolist/-Ka/revisions/1.json": 1_479_600_000,
        "notes/買い物.txt": 1_479_000_000,
    ]
    static let contents: [String: [UInt8]] = [
        "v1/todolist/-Ka/image1/1479566994988": [0xFF, 0xD8, 0xFF, 0xE0] + Array(repeating: 0x42, count: 5000),
        "v1/todolist/-Ka/revisions/1.json": Array(#"{"title":"buy milk","done":false}"#.utf8),
        "notes/買い物.txt": Array("牛乳\n".utf8),
    ]

    /// Creates the bucket at `root`; with `blobStore`, also metadata sidecars for two objects.
    init(at root: String, blobStore: Bool = false) throws {
        self.root = root
        for (name, bytes) in Self.contents {
            let path = root + "/" + name
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            try FileManager.default.setAttributes(
                [.modificationDate: Date(timeIntervalSince1970: Double(Self.times[name]!))], ofItemAtPath: path)
        }
        if blobStore {
            try writeSidecar(
                "v1/todolist/-Ka/image1/1479566994988", contentType: "image/jpeg",
                custom: ["firebaseStorageDownloadTokens": "5f1c2d3e-token", "uploadedBy": "salada"], cacheControl: "public, max-age=3600")
            try writeSidecar("notes/買い物.txt", contentType: "text/plain; charset=utf-8", custom: [:], cacheControl: nil)
        }
    }

    /// The metadata a blob store would keep for `name`.
    func metadata(_ name: String, contentType: String?, custom: [String: String] = [:], cacheControl: String? = nil) -> BlobMetadata {
        var digest = ObjectDigest()
        Self.contents[name]!.withUnsafeBytes { digest.update($0) }
        let (sha256, md5, crc32c) = digest.finalize()
        return BlobMetadata(
            name: name, size: digest.size, contentType: contentType, sha256: sha256, md5: md5, crc32c: crc32c, customMetadata: custom,
            cacheControl: cacheControl, updated: Self.times[name]! * 1000)
    }

    /// Writes the sidecar of `name` as a blob store does.
    func writeSidecar(
        _ name: String, contentType: String, custom: [String: String], cacheControl: String?, size: Int64? = nil
    ) throws {
        var metadata = metadata(name, contentType: contentType, custom: custom, cacheControl: cacheControl)
        if let size { metadata.size = size }
        let path = root + "/" + DirectoryBlobStore.metadataPath(of: name)
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let sink = MemoryByteSink()
        let writer = JSONWriter(sink: sink)
        try writer.value(metadata.jsonValue)
        try writer.flush()
        try Data(sink.bytes).write(to: URL(fileURLWithPath: path))
    }
}

/// Archives `bucket` to `output` with a fixed creation time unless told otherwise.
@discardableResult
func archiveBucket(
    _ bucket: String, to output: String, created: Timestamp? = Timestamp(seconds: 1_500_000_000),
    configure: (inout ArchiveJob) -> Void = { _ in }
) throws -> ArchiveJob.Summary {
    var job = ArchiveJob(source: .bucket(bucket), output: output)
    job.created = created
    job.threads = 2
    configure(&job)
    return try job.run()
}

/// The manifest and the other entries (with data) of an archive.
func readArchiveContents(_ path: String) throws -> (ArchiveManifest?, [(ArchiveEntry, [UInt8])]) {
    let input = try ArchiveInput(path: path)
    var entries: [(ArchiveEntry, [UInt8])] = []
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 1)
    defer { buffer.deallocate() }
    while let entry = try input.nextEntry() {
        var data: [UInt8] = []
        while case let n = try input.reader.read(into: buffer), n > 0 { data += buffer.prefix(n) }
        entries.append((entry, data))
    }
    return (input.manifest, entries)
}

/// Copies the archive at `source` to `output` (plain tar), passing each entry after the manifest through
/// `transform`, and the manifest through `manifest` (as JSON text; `nil` leaves it out).
func rewriteArchive(
    _ source: String, to output: String, manifest editManifest: (String) -> String? = { $0 },
    transform: ((ArchiveEntry, [UInt8])) -> [(ArchiveEntry, [UInt8])] = { [$0] }
) throws {
    let (manifest, entries) = try readArchiveContents(source)
    let sink = MemoryByteSink()
    if let manifest { try manifest.write(to: JSONWriter(sink: sink, options: .init(pretty: true))) }
    let manifestBytes = manifest == nil ? nil : editManifest(sink.string).map { Array($0.utf8) }
    let file = try OutputFile(path: output, compression: CompressionFilter.none)
    let writer = try ArchiveWriter(sink: file, format: .tar, compression: .none, name: output)
    if let manifestBytes {
        try writer.begin(ArchiveEntry(path: ArchiveManifest.entryName, size: Int64(manifestBytes.count)))
        try manifestBytes.withUnsafeBytes { try writer.write($0) }
    }
    for (entry, data) in entries.flatMap(transform) {
        var entry = entry
        entry.size = Int64(data.count)
        try writer.begin(entry)
        try data.withUnsafeBytes { try writer.write($0) }
    }
    try writer.finish()
    try file.commit()
}
