import ArchiveKit
import XCTest

final class CompressionFilterTests: XCTestCase {
    func testDetectRecognisesEachMagicAndNothingShorter() {
        let table: [([UInt8], CompressionFilter)] = [
            ([0x1F, 0x8B, 0x08, 0x00, 0x00, 0x00], .gzip),
            ([0x1F, 0x8B], .gzip),
            ([0x28, 0xB5, 0x2F, 0xFD, 0x24, 0x00], .zstd),
            ([0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00], .xz),
            (Array("BZh91AY".utf8), .bzip2),
            (Array("BZh1".utf8), .bzip2),
            (Array("BZh0".utf8), .none),
            (Array("BZh".utf8), .none),
            ([0xFD, 0x37, 0x7A, 0x58, 0x5A], .none),
            ([0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x01], .none),
            ([0x28, 0xB5, 0x2F], .none),
            ([0x1F], .none),
            ([0x8B, 0x1F], .none),
            ([], .none),
            (Array(#"{"v1":"#.utf8), .none),
        ]
        for (magic, expected) in table {
            XCTAssertEqual(magic.withUnsafeBytes { CompressionFilter.detect(magic: $0) }, expected, "\(magic)")
        }
    }

    func testDetectLooksAtNoMoreThanTheMagicLength() {
        var bytes: [UInt8] = [0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00]
        XCTAssertEqual(bytes.count, CompressionFilter.magicLength)
        bytes += Array(repeating: 0xFF, count: 100)
        XCTAssertEqual(bytes.withUnsafeBytes { CompressionFilter.detect(magic: $0) }, .xz)
    }

    func testForPathChoosesByExtension() {
        let table: [(String, CompressionFilter)] = [
            ("dump.json.gz", .gzip),
            ("backup.tgz", .gzip),
            ("/var/backups/DUMP.JSON.GZ", .gzip),
            ("bucket.tar.zst", .zstd),
            ("bucket.tzst", .zstd),
            ("dump.json.xz", .xz),
            ("bucket.txz", .xz),
            ("dump.json.bz2", .bzip2),
            ("bucket.tbz2", .bzip2),
            ("dump.json", .none),
            ("dump.ndjson", .none),
            ("dump", .none),
            ("gz", .none),
            (".gz", .none),
            ("backups.gz/dump.json", .none),
            ("dump.json.gz/", .none),
            ("dump.gzip", .none),
            ("", .none),
        ]
        for (path, expected) in table {
            XCTAssertEqual(CompressionFilter.forPath(path), expected, path)
        }
    }

    func testFileExtensionIsWhatForPathRecognises() {
        XCTAssertEqual(CompressionFilter.allCases.map(\.fileExtension), [nil, "gz", "zst", "xz", "bz2"])
        for filter in CompressionFilter.allCases where filter != .none {
            XCTAssertEqual(CompressionFilter.forPath("dump.json.\(filter.fileExtension!)"), filter)
        }
    }
}
