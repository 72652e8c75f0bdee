import DumpKit
import Foundation
import NIOCore
import ObjectStores
import TestSupport
import XCTest

/// A fresh temporary directory, removed by the test's teardown.
func temporaryDirectory(_ test: XCTestCase) throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("objectstores-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    test.addTeardownBlock { try? FileManager.default.removeItem(at: url) }
    return url
}

/// Metadata for `bytes` under `name`, with a download token.
func metadata(_ name: String, _ bytes: [UInt8], contentType: String = "image/png", token: String = "0f6b2c1e-1111-4222-8333-444455556666")
    -> BlobMetadata
{
    bytes.withUnsafeBytes { ContentDigest($0) }.metadata(
        name: name, contentType: contentType, customMetadata: ["firebaseStorageDownloadTokens": token])
}
