import CloudHTTP
import DumpKit
import Foundation
import NIOCore
import ObjectStores
import TestSupport
import XCTest

/// `dumpkit archive` and `backup` with a bucket (`s3://`, `gs://`) as the source, against SeaweedFS and
/// fake-gcs-server: what other tools read of the archives, the round trip bucket -> archive -> bucket
/// with the metadata, filters, objects overwritten mid-archive, and the errors.
final class ArchiveFromBucketTests: BothStoresTestCase {
    func json(_ r: CLI.Result) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any], r.stdout)
    }

    /// Names whose byte order is not that of a walk of folders ('-' and '.' sort before '/'), nor a
    /// case-blind or Unicode order.
    static let names = ["a-b", "a.b", "a/b", "a/c/d.png", "B", "z/ü.txt", "é.txt", "v1/todolist/-K1/image.png"]

    /// A blob-store folder with `names` (and `big.bin`, over 8 MiB, and `extra` small objects under
    /// `many/`), each with a content type, cache control, a download token and an `Owner` key.
    func sampleStore(_ folder: String, extra: Int = 0) throws -> [String: [UInt8]] {
        let store = try DirectoryBlobStore(directory: folder, writable: true)
        defer { store.close() }
        var all: [String: [UInt8]] = [:]
        let names = Self.names + ["big.bin"] + (0..<extra).map { String(format: "many/%05d", $0) }
        for (i, name) in names.enumerated() {
            let bytes = SampleBytes.random(
                count: name == "big.bin" ? (9 << 20) + 77 : name.hasPrefix("many/") ? 10 : 1000 + 37 * i, seed: UInt64(i))
            var m = metadata(name, bytes, contentType: name.hasSuffix(".txt") ? "text/plain" : "image/png", token: "tok-\(i)")
            m.cacheControl = "public, max-age=\(i)"
            m.customMetadata["Owner"] = "Ana"
            _ = try bytes.withUnsafeBytes { try store.put($0, metadata: m, replacing: false) }
            all[name] = bytes
        }
        return all
    }

    /// The entry paths of an archive, as bsdtar lists them.
    func bsdtarList(_ archive: String) throws -> [String] {
        let bsdtar = try RequiredTool.path("bsdtar", package: "libarchive-tools")
        return try Shell.run(bsdtar, ["-tf", archive]).split(separator: "\n").map(String.init)
    }

    func manifest(_ archive: String) throws -> [String: Any] {
        let bsdtar = try RequiredTool.path("bsdtar", package: "libarchive-tools")
        let text = try Shell.runData(bsdtar, ["-xOf", archive, ".dumpkit-manifest.json"])
        return try XCTUnwrap(JSONSerialization.jsonObject(with: text) as? [String: Any])
    }

    /// The manifest's objects by path, without their times (a folder's are its files', a bucket's its uploads').
    func manifestObjects(_ archive: String) throws -> [String: NSDictionary] {
        var out: [String: NSDictionary] = [:]
        for case var o as [String: Any] in try manifest(archive)["objects"] as? [Any] ?? [] {
            o["updated"] = nil
            out[o["path"] as! String] = o as NSDictionary
        }
        return out
    }

    /// The same objects in a folder, an S3 bucket and a Cloud Storage bucket (more than a listing page
    /// of them, one over 8 MiB, read in parts): archives that bsdtar lists with the same entries in the
    /// same order and extracts with the same bytes; the manifests hold the same metadata (S3 gives
    /// custom keys back in lower case, but `firebaseStorageDownloadTokens` its spelling).
    func testBucketArchivesListAndExtractWithBsdtarAsAFoldersDo() throws {
        let (s3, gcs, environment) = try servers()
        let bsdtar = try RequiredTool.path("bsdtar", package: "libarchive-tools")
        let directory = try temporaryDirectory(self)
        let folder = directory.appendingPathComponent("store").path
        let expected = try sampleStore(folder, extra: 1010)
        let fromFolder = directory.appendingPathComponent("folder.tar.zst").path
        try run(["archive", folder, "-o", fromFolder, "-q"], environment)
        let entries = try bsdtarList(fromFolder)
        XCTAssertEqual(entries.count, expected.count + 1)
        let folderObjects = try manifestObjects(fromFolder)

        for url in ["s3://\(try s3.makeBucket())/src", "gs://\(try gcs.makeBucket())/src"] {
            try run(["copy", folder, url, "-q", "--jobs", "64"], environment)
            for name in ["b.tar.zst", "b.zip"] {
                let output = directory.appendingPathComponent(url.prefix(2) + "-" + name).path
                let r = try run(["archive", url, "-o", output, "--json"], environment)
                let summary = try json(r)
                XCTAssertEqual(summary["objects"] as? Int, expected.count, r.stdout)
                XCTAssertEqual((summary["changed"] as? [Any])?.count, 0, r.stdout)
                XCTAssertEqual(try bsdtarList(output), entries, url)

                let extracted = directory.appendingPathComponent("x-\(url.prefix(2))-\(name)")
                try FileManager.default.createDirectory(at: extracted, withIntermediateDirectories: true)
                _ = try Shell.run(bsdtar, ["-xf", output, "-C", extracted.path])
                for (object, bytes) in expected {
                    XCTAssertEqual(try contents(extracted.appendingPathComponent(object).path), bytes, "\(url) \(object)")
                }
                XCTAssertEqual(filesBelow(extracted.path).count, expected.count + 1)
                try run(["verify", output, "-q"], environment)

                let objects = try manifestObjects(output)
                XCTAssertEqual(Set(objects.keys), Set(folderObjects.keys))
                for (path, want) in folderObjects {
                    var want = want as! [String: Any]
                    if url.hasPrefix("s3") {
                        // S3 keeps custom keys in lower case; the known Firebase key gets its spelling back.
                        var custom = want["metadata"] as! [String: String]
                        custom["owner"] = custom.removeValue(forKey: "Owner")
                        want["metadata"] = custom
                    }
                    XCTAssertEqual(objects[path], want as NSDictionary, "\(url) \(path)")
                }
            }
        }
    }

    /// `archive --shard` of a bucket: `index --bucket` lists it (more than a page), three shards read
    /// their ranges of names, and the merged archive has the unsharded one's manifest and entries,
    /// verifies, and bsdtar extracts the same bytes.
    func testShardedArchivesOfABucketReadAsTheUnshardedOne() throws {
        let (s3, gcs, environment) = try servers()
        let directory = try temporaryDirectory(self)
        let folder = directory.appendingPathComponent("store").path
        let expected = try sampleStore(folder, extra: 1010)
        for url in ["s3://\(try s3.makeBucket())/src", "gs://\(try gcs.makeBucket())/src"] {
            try run(["copy", folder, url, "-q", "--jobs", "64"], environment)
            let name = String(url.prefix(2))
            let reference = directory.appendingPathComponent("\(name)-reference.tar.zst").path
            try run(["archive", url, "-o", reference, "-q"], environment)
            let index = directory.appendingPathComponent("\(name).dkindex").path
            let indexed = try json(try run(["index", "--bucket", url, "-o", index, "--unit-bytes", "4096", "--json"], environment))
            XCTAssertEqual(indexed["objects"] as? Int, expected.count, url)
            let out = directory.appendingPathComponent("\(name)-sharded.tar.zst").path
            var archived = 0
            for i in 0..<3 {
                let r = try run(["archive", url, "-o", out, "--index", index, "--shard", "\(i)/3", "--json"], environment)
                archived += try json(r)["objects"] as? Int ?? 0
            }
            XCTAssertEqual(archived, expected.count, "\(url): every object in one shard")
            let merged = try json(try run(["merge", out, "--json"], environment))
            XCTAssertEqual(merged["objects"] as? Int, expected.count, url)
            XCTAssertEqual(try manifestObjects(out), try manifestObjects(reference), url)
            XCTAssertEqual(try bsdtarList(out), try bsdtarList(reference), url)
            try run(["verify", out, "-q"], environment)
            let extracted = directory.appendingPathComponent("x-\(name)")
            try FileManager.default.createDirectory(at: extracted, withIntermediateDirectories: true)
            _ = try Shell.run(try RequiredTool.path("bsdtar", package: "libarchive-tools"), ["-xf", out, "-C", extracted.path])
            for (object, bytes) in expected {
                XCTAssertEqual(try contents(extracted.appendingPathComponent(object).path), bytes, "\(url) \(object)")
            }
        }
    }

    /// A bucket's sample objects (`sampleStore`, with `big.bin` of 9 MiB) and `w/large.bin` of 12 MiB, in
    /// `scheme://BUCKET/src`; the bucket and the objects.
    private func bucketWithLargeObjects(_ scheme: String, in directory: URL) throws -> (bucket: String, objects: [String: [UInt8]]) {
        let folder = directory.appendingPathComponent("store-\(scheme)").path
        var expected = try sampleStore(folder, extra: 30)
        let store = try DirectoryBlobStore(directory: folder, writable: true)
        let large = SampleBytes.random(count: (12 << 20) + 5, seed: 99)
        _ = try large.withUnsafeBytes { try store.put($0, metadata: metadata("w/large.bin", large), replacing: false) }
        store.close()
        expected["w/large.bin"] = large
        let bucket = try bucket(scheme)
        try run(["copy", folder, bucket + "/src", "-q", "--jobs", "16"], try servers().environment)
        return (bucket, expected)
    }

    /// `archive --shard` with `-o s3://...` / `gs://...`: the parts, objects files and manifests are
    /// objects beside the output, `merge` joins them in the store (S3 part copies with the manifest's
    /// frames and small parts sent, Cloud Storage compose) into an archive that reads as the unsharded
    /// one: the same manifest, the same tar after it, the same `list`, `bsdtar -tv`, `verify`, and
    /// `restore` gives the objects back. Only the parts and the archive are left in the bucket.
    func testShardedArchiveWithItsPartsInABucketIsJoinedInTheStore() throws {
        let environment = try servers().environment
        let directory = try temporaryDirectory(self)
        let bsdtar = try RequiredTool.path("bsdtar", package: "libarchive-tools")
        for scheme in ["s3", "gs"] {
            let (bucket, expected) = try bucketWithLargeObjects(scheme, in: directory)
            let source = bucket + "/src"
            let reference = directory.appendingPathComponent("\(scheme)-reference.tar.zst").path
            try run(["archive", source, "-o", reference, "-q"], environment)
            let index = directory.appendingPathComponent("\(scheme).dkindex").path
            try run(["index", "--bucket", source, "-o", index, "--unit-bytes", "4096", "-q"], environment)
            let out = bucket + "/out/b.tar.zst"
            for i in 0..<3 { try run(["archive", source, "-o", out, "--index", index, "--shard", "\(i)/3", "-q"], environment) }
            let partKeys = (0..<3).flatMap { i in ["", ".objects", ".manifest"].map { "out/b.tar.zst.part-\(i)-of-3" + $0 } }.sorted()
            XCTAssertEqual(try keys(in: bucket, startingWith: "out/").sorted(), partKeys, "\(scheme): the shards wrote to the bucket")
            var sizes: [Int] = []
            for i in 0..<3 {
                let manifest = try XCTUnwrap(try download("\(out).part-\(i)-of-3.manifest", to: directory))
                let m = try XCTUnwrap(JSONSerialization.jsonObject(with: manifest) as? [String: Any])
                sizes.append(try XCTUnwrap(m["partBytes"] as? Int))
                XCTAssertEqual(m["partETag"] != nil, scheme == "s3", "\(scheme): S3 parts are checked by their ETag")
            }
            XCTAssertGreaterThan(sizes.max()!, 5 << 20, "\(scheme) \(sizes): a part over S3's smallest part")
            XCTAssertLessThan(sizes.min()!, 5 << 20, "\(scheme) \(sizes): a part under S3's smallest part")

            let summary = try json(try run(["merge", out, "--json", "-q"], environment))
            XCTAssertEqual(summary["objects"] as? Int, expected.count, scheme)
            let written = try XCTUnwrap(summary["bytesOut"] as? Int)
            let copied = try XCTUnwrap(summary["copiedInStore"] as? Int), streamed = try XCTUnwrap(summary["streamed"] as? Int)
            XCTAssertEqual(copied + streamed, written, scheme)
            if scheme == "s3" {
                // The large part is copied by the store past the 5 MiB sent with the manifest and small parts before it.
                XCTAssertGreaterThan(copied, 5 << 20, "\(scheme): copied in the store")
                XCTAssertLessThan(streamed, written - (5 << 20), "\(scheme): sent by dumpkit")
            } else {
                XCTAssertLessThan(streamed, 1 << 20, "\(scheme): only the manifest's and end frames are uploaded")
            }
            let mergedData = try XCTUnwrap(try download(out, to: directory), scheme)
            XCTAssertEqual(mergedData.count, written, scheme)
            let merged = directory.appendingPathComponent("\(scheme)-merged.tar.zst").path
            try mergedData.write(to: URL(fileURLWithPath: merged))

            let (manifest, entries) = try manifestAndEntries(of: reference)
            let joined = try manifestAndEntries(of: merged)
            XCTAssertEqual(joined.manifest, manifest, "\(scheme): the manifests")
            XCTAssertTrue(joined.entries == entries, "\(scheme): the tar after the manifest differs")
            // The unsharded manifest entry is padded to the width reserved before hashing; the merged one is not.
            XCTAssertEqual(
                try Shell.run(bsdtar, ["-tvf", merged]).split(separator: "\n").dropFirst(),
                try Shell.run(bsdtar, ["-tvf", reference]).split(separator: "\n").dropFirst(), "\(scheme): bsdtar -tv")
            XCTAssertEqual(
                try run(["list", merged], environment).stdout, try run(["list", reference], environment).stdout, "\(scheme): list")
            let verified = try run(["verify", merged], environment)
            XCTAssertTrue(verified.stdout.contains("match the manifest"), verified.stdout)
            let restored = directory.appendingPathComponent("restored-\(scheme)").path
            try run(["restore", merged, restored, "-q"], environment)
            for (name, bytes) in expected { XCTAssertEqual(try contents(restored + "/" + name), bytes, "\(scheme) \(name)") }

            XCTAssertEqual(
                try keys(in: bucket, startingWith: "out/").sorted(), (partKeys + ["out/b.tar.zst"]).sorted(), "\(scheme): no temporaries")
            if scheme == "s3" {
                let client = try XCTUnwrap(
                    ObjectStoreOptions(environment: environment).client(for: XCTUnwrap(ObjectStoreURL(bucket + "/"))) as? S3Client)
                XCTAssertEqual(try runBlocking { try await client.uploadsInProgress(prefix: "") }.count, 0, "no upload left")
                // `--parts`: the same parts joined into a local file, and into Cloud Storage (through
                // dumpkit); local parts of the same shards joined into S3: the same bytes.
                let local = directory.appendingPathComponent("from-bucket.tar.zst").path
                try run(["merge", local, "--parts", out, "-q"], environment)
                XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: local)), mergedData, "bucket parts into a local file")
                let across = try self.bucket("gs") + "/from-s3.tar.zst"
                let streamedAcross = try json(try run(["merge", across, "--parts", out, "--json", "-q"], environment))
                XCTAssertEqual(streamedAcross["streamed"] as? Int, written, "S3 parts into Cloud Storage go through dumpkit")
                XCTAssertEqual(try download(across, to: directory), mergedData, "S3 parts into Cloud Storage")
                let localParts = directory.appendingPathComponent("local-parts.tar.zst").path
                for i in 0..<3 {
                    try run(["archive", source, "-o", localParts, "--index", index, "--shard", "\(i)/3", "-q"], environment)
                }
                let intoBucket = bucket + "/from-local.tar.zst"
                try run(["merge", intoBucket, "--parts", localParts, "-q"], environment)
                XCTAssertEqual(try download(intoBucket, to: directory), mergedData, "local parts into S3")
            }
        }
    }

    /// A missing part, a missing objects file or one with other bytes stops the merge of an archive
    /// whose parts are in a bucket: exit 1 naming the object's URL, nothing under the output's name,
    /// no temporary object and no upload left; the shard run again mends it.
    func testAMissingOrChangedArchivePartInABucketIsNamedAndNothingIsWritten() throws {
        let (_, _, environment) = try servers()
        let directory = try temporaryDirectory(self)
        for scheme in ["s3", "gs"] {
            let (bucket, _) = try bucketWithLargeObjects(scheme, in: directory)
            let source = bucket + "/src"
            let index = directory.appendingPathComponent("\(scheme).dkindex").path
            try run(["index", "--bucket", source, "-o", index, "--unit-bytes", "4096", "-q"], environment)
            let out = bucket + "/out/b.tar.zst"
            func shard(_ i: Int) throws {
                try run(["archive", source, "-o", out, "--index", index, "--shard", "\(i)/3", "-q"], environment)
            }
            for i in 0..<3 { try shard(i) }
            let stores = ObjectStoreOptions(environment: environment)
            let (client, _) = try XCTUnwrap(stores.object(at: out))
            func refused(_ message: String, _ what: String) throws {
                let r = try run(["merge", out], environment, expect: 1)
                XCTAssertTrue(r.stderr.contains(message), "\(scheme) \(what): \(r.stderr)")
                XCTAssertNil(try download(out, to: directory), "\(scheme) \(what): nothing at the output")
                XCTAssertEqual(
                    try keys(in: bucket, startingWith: "out/").filter { !$0.contains(".part-") }, [], "\(scheme) \(what): no temporaries")
                if let s3client = client as? S3Client {
                    XCTAssertEqual(try runBlocking { try await s3client.uploadsInProgress(prefix: "") }.count, 0, "\(what): no upload left")
                }
            }
            try deleteObject(at: bucket + "/out/b.tar.zst.part-1-of-3")
            try refused("shard 1 of 3: \(out).part-1-of-3 is missing", "deleted part")
            try shard(1)

            try deleteObject(at: bucket + "/out/b.tar.zst.part-0-of-3.objects")
            try refused("\(out).part-0-of-3.objects: missing", "deleted objects file")
            try shard(0)

            let objects = try XCTUnwrap(try download(out + ".part-2-of-3.objects", to: directory))
            var changed = [UInt8](objects)
            changed[changed.count - 10] ^= 1
            let key = "out/b.tar.zst.part-2-of-3.objects"
            _ = try runBlocking { [changed] in
                try await client.put(
                    key: key, body: ByteBuffer(bytes: changed), object: StoredObject(key: key, size: Int64(changed.count)),
                    createOnly: false)
            }
            try refused("\(out).part-2-of-3.objects: not the file its manifest describes", "changed objects file")
            try shard(2)
            try run(["merge", out, "-q"], environment)
            XCTAssertNotNil(try download(out, to: directory), scheme)
        }
    }

    /// Objects written by other tools (the aws CLI on S3, with a multipart upload whose ETag is no MD5;
    /// rclone and the JSON API on Cloud Storage) with their metadata -> archive -> restore into another
    /// bucket: the same bytes and metadata, read back with the aws CLI and the client. Across stores
    /// too: S3's archive restored into Cloud Storage spells `firebaseStorageDownloadTokens` as Firebase reads it.
    func testObjectsOtherToolsWroteGoThroughAnArchiveBackIntoABucket() throws {
        let (s3, gcs, environment) = try servers()
        let rclone = try RequiredTool.path("rclone", package: "rclone")
        let curl = try RequiredTool.path("curl", package: "curl")
        let directory = try temporaryDirectory(self)
        var files: [String: [UInt8]] = [:]
        for (name, size) in [("photos/a.png", 3000), ("photos/b.jpg", 5000), ("docs/large.bin", (9 << 20) + 5)] {
            let bytes = SampleBytes.random(count: size, seed: UInt64(size))
            files[name] = bytes
            try writeFile(directory.appendingPathComponent(name.replacingOccurrences(of: "/", with: "_")).path, bytes)
        }
        func file(_ name: String) -> String { directory.appendingPathComponent(name.replacingOccurrences(of: "/", with: "_")).path }

        // S3, with the aws CLI.
        let s3Bucket = try s3.makeBucket()
        for name in files.keys.sorted() {
            try s3.aws([
                "s3", "cp", file(name), "s3://\(s3Bucket)/src/\(name)", "--content-type",
                name.hasSuffix(".png") ? "image/png" : "application/x-thing",
                "--cache-control", "max-age=7", "--content-disposition", "inline", "--content-language", "de",
                "--metadata", "firebaseStorageDownloadTokens=tok-\(name.count),origin=aws",
            ])
        }
        let s3Archive = directory.appendingPathComponent("s3.tar.zst").path
        try run(["archive", "s3://\(s3Bucket)/src", "-o", s3Archive, "-q"], environment)
        let restoredS3 = try s3.makeBucket()
        try run(["restore", s3Archive, "s3://\(restoredS3)/restored", "--verify", "-q"], environment)
        for (name, bytes) in files {
            let head =
                try JSONSerialization.jsonObject(
                    with: Data(try s3.aws(["s3api", "head-object", "--bucket", restoredS3, "--key", "restored/\(name)"]).utf8))
                as! [String: Any]
            XCTAssertEqual(head["ContentType"] as? String, name.hasSuffix(".png") ? "image/png" : "application/x-thing", name)
            XCTAssertEqual(head["CacheControl"] as? String, "max-age=7", name)
            XCTAssertEqual(head["ContentDisposition"] as? String, "inline", name)
            XCTAssertEqual(head["ContentLanguage"] as? String, "de", name)
            let custom = head["Metadata"] as! [String: String]
            XCTAssertEqual(custom["firebasestoragedownloadtokens"], "tok-\(name.count)", name)
            XCTAssertEqual(custom["origin"], "aws", name)
            let back = directory.appendingPathComponent("back-s3").path
            try s3.aws(["s3", "cp", "s3://\(restoredS3)/restored/\(name)", back])
            XCTAssertEqual(try contents(back), bytes, name)
        }

        // Cloud Storage: rclone (bytes and type), and the JSON API with custom metadata in its own case.
        let gsBucket = try gcs.makeBucket()
        var rcloneEnvironment = environment
        rcloneEnvironment["RCLONE_CONFIG"] = "/dev/null"
        for (key, value) in ["G_TYPE": "google cloud storage", "G_ANONYMOUS": "true", "G_ENDPOINT": gcs.endpoint + "/storage/v1/"] {
            rcloneEnvironment["RCLONE_CONFIG_" + key] = value
        }
        let copied = try Shell.execute(
            URL(fileURLWithPath: rclone), ["copyto", file("photos/b.jpg"), "g:\(gsBucket)/src/photos/b.jpg"], environment: rcloneEnvironment
        )
        XCTAssertEqual(copied.status, 0, String(decoding: copied.stderr, as: UTF8.self))
        for name in ["photos/a.png", "docs/large.bin"] {
            let boundary = "b0undary"
            let resource =
                #"{"name":"src/\#(name)","contentType":"image/png","cacheControl":"no-cache","metadata":{"firebaseStorageDownloadTokens":"gs-\#(name.count)","Owner":"Ana"}}"#
            var body = Data(
                "--\(boundary)\r\nContent-Type: application/json\r\n\r\n\(resource)\r\n--\(boundary)\r\nContent-Type: image/png\r\n\r\n"
                    .utf8)
            body += Data(files[name]!)
            body += Data("\r\n--\(boundary)--\r\n".utf8)
            let bodyFile = directory.appendingPathComponent("upload").path
            try body.write(to: URL(fileURLWithPath: bodyFile))
            _ = try Shell.run(
                curl,
                [
                    "-sf", "-X", "POST", "-H", "Content-Type: multipart/related; boundary=\(boundary)", "--data-binary", "@\(bodyFile)",
                    "\(gcs.endpoint)/upload/storage/v1/b/\(gsBucket)/o?uploadType=multipart",
                ])
        }
        let gsArchive = directory.appendingPathComponent("gs.zip").path
        try run(["archive", "gs://\(gsBucket)/src", "-o", gsArchive, "-q"], environment)
        let restoredGS = "gs://\(try gcs.makeBucket())/restored"
        try run(["restore", gsArchive, restoredGS, "--verify", "-q"], environment)
        let options = ObjectStoreOptions(environment: environment)
        let gsStore = try options.openBlobStore(restoredGS, writable: false)
        let gsSource = try options.openBlobStore("gs://\(gsBucket)/src", writable: false)
        for (name, bytes) in files {
            XCTAssertEqual(try gsStore.get(name), bytes, name)
            let m = try XCTUnwrap(try gsStore.metadata(name), name)
            if name == "photos/b.jpg" {
                // fake-gcs-server keeps no type for rclone's upload (Cloud Storage would give it
                // application/octet-stream); the manifest records none, the restore's upload gets the default.
                XCTAssertEqual(m.contentType, try gsSource.metadata(name)?.contentType ?? "application/octet-stream")
            } else {
                XCTAssertEqual(m.contentType, "image/png")
                XCTAssertEqual(m.cacheControl, "no-cache")
                XCTAssertEqual(
                    m.customMetadata, ["firebaseStorageDownloadTokens": "gs-\(name.count)", "Owner": "Ana"], "the case of custom keys kept")
            }
        }

        // S3's archive into Cloud Storage: the token under the key Firebase reads.
        let crossed = "gs://\(try gcs.makeBucket())/from-s3"
        try run(["restore", s3Archive, crossed, "-q"], environment)
        let crossedStore = try options.openBlobStore(crossed, writable: false)
        for (name, bytes) in files {
            XCTAssertEqual(try crossedStore.get(name), bytes, name)
            XCTAssertEqual(
                try crossedStore.metadata(name)?.customMetadata, ["firebaseStorageDownloadTokens": "tok-\(name.count)", "origin": "aws"],
                name)
        }
    }

    /// `--include`, `--exclude` and `--dry-run` from a bucket, as from a folder.
    func testIncludeExcludeAndDryRunFromABucket() throws {
        let (_, gcs, environment) = try servers()
        let directory = try temporaryDirectory(self)
        let folder = directory.appendingPathComponent("store").path
        _ = try sampleStore(folder)
        let url = "gs://\(try gcs.makeBucket())/p"
        try run(["copy", folder, url, "-q"], environment)
        let output = directory.appendingPathComponent("f.tar.zst").path

        let dry = try run(["archive", url, "-o", output, "--include", "a/*", "--exclude", "*.png", "--dry-run"], environment)
        XCTAssertEqual(dry.stdout.split(separator: "\n").map { String($0.split(separator: "\t").last!) }, ["a/b"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: output))
        XCTAssertTrue(dry.stderr.contains("dry run, nothing written: would archive 1 object"), dry.stderr)

        let r = try run(["archive", url, "-o", output, "--include", "a/*", "--include", "nothing/*", "--json"], environment, expect: 1)
        XCTAssertEqual(try json(r)["unmatchedIncludes"] as? [String], ["nothing/*"])
        XCTAssertTrue(r.stderr.contains("'nothing/*' matches no object in \(url)/"), r.stderr)
        XCTAssertEqual(try bsdtarList(output), [".dumpkit-manifest.json", "a/b", "a/c/d.png"])

        let backup = directory.appendingPathComponent("set.tar.zst").path
        let dump = directory.appendingPathComponent("backup.json").path
        try Data(#"{"v1":{}}"#.utf8).write(to: URL(fileURLWithPath: dump))
        try run(["backup", "--dump", dump, "--bucket", url, "-o", backup, "--include", "v1/*", "-q"], environment)
        XCTAssertEqual(try bsdtarList(backup), [".dumpkit-manifest.json", "bucket/v1/todolist/-K1/image.png", "dump/backup.json"])
        // Restored into a folder, the bucket part is a blob store: the metadata in sidecars, tokens and all.
        let restored = directory.appendingPathComponent("restored").path
        try run(["restore", backup, restored, "-q"], environment)
        let store = try DirectoryBlobStore(directory: restored + "/bucket", writable: false)
        defer { store.close() }
        XCTAssertEqual(try store.metadata("v1/todolist/-K1/image.png")?.customMetadata["firebaseStorageDownloadTokens"], "tok-7")
    }

    /// `overwrite_proxy.py LISTEN UPSTREAM MATCH LOG COMMAND...`: relays every connection to UPSTREAM,
    /// reading each request; before relaying the first GET whose request line contains MATCH, runs
    /// COMMAND (which overwrites the object) and logs it.
    static let proxy = #"""
        import asyncio, subprocess, sys
        listen, upstream, match, log, command = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5:]
        fired = False
        async def requests(reader, writer):
            global fired
            try:
                while True:
                    head = await reader.readuntil(b"\r\n\r\n")
                    line = head.split(b"\r\n", 1)[0].decode("latin-1")
                    length = 0
                    for h in head.split(b"\r\n")[1:]:
                        k, _, v = h.partition(b":")
                        if k.strip().lower() == b"content-length": length = int(v)
                    body = await reader.readexactly(length) if length else b""
                    if not fired and line.startswith("GET ") and match in line:
                        fired = True
                        subprocess.run(command, check=True)
                        with open(log, "a") as f: f.write("overwritten before " + line + "\n")
                    writer.write(head + body)
                    await writer.drain()
            except Exception:
                pass
            finally:
                writer.close()
        async def pipe(reader, writer):
            try:
                while True:
                    data = await reader.read(65536)
                    if not data: break
                    writer.write(data)
                    await writer.drain()
            except Exception:
                pass
            finally:
                writer.close()
        async def handle(reader, writer):
            ur, uw = await asyncio.open_connection("127.0.0.1", upstream)
            await asyncio.gather(requests(reader, uw), pipe(ur, writer))
        async def main():
            server = await asyncio.start_server(handle, "127.0.0.1", listen)
            async with server: await server.serve_forever()
        asyncio.run(main())
        """#

    /// An object overwritten between the listing and its read (by a proxy that overwrites it just before
    /// relaying its GET): reported on one line naming the store and the object, counted in `--json`,
    /// exit code 1, and left out; the archive holds the others and verifies.
    func testAnObjectOverwrittenWhileArchivedIsReportedAndLeftOut() throws {
        let (s3, gcs, environment) = try servers()
        let python = try RequiredTool.path("python3", package: "python3")
        let aws = try RequiredTool.path("aws", package: "awscli")
        let curl = try RequiredTool.path("curl", package: "curl")
        let directory = try temporaryDirectory(self)
        let script = directory.appendingPathComponent("overwrite_proxy.py")
        try Self.proxy.write(to: script, atomically: true, encoding: .utf8)
        let folder = directory.appendingPathComponent("store").path
        let expected = try sampleStore(folder)
        let newer = directory.appendingPathComponent("newer").path
        try writeFile(newer, Array("a newer version".utf8))

        let s3Bucket = try s3.makeBucket(), gsBucket = try gcs.makeBucket()
        let cases: [(url: String, upstream: Int, match: String, command: [String])] = [
            (
                "s3://\(s3Bucket)/src", s3.s3Port, "/\(s3Bucket)/src/a-b HTTP",
                [
                    "/usr/bin/env", "-u", "AWS_CA_BUNDLE", "-u", "AWS_PROFILE", "AWS_ACCESS_KEY_ID=\(SeaweedServer.accessKey)",
                    "AWS_SECRET_ACCESS_KEY=\(SeaweedServer.secretKey)", "AWS_REGION=us-east-1", aws, "--endpoint-url", s3.endpoint,
                    "s3api", "put-object", "--bucket", s3Bucket, "--key", "src/a-b", "--body", newer,
                ]
            ),
            (
                "gs://\(gsBucket)/src", gcs.port, "/o/src%2Fa-b?alt=media",
                [
                    curl, "-sf", "-X", "POST", "--data-binary", "@" + newer,
                    "\(gcs.endpoint)/upload/storage/v1/b/\(gsBucket)/o?uploadType=media&name=src/a-b",
                ]
            ),
        ]
        for c in cases {
            try run(["copy", folder, c.url, "-q"], environment)
            let port = try freePort()
            let log = directory.appendingPathComponent("proxy-\(port).log")
            let proxy = try ServerProcess(
                python, [script.path, String(port), String(c.upstream), c.match, log.path] + c.command,
                logFile: directory.appendingPathComponent("proxy-\(port).out"))
            defer { proxy.stop() }
            try proxy.waitUntilListening(port: port)
            var through = environment
            through["STORAGE_EMULATOR_HOST"] = "127.0.0.1:\(port)"
            let output = directory.appendingPathComponent("\(c.url.prefix(2)).tar.zst").path
            let endpoint = c.url.hasPrefix("s3") ? ["--endpoint", "http://127.0.0.1:\(port)"] : []
            let r = try run(["archive", c.url, "-o", output, "--json"] + endpoint, through, expect: 1)
            XCTAssertTrue(
                ((try? String(contentsOf: log, encoding: .utf8)) ?? "").contains("overwritten before"),
                "the proxy overwrote nothing: \(proxy.log)")
            let changed = try XCTUnwrap(try json(r)["changed"] as? [[String: Any]], r.stdout)
            XCTAssertEqual(changed.count, 1, r.stdout)
            XCTAssertEqual(changed.first?["name"] as? String, "a-b")
            XCTAssertEqual(changed.first?["store"] as? String, c.url + "/")
            XCTAssertEqual(try json(r)["objects"] as? Int, expected.count - 1)
            let line = r.stderr.split(separator: "\n").first { $0.contains("changed while it was being archived") }
            XCTAssertNotNil(line, r.stderr)
            XCTAssertTrue(line?.hasPrefix("dumpkit: error: \(c.url)/: object \"a-b\"") ?? false, r.stderr)
            XCTAssertFalse(try bsdtarList(output).contains("a-b"))
            XCTAssertEqual(try bsdtarList(output).count, expected.count)
            try run(["verify", output, "-q"], environment)
        }
    }

    /// Wrong credentials, a missing bucket: exit code 2, one line with the store URL, the endpoint and
    /// the service's code; no archive.
    func testWrongCredentialsAndAMissingBucketAreOneLineWithTheStore() throws {
        let (s3, gcs, environment) = try servers()
        let directory = try temporaryDirectory(self)
        let output = directory.appendingPathComponent("x.tar.zst").path
        let bucket = try s3.makeBucket()
        var wrong = environment
        wrong["AWS_SECRET_ACCESS_KEY"] = "not-the-secret"
        let cases: [([String], [String: String], [String])] = [
            (["archive", "s3://\(bucket)/src", "-o", output], wrong, ["s3://\(bucket)/src/", s3.endpoint, "SignatureDoesNotMatch"]),
            (
                ["archive", "s3://no-such-bucket-dk/src", "-o", output], environment,
                ["s3://no-such-bucket-dk/src/", s3.endpoint, "NoSuchBucket"]
            ),
            (["archive", "gs://no-such-bucket-dk", "-o", output], environment, ["gs://no-such-bucket-dk/", gcs.endpoint, "HTTP 404"]),
            (
                ["backup", "--dump", output, "--bucket", "s3://\(bucket)", "-o", output + ".b.tar.zst"], wrong,
                ["s3://\(bucket)/", "SignatureDoesNotMatch"]
            ),
        ]
        try writeFile(output, Array("{}".utf8))
        for (arguments, env, needles) in cases {
            let r = try run(arguments, env, expect: 2)
            XCTAssertEqual(r.stderr.split(separator: "\n").count, 1, r.stderr)
            for needle in needles { XCTAssertTrue(r.stderr.contains(needle), "\(needle) in \(r.stderr)") }
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: output + ".b.tar.zst"))
    }

    /// A prefix with no object below it gives an archive of the manifest alone, as an empty folder does.
    func testAnEmptyPrefixGivesTheManifestAlone() throws {
        let (s3, gcs, environment) = try servers()
        let directory = try temporaryDirectory(self)
        for url in ["s3://\(try s3.makeBucket())/nothing", "gs://\(try gcs.makeBucket())"] {
            let output = directory.appendingPathComponent("\(url.prefix(2)).tar.zst").path
            let r = try run(["archive", url, "-o", output], environment)
            XCTAssertTrue(r.stderr.contains("0 objects"), r.stderr)
            XCTAssertEqual(try bsdtarList(output), [".dumpkit-manifest.json"])
            XCTAssertEqual(try manifest(output)["objectCount"] as? Int, 0)
        }
    }
}
