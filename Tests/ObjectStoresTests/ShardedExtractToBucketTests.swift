import DumpKit
import Foundation
import ObjectStores
import TestSupport
import XCTest

/// A sharded `extract-blobs` into a bucket (SeaweedFS and fake-gcs-server): shards that write the
/// same content-addressed objects leave the objects, metadata and tokens of the unsharded run, and
/// the merged output is its bytes.
final class ShardedExtractToBucketTests: BothStoresTestCase {
    /// Records whose PNGs repeat every five records, so every shard writes objects others write too.
    private func dumpWithRepeatedImages(_ count: Int) -> String {
        let records = (0..<count).map { i -> String in
            let bytes: [UInt8] =
                [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + (0..<1500).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ i % 5) }
            return "\"-K\(i)\": {\"title\": \"t\(i)\", \"image\": \"data:image/png;base64,\(Data(bytes).base64EncodedString())\"}"
        }
        return "{\"v1\": {\"todolist\": {" + records.joined(separator: ", ") + "}}}"
    }

    func testShardsWritingTheSameObjectsLeaveTheUnshardedBucket() throws {
        let (s3, gcs, environment) = try servers()
        let directory = try temporaryDirectory(self)
        let dump = directory.appendingPathComponent("dump.json").path
        try dumpWithRepeatedImages(40).write(toFile: dump, atomically: true, encoding: .utf8)
        let index = directory.appendingPathComponent("dump.dkindex").path
        _ = try run(["index", dump, "-o", index, "--unit-bytes", "2048", "-q"], environment)
        let options = ["--content-addressed", "--ref-style", "salada", "--bucket", "my-app.appspot.com", "-q"]
        for scheme in ["s3", "gs"] {
            let reference = "\(scheme)://\(scheme == "s3" ? try s3.makeBucket() : try gcs.makeBucket())/images"
            let sharded = "\(scheme)://\(scheme == "s3" ? try s3.makeBucket() : try gcs.makeBucket())/images"
            let referenceOut = directory.appendingPathComponent("\(scheme)-reference.json").path
            let unsharded = try run(["extract-blobs", dump, "-o", referenceOut, "--blobs", reference, "--json"] + options, environment)
            let out = directory.appendingPathComponent("\(scheme)-sharded.json").path
            for i in 0..<3 {
                _ = try run(
                    ["extract-blobs", dump, "-o", out, "--blobs", sharded, "--index", index, "--shard", "\(i)/3"] + options, environment)
            }
            let merged = try run(["merge", out, "--json", "-q"], environment)
            XCTAssertEqual(try contents(out), try contents(referenceOut), scheme)
            XCTAssertEqual(merged.stdout, unsharded.stdout, scheme)

            let stores = ObjectStoreOptions(environment: environment)
            let a = try stores.openBlobStore(reference, writable: false), b = try stores.openBlobStore(sharded, writable: false)
            var names: [String] = [], shardedNames: [String] = []
            try a.list { names.append($0) }
            try b.list { shardedNames.append($0) }
            XCTAssertEqual(names.count, 5, scheme)
            XCTAssertEqual(shardedNames.sorted(), names.sorted(), scheme)
            for name in names {
                XCTAssertEqual(try b.metadata(name)?.withUpdated(nil), try a.metadata(name)?.withUpdated(nil), "\(scheme): \(name)")
                XCTAssertEqual(try b.get(name), try a.get(name), "\(scheme): \(name)")
            }
        }
    }
}
