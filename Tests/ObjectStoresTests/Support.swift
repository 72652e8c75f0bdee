import DumpKit
import Foundation
import NIOCore
import ObjectStores
import TestSupport
import XCTest

/// Runs the built `dumpkit` binary with an environment of the test's choosing.
enum DumpKitCLI {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    static var binary: URL {
        var dir = Bundle(for: Marker.self).bundleURL
        while dir.path != "/" {
            let candidate = dir.appendingPathComponent("dumpkit")
            var isDir: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isDir), !isDir.boolValue { return candidate }
            dir.deleteLastPathComponent()
        }
        fatalError("dumpkit binary not found beside the test bundle")
    }

    static func run(_ arguments: [String], environment: [String: String], in directory: URL? = nil) throws -> Result {
        let r = try Shell.execute(binary, arguments, in: directory, environment: environment)
        return Result(
            status: r.status, stdout: String(decoding: r.stdout, as: UTF8.self), stderr: String(decoding: r.stderr, as: UTF8.self))
    }

    private final class Marker {}
}

/// A fresh temporary directory, removed by the test's teardown.
func temporaryDirectory(_ test: XCTestCase) throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("objectstores-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    test.addTeardownBlock { try? FileManager.default.removeItem(at: url) }
    return url
}

/// Deterministic bytes of `count` (seeded), so that objects differ by seed.
func testBytes(_ count: Int, seed: UInt64) -> [UInt8] {
    var rng = SplitMix64(seed: seed)
    var out = [UInt8](repeating: 0, count: count)
    var i = 0
    while i < count {
        var v = rng.next()
        for _ in 0..<8 where i < count {
            out[i] = UInt8(truncatingIfNeeded: v)
            v >>= 8
            i += 1
        }
    }
    return out
}

/// Metadata for `bytes` under `name`, with a download token.
func metadata(_ name: String, _ bytes: [UInt8], contentType: String = "image/png", token: String = "0f6b2c1e-1111-4222-8333-444455556666")
    -> BlobMetadata
{
    bytes.withUnsafeBytes { ContentDigest($0) }.metadata(
        name: name, contentType: contentType, customMetadata: ["firebaseStorageDownloadTokens": token])
}
