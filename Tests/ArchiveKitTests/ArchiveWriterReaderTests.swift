import ArchiveKit
import Foundation
import TestSupport
import XCTest

final class ArchiveWriterReaderTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws {
        directory = try TemporaryDirectory()
    }

    override func tearDown() {
        directory = nil
    }

    /// Whole seconds: a plain ustar header has no room for less (entries with a pax header keep nanoseconds).
    private let time = Timestamp(seconds: 1_479_566_994)

    private var sampleEntries: [(ArchiveEntry, [UInt8])] {
        [
            (ArchiveEntry(path: "v1/a.json", size: 7, modificationTime: time), Array(#"{"a":1}"#.utf8)),
            (ArchiveEntry(path: "v1/empty", size: 0, modificationTime: time), []),
            (ArchiveEntry(path: "v1/買い物/リスト.txt", size: 6, modificationTime: time), Array("買い".utf8)),
            (ArchiveEntry(path: "v1/big.bin", size: 3_000_000, modificationTime: time), SampleBytes.random(count: 3_000_000, seed: 3)),
        ]
    }

    func testTarRoundTripsThroughEachCompression() throws {
        for compression in CompressionFilter.allCases {
            let path = directory.path("a-\(compression).tar")
            try writeArchive(path, compression: compression, sampleEntries)
            let read = try readArchive(path)
            XCTAssertEqual(read.map(\.0.path), sampleEntries.map(\.0.path), "\(compression)")
            XCTAssertEqual(read.map(\.1), sampleEntries.map(\.1), "\(compression)")
            XCTAssertEqual(read.map(\.0.modificationTime), sampleEntries.map { _ in time }, "\(compression)")
            let reader = try ArchiveReader(path: path)
            _ = try reader.nextEntry()
            XCTAssertEqual(reader.format, .tar)
            XCTAssertEqual(reader.compression, compression)
        }
    }

    func testZipRoundTripsStoredAndDeflated() throws {
        for compression in [CompressionFilter.none, .gzip] {
            let path = directory.path("a-\(compression).zip")
            try writeArchive(path, format: .zip, compression: compression, sampleEntries)
            let read = try readArchive(path)
            XCTAssertEqual(read.map(\.0.path), sampleEntries.map(\.0.path))
            XCTAssertEqual(read.map(\.1), sampleEntries.map(\.1))
            XCTAssertEqual(read.map(\.0.size), sampleEntries.map(\.0.size))
            let listing = try Shell.run("unzip", ["-Z1", path])
            XCTAssertEqual(listing, sampleEntries.map(\.0.path).joined(separator: "\n") + "\n")
        }
    }

    func testExtendedAttributesArePaxSchilyRecordsOnly() throws {
        let path = directory.path("x.tar")
        let attributes = [
            ExtendedAttribute(name: "user.dumpkit.contentType", text: "image/jpeg"),
            ExtendedAttribute(name: "user.dumpkit.metadata.firebaseStorageDownloadTokens", text: "0f6c-4b1e"),
        ]
        let time = Timestamp(seconds: 1_479_566_994, nanoseconds: 988_000_000)
        try writeArchive(
            path, compression: .none,
            [(ArchiveEntry(path: "img", size: 3, modificationTime: time, extendedAttributes: attributes), [1, 2, 3])])
        XCTAssertEqual(try readArchive(path).first?.0.extendedAttributes, attributes)
        XCTAssertEqual(try readArchive(path).first?.0.modificationTime, time, "the pax header keeps nanoseconds")
        let pax = try Shell.run("python3", ["-c", "import tarfile; print(sorted(tarfile.open('\(path)').getmembers()[0].pax_headers))"])
        XCTAssertEqual(
            pax, "['SCHILY.xattr.user.dumpkit.contentType', 'SCHILY.xattr.user.dumpkit.metadata.firebaseStorageDownloadTokens', 'mtime']\n",
            "no LIBARCHIVE.xattr records (GNU tar warns about them), no atime or ctime")
        // GNU tar reads them as extended attributes.
        let gnu = try Shell.run("tar", ["--xattrs", "-tvvf", path])
        XCTAssertTrue(gnu.contains("user.dumpkit.contentType"), gnu)
    }

    func testOwnerIsZeroWithoutNamesAndTheSameEntriesGiveTheSameBytes() throws {
        let a = directory.path("a.tar.zst")
        let b = directory.path("b.tar.zst")
        try writeArchive(a, threads: 2, sampleEntries)
        try writeArchive(b, threads: 2, sampleEntries)
        XCTAssertEqual(try contents(a), try contents(b))
        let listing = try Shell.run("tar", ["--numeric-owner", "-tvf", a])
        XCTAssertTrue(listing.split(separator: "\n").allSatisfy { $0.contains(" 0/0 ") }, listing)
        let plain = directory.path("c.tar")
        try writeArchive(plain, compression: .none, sampleEntries)
        let names = try Shell.run("python3", ["-c", "import tarfile; print({(m.uname, m.gname) for m in tarfile.open('\(plain)')})"])
        XCTAssertEqual(names, "{('', '')}\n")
    }

    func testLinksAndDirectoriesRoundTrip() throws {
        let path = directory.path("links.tar")
        try writeArchive(
            path, compression: .none,
            [
                (ArchiveEntry(path: "dir", kind: .directory, permissions: 0o755), []),
                (ArchiveEntry(path: "dir/file", size: 2), [1, 2]),
                (ArchiveEntry(path: "dir/link", kind: .symbolicLink(target: "file")), []),
                (ArchiveEntry(path: "dir/hard", kind: .hardLink(target: "dir/file")), []),
            ])
        let kinds = try readArchive(path).map(\.0.kind)
        XCTAssertEqual(kinds, [.directory, .file, .symbolicLink(target: "file"), .hardLink(target: "dir/file")])
    }

    func testEntryDataMustMatchTheDeclaredSize() throws {
        let path = directory.path("short.tar")
        try withFileDescriptor(path, writing: true) { fd in
            let writer = try ArchiveWriter(sink: FileSink(descriptor: fd), format: .tar, compression: .none, name: path)
            try writer.begin(ArchiveEntry(path: "a", size: 10))
            try [UInt8](repeating: 1, count: 4).withUnsafeBytes { try writer.write($0) }
            XCTAssertThrowsError(try writer.begin(ArchiveEntry(path: "b", size: 1))) { error in
                XCTAssertEqual("\(error)", "\(path): a: 6 bytes short of the entry's declared size")
            }
        }
        try withFileDescriptor(path, writing: true) { fd in
            let writer = try ArchiveWriter(sink: FileSink(descriptor: fd), format: .tar, compression: .none, name: path)
            try writer.begin(ArchiveEntry(path: "a", size: 2))
            XCTAssertThrowsError(try [UInt8](repeating: 1, count: 3).withUnsafeBytes { try writer.write($0) })
        }
    }

    func testTheSinksErrorComesBackUnchanged() throws {
        let path = directory.path("full.tar.zst")
        try withFileDescriptor(path, writing: true) { fd in
            let writer = try ArchiveWriter(sink: FileSink(descriptor: fd, limit: 100_000), format: .tar, compression: .zstd, name: path)
            XCTAssertThrowsError(
                try {
                    for (entry, data) in sampleEntries {
                        try writer.begin(entry)
                        try data.withUnsafeBytes { try writer.write($0) }
                    }
                    try writer.finish()
                }()
            ) { error in
                XCTAssertTrue(error is FileSink.DiskFull, "\(error)")
            }
        }
    }

    func testBadOptionsAreClearErrors() throws {
        let path = directory.path("x")
        let cases: [(ArchiveFormat, CompressionFilter, Int?, Int?, String)] = [
            (.zip, .zstd, nil, nil, "zip archives compress entries with deflate (gzip) or not at all, not with zstd"),
            (.tar, .none, 3, nil, "a compression level needs a compression"),
            (.tar, .zstd, nil, 0, "the number of compression threads must be at least 1, not 0"),
            (.tar, .gzip, 42, nil, "gzip does not support compression level 42"),
        ]
        for (format, compression, level, threads, message) in cases {
            try withFileDescriptor(path, writing: true) { fd in
                XCTAssertThrowsError(
                    try ArchiveWriter(
                        sink: FileSink(descriptor: fd), format: format, compression: compression, level: level, threads: threads, name: path
                    )
                ) { error in
                    XCTAssertEqual((error as? ArchiveError)?.message, message)
                }
            }
        }
    }

    func testReaderErrorsNameTheArchiveAndTheEntry() throws {
        let path = directory.path("cut.tar.zst")
        try writeArchive(path, sampleEntries)
        let bytes = try contents(path)
        try writeFile(path, Array(bytes.prefix(bytes.count - 2000)))
        let error = archiveError { _ = try readArchive(path) }
        XCTAssertEqual(error?.name, path)
        XCTAssertTrue(error?.message.hasPrefix("v1/big.bin: ") ?? false, error?.message ?? "")

        let notArchive = directory.path("text.tar")
        try writeFile(notArchive, Array(String(repeating: "just some text\n", count: 100).utf8))
        let other = archiveError { _ = try ArchiveReader(path: notArchive).nextEntry() }
        XCTAssertEqual(other?.description, "\(notArchive): not a tar or zip archive (Unrecognized archive format)")

        XCTAssertEqual(
            archiveError { _ = try ArchiveReader(path: directory.path("missing.tar")) }?.message, "cannot open: No such file or directory")
        XCTAssertEqual(archiveError { _ = try ArchiveReader(path: directory.url.path) }?.message, "is a directory, expected an archive")
    }

    func testAnEmptyFileIsAnArchiveWithoutEntries() throws {
        let path = directory.path("empty.tar")
        try writeFile(path, [])
        XCTAssertEqual(try readArchive(path).count, 0)
        // Asking again after the end is still the end (libarchive itself fails with an internal error).
        let reader = try ArchiveReader(path: path)
        XCTAssertNil(try reader.nextEntry())
        XCTAssertNil(try reader.nextEntry())
        XCTAssertNil(reader.format)
    }

    func testArchiveNamesChooseFormatAndCompression() {
        XCTAssertEqual(ArchiveFormat.forPath("b.tar.zst")?.compression, .zstd)
        XCTAssertEqual(ArchiveFormat.forPath("dir.x/B.TGZ")?.compression, .gzip)
        XCTAssertEqual(ArchiveFormat.forPath("b.tar.xz")?.compression, .xz)
        XCTAssertEqual(ArchiveFormat.forPath("b.tar")?.compression, CompressionFilter.none)
        XCTAssertEqual(ArchiveFormat.forPath("b.zip")?.format, .zip)
        XCTAssertNil(ArchiveFormat.forPath("b.json.gz"))
        XCTAssertNil(ArchiveFormat.forPath("-"))
    }
}
