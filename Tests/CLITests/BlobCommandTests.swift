import Foundation
import TestSupport
import XCTest

#if canImport(Glibc)
    import Glibc
#endif

/// `dumpkit extract-blobs`, `inline-blobs` and `check-blobs` run as a user would, on a generated dump
/// of real JPEG, PNG and PDF files.
final class BlobCommandTests: XCTestCase {
    private func generate(_ size: String, seed: Int, to path: String) throws {
        let script = TestData.projectRoot.appendingPathComponent("Scripts/gen_dataset.py").path
        _ = try Shell.run("python3", [script, "images", "--size", size, "--seed", String(seed), "-o", path])
    }

    private func read(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }
    private func write(_ text: String, _ path: String) throws { try Data(text.utf8).write(to: URL(fileURLWithPath: path)) }

    /// Every file under `root` with its bytes, by relative path.
    private func tree(_ root: String) throws -> [String: Data] {
        var out: [String: Data] = [:]
        let e = FileManager.default.enumerator(atPath: root)
        while let p = e?.nextObject() as? String {
            var isDir: ObjCBool = false
            if FileManager.default.fileExists(atPath: root + "/" + p, isDirectory: &isDir), !isDir.boolValue {
                out[p] = try read(root + "/" + p)
            }
        }
        return out
    }

    func testRoundTripWithRealFilesThatFileRecognises() throws {
        let dir = try TemporaryDirectory()
        let input = dir.path("in.json")
        try generate("2MB", seed: 1, to: input)
        let r = try CLI.run(["extract-blobs", input, "-o", dir.path("out.json"), "--blobs", dir.path("blobs")])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("extracted 40 strings"), r.stderr)
        let out = String(decoding: try read(dir.path("out.json")), as: UTF8.self)
        XCTAssertFalse(out.contains("base64,"), "no data URI left")
        XCTAssertLessThan(out.utf8.count, 500_000)

        // Each object is a real file of the type its metadata and its extension say.
        let objects = try tree(dir.path("blobs")).keys.filter { !$0.hasPrefix(".dumpkit/") }.sorted()
        XCTAssertEqual(objects.count, 40)
        let types = try Shell.run("file", ["-b", "--mime-type"] + objects.map { dir.path("blobs/" + $0) }).split(separator: "\n").map(
            String.init)
        XCTAssertEqual(types.count, objects.count)
        // Metadata files are named by the SHA-256 of the object name; each says which object it describes.
        var metadata: [String: [String: Any]] = [:]
        for (path, bytes) in try tree(dir.path("blobs")) where path.hasPrefix(".dumpkit/meta/") {
            let meta = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
            metadata[try XCTUnwrap(meta["name"] as? String)] = meta
        }
        XCTAssertEqual(metadata.keys.sorted(), objects)
        var seen = Set<String>()
        for (name, type) in zip(objects, types) {
            let meta = metadata[name]
            XCTAssertEqual(meta?["contentType"] as? String, type, name)
            let ext = ["image/jpeg": "jpg", "image/png": "png", "application/pdf": "pdf"][type]
            XCTAssertEqual(ext.map { name.hasSuffix("." + $0) }, true, "\(name): \(type)")
            seen.insert(type)
        }
        XCTAssertEqual(seen, ["image/jpeg", "image/png", "application/pdf"])

        let back = try CLI.run(["inline-blobs", dir.path("out.json"), "-o", dir.path("back.json"), "--blobs", dir.path("blobs")])
        XCTAssertEqual(back.status, 0, back.stderr)
        XCTAssertEqual(try read(dir.path("back.json")), try read(input) + Data("\n".utf8))

        let check = try CLI.run(["check-blobs", dir.path("out.json"), "--blobs", dir.path("blobs")])
        XCTAssertEqual(check.status, 0, check.stdout + check.stderr)
        XCTAssertTrue(check.stderr.contains("checked 40 references: 0 errors, 0 warnings"), check.stderr)

        // A lost object and a stray one are found, exit 1.
        try FileManager.default.removeItem(atPath: dir.path("blobs/" + objects[0]))
        try write("stray", dir.path("blobs/stray.txt"))
        let bad = try CLI.run(["check-blobs", dir.path("out.json"), "--blobs", dir.path("blobs")])
        XCTAssertEqual(bad.status, 1)
        let lines = bad.stdout.split(separator: "\n")
        XCTAssertEqual(lines.count, 2, bad.stdout)
        XCTAssertTrue(
            lines[0].hasPrefix("error: /\(objects[0].dropLast(4)): object \"\(objects[0])\" is not in the store [blobs:missing]"),
            String(lines[0]))
        XCTAssertEqual(lines[1], #"warning: -: object "stray.txt" is not referenced by the dump [blobs:orphan]"#)
        XCTAssertTrue(bad.stderr.contains("checked 40 references: 1 error, 1 warning\n"), bad.stderr)
    }

    func testTheSamplesInlineImagesComeOutAsFilesThatFileRecognises() throws {
        let expected = [
            "todolist": ["v1/todolist/-KcXs-75-lLuvAVF4ygL/image1.jpg", "v1/todolist/-Kk0YSe56qY-GxUnaVY9/image2.png"],
            "wedding": [
                "-KlgLuHWAyqRHpKIyNrC", "-KlgRhG1Jl7THtDmiBGu", "-KlgV0mLB9_YPhPb6C56", "-KlgY3oDLaYYFpf2v9hp",
                "-Klg_wFjDhhl58I-LU6L", "-KlghgJVIq2b6HU44-VQ", "-KlgixbLPjGOAoaqQnVJ",
            ].map { "articles/\($0)/photo.jpg" },
        ]
        for (app, names) in expected {
            let dir = try TemporaryDirectory()
            let input = TestData.projectRoot.appendingPathComponent("samples/\(app)/v1.json").path
            let r = try CLI.run(["extract-blobs", input, "-o", dir.path("out.json"), "--blobs", dir.path("blobs")])
            XCTAssertEqual(r.status, 0, r.stderr)
            let objects = try tree(dir.path("blobs")).keys.filter { !$0.hasPrefix(".dumpkit/") }.sorted()
            XCTAssertEqual(objects, names.sorted(), app)
            let types = try Shell.run("file", ["-b", "--mime-type"] + objects.map { dir.path("blobs/" + $0) })
                .split(separator: "\n").map(String.init)
            let byExtension = objects.map { $0.hasSuffix(".png") ? "image/png" : "image/jpeg" }
            XCTAssertEqual(types, byExtension, app)
        }
    }

    func testSaladaReferencesWithDownloadURLsRoundTrip() throws {
        let dir = try TemporaryDirectory()
        let input = dir.path("in.json")
        try generate("1MB", seed: 2, to: input)
        let args = ["--blobs", dir.path("blobs"), "--ref-style", "salada"]
        let r = try CLI.run(
            ["extract-blobs", input, "-o", dir.path("out.json"), "--bucket", "my-app.appspot.com", "--content-addressed"] + args)
        XCTAssertEqual(r.status, 0, r.stderr)
        let out = String(decoding: try read(dir.path("out.json")), as: UTF8.self)
        XCTAssertTrue(
            out.contains(#""url":"https://firebasestorage.googleapis.com/v0/b/my-app.appspot.com/o/sha256%2F"#), String(out.prefix(2000)))
        XCTAssertTrue(try tree(dir.path("blobs")).keys.filter { !$0.hasPrefix(".dumpkit/") }.allSatisfy { $0.hasPrefix("sha256/") })
        XCTAssertEqual(try CLI.run(["check-blobs", dir.path("out.json")] + args).status, 0)
        let back = try CLI.run(["inline-blobs", dir.path("out.json"), "-o", dir.path("back.json")] + args)
        XCTAssertEqual(back.status, 0, back.stderr)
        XCTAssertEqual(try read(dir.path("back.json")), try read(input) + Data("\n".utf8))
    }

    func testDryRunReportsAndWritesNothing() throws {
        let dir = try TemporaryDirectory()
        let input = dir.path("in.json")
        try generate("1MB", seed: 1, to: input)
        let r = try CLI.run([
            "extract-blobs", input, "-o", dir.path("out.json"), "--blobs", dir.path("blobs"), "--dry-run", "--report",
            dir.path("report.json"),
        ])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.hasPrefix("dry run, nothing written: extracted "), r.stdout)
        XCTAssertTrue(r.stdout.contains("types: "), r.stdout)
        XCTAssertTrue(r.stdout.contains("duplicates: "), r.stdout)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path(".")).sorted(), ["in.json", "report.json"])
        let report = try XCTUnwrap(try JSONSerialization.jsonObject(with: try read(dir.path("report.json"))) as? [String: Any])
        XCTAssertEqual(Set(report.keys), ["extracted", "types", "objects", "duplicates", "skipped", "mimeMismatches"])
        let types = try XCTUnwrap(report["types"] as? [String: [String: Int]])
        XCTAssertGreaterThan(types["image/jpeg"]?["count"] ?? 0, 0)
    }

    func testBadStringsAreReportedAndLeftExactlyAsTheyWere() throws {
        let dir = try TemporaryDirectory()
        let jpeg = Data([0xFF, 0xD8, 0xFF, 0xE0] + (0..<3000).map { UInt8(truncatingIfNeeded: $0 &* 13) }).base64EncodedString()
        let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + (0..<2000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
            .base64EncodedString()
        let truncated = String(png.dropLast(7))
        let unknown = Data((0..<2000).map { UInt8(truncatingIfNeeded: $0 &* 3) }).base64EncodedString()
        let dump =
            #"{"a":{"cut":"\#(truncated)","wrong":"data:image/png;base64,\#(jpeg)","other":"\#(unknown)","uri":"data:image/png;base64,\#(String(png.dropLast(3)))"}}"#
        let input = dir.path("in.json")
        try write(dump, input)
        let r = try CLI.run([
            "extract-blobs", input, "-o", dir.path("out.json"), "--blobs", dir.path("blobs"), "--report", dir.path("r.json"),
        ])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("left alone (invalidBase64): 2, e.g. /a/cut"), r.stderr)
        XCTAssertTrue(r.stderr.contains("left alone (unknownType): 1, e.g. /a/other"), r.stderr)
        XCTAssertTrue(r.stderr.contains("declared type contradicted by the bytes: 1, e.g. /a/wrong (image/png is image/jpeg)"), r.stderr)
        let out = String(decoding: try read(dir.path("out.json")), as: UTF8.self)
        XCTAssertTrue(out.contains(#""cut":"\#(truncated)""#))
        XCTAssertTrue(out.contains(#""other":"\#(unknown)""#))
        XCTAssertTrue(out.contains(#""wrong":{"path":"a/wrong.jpg","contentType":"image/jpeg""#), out)
        XCTAssertTrue(out.contains(#""header":"data:image/png;base64,"}"#), out)
        XCTAssertEqual(try read(input), Data(dump.utf8))
        let report = try XCTUnwrap(try JSONSerialization.jsonObject(with: try read(dir.path("r.json"))) as? [String: Any])
        let skipped = try XCTUnwrap(report["skipped"] as? [String: [String: Any]])
        XCTAssertEqual(skipped["invalidBase64"]?["pointers"] as? [String], ["/a/cut", "/a/uri"])
        // And back: the wrong header too.
        XCTAssertEqual(
            try CLI.run(["inline-blobs", dir.path("out.json"), "-o", dir.path("back.json"), "--blobs", dir.path("blobs")]).status, 0)
        XCTAssertEqual(try read(dir.path("back.json")), Data((dump + "\n").utf8))
    }

    func testUsageErrorsExitTwoAndWriteNothing() throws {
        let dir = try TemporaryDirectory()
        let input = dir.path("in.json")
        try write(#"{"a":1}"#, input)
        let cases: [([String], String)] = [
            (["--ref-style", "salada"], "needs --bucket"),
            (["--ref-style", "url"], "needs --bucket"),
            (["--content-addressed", "--name", "{path}.{ext}"], "do not go together"),
            (["--name", "{id}.{ext}"], "no --match pattern captures it"),
            (["--name", "{path"], "'{' without '}'"),
            (["--jobs", "0"], "--jobs must be at least 1"),
            (["--match", "no-slash"], "invalid path pattern"),
        ]
        for (extra, message) in cases {
            let r = try CLI.run(["extract-blobs", input, "-o", dir.path("out.json"), "--blobs", dir.path("blobs")] + extra)
            XCTAssertEqual(r.status, 2, "\(extra)")
            XCTAssertTrue(r.stderr.hasPrefix("dumpkit: error: ") && r.stderr.contains(message), "\(extra): \(r.stderr)")
        }
        let same = try CLI.run(["extract-blobs", input, "-o", input, "--blobs", dir.path("blobs")])
        XCTAssertEqual(same.status, 2)
        XCTAssertTrue(same.stderr.contains("is the input file"), same.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path(".")), ["in.json"])
        let missing = try CLI.run(["inline-blobs", input, "-o", dir.path("out.json"), "--blobs", dir.path("none")])
        XCTAssertEqual(missing.status, 2)
        XCTAssertTrue(missing.stderr.contains("blob store \(dir.path("none")): cannot open"), missing.stderr)
    }

    func testReadOnlyStoreFailsClearlyWithoutOutput() throws {
        let dir = try TemporaryDirectory()
        let input = dir.path("in.json")
        try generate("1MB", seed: 1, to: input)
        let store = dir.path("ro")
        try FileManager.default.createDirectory(atPath: store, withIntermediateDirectories: true)
        chmod(dir.url.path, 0o777)
        chmod(store, 0o555)
        // root ignores permissions: run as nobody then.
        var command = [CLI.binary.path, "extract-blobs", input, "-o", dir.path("out.json"), "--blobs", store]
        if getuid() == 0 { command = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] + command }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: command[0])
        p.arguments = Array(command.dropFirst())
        let err = Pipe()
        p.standardError = err
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        let message = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 2, message)
        XCTAssertEqual(message, "dumpkit: error: blob store \(store): cannot create .dumpkit: Permission denied\n")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path(".")).sorted(), ["in.json", "ro"])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: store), [])
    }

    /// A dump of `count` records, each with a PNG data URI whose bytes depend on `seed`.
    private func dumpWithImages(_ count: Int, seed: UInt8) -> String {
        let records = (0..<count).map { i -> String in
            let bytes: [UInt8] =
                [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
                + (0..<1500).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ i &* 7 &+ Int(seed) &* 101) }
            return "\"-K\(i)\": {\"title\": \"t\(i)\", \"image\": \"data:image/png;base64,\(Data(bytes).base64EncodedString())\"}"
        }
        return "{\"v1\": {\"todolist\": {" + records.joined(separator: ", ") + "}}}"
    }

    /// A second dump with the same object names and other images: refused (exit 1, the names listed,
    /// no output, the store as it was) unless `--replace`, which says what it replaced.
    func testOtherContentUnderExistingNamesIsRefusedUnlessReplace() throws {
        let dir = try TemporaryDirectory()
        try write(dumpWithImages(3, seed: 1), dir.path("a.json"))
        try write(dumpWithImages(3, seed: 2), dir.path("b.json"))
        let store = dir.path("blobs")
        let first = try CLI.run(["extract-blobs", dir.path("a.json"), "-o", dir.path("a.out.json"), "--blobs", store])
        XCTAssertEqual(first.status, 0, first.stderr)
        let before = try tree(store)

        let refused = try CLI.run([
            "extract-blobs", dir.path("b.json"), "-o", dir.path("b.out.json"), "--blobs", store,
            "--report", dir.path("b.report.json"),
        ])
        XCTAssertEqual(refused.status, 1, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("3 objects already exist in the directory \(store) with other content"), refused.stderr)
        for i in 0..<3 { XCTAssertTrue(refused.stderr.contains("\"v1/todolist/-K\(i)/image.png\""), refused.stderr) }
        XCTAssertTrue(refused.stderr.contains("--replace"), refused.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.path("b.out.json")))
        XCTAssertEqual(try tree(store), before)
        let conflicts = try JSONSerialization.jsonObject(with: try read(dir.path("b.report.json"))) as! [String: Any]
        let objects = conflicts["objects"] as! [String: Any]
        XCTAssertEqual((objects["conflicts"] as! [String: Any])["names"] as? [String], (0..<3).map { "v1/todolist/-K\($0)/image.png" })
        let clean = try CLI.run(["check-blobs", dir.path("a.out.json"), "--blobs", store])
        XCTAssertEqual(clean.status, 0, clean.stdout + clean.stderr)

        let replaced = try CLI.run([
            "extract-blobs", dir.path("b.json"), "-o", dir.path("b.out.json"), "--blobs", store, "--replace",
            "--report", dir.path("b.report.json"),
        ])
        XCTAssertEqual(replaced.status, 0, replaced.stderr)
        XCTAssertTrue(
            replaced.stderr.contains("replaced (other bytes were there, --replace): 3: \"v1/todolist/-K0/image.png\""), replaced.stderr)
        let report = try JSONSerialization.jsonObject(with: try read(dir.path("b.report.json"))) as! [String: Any]
        let replacedTally = (report["objects"] as! [String: Any])["replaced"] as! [String: Any]
        XCTAssertEqual(replacedTally["count"] as? Int, 3)
        XCTAssertEqual(replacedTally["names"] as? [String], (0..<3).map { "v1/todolist/-K\($0)/image.png" })
        let check = try CLI.run(["check-blobs", dir.path("b.out.json"), "--blobs", store])
        XCTAssertEqual(check.status, 0, check.stdout + check.stderr)
        // The same dump again: the bytes are there, nothing is written or replaced.
        let again = try CLI.run(["extract-blobs", dir.path("b.json"), "-o", dir.path("b.out.json"), "--blobs", store])
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertTrue(again.stderr.contains("store: 0 written, 3 already there"), again.stderr)
    }

    /// Two processes extract dumps with the same names and other images into one store at once,
    /// round after round: a run that succeeds has an output check-blobs finds nothing wrong with, a
    /// run that fails says which objects were in its way, and every object keeps its own metadata.
    func testConcurrentRunsWithTheSameNamesNeverLeaveAnOutputOrObjectThatLies() throws {
        let dir = try TemporaryDirectory()
        for seed in [1, 2] { try write(dumpWithImages(40, seed: UInt8(seed)), dir.path("in\(seed).json")) }
        let names = (0..<40).map { "v1/todolist/-K\($0)/image.png" }
        try write(
            "{" + names.enumerated().map { "\"k\($0.offset)\": \"\($0.element)\"" }.joined(separator: ",") + "}", dir.path("names.json"))
        var outcomes: [Int32] = []
        for round in 0..<4 {
            let store = dir.path("blobs\(round)")
            let runs = [1, 2].map { seed -> (Process, Pipe) in
                let p = Process()
                p.executableURL = CLI.binary
                p.arguments = [
                    "extract-blobs", dir.path("in\(seed).json"), "-o", dir.path("out\(round)-\(seed).json"), "--blobs", store, "--jobs",
                    "2", "-q",
                ]
                let errors = Pipe()
                p.standardError = errors
                p.standardOutput = FileHandle.nullDevice
                return (p, errors)
            }
            for (p, _) in runs { try p.run() }
            for (seed, (p, errors)) in zip([1, 2], runs) {
                let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                p.waitUntilExit()
                outcomes.append(p.terminationStatus)
                let output = dir.path("out\(round)-\(seed).json")
                if p.terminationStatus == 0 {
                    let check = try CLI.run(["check-blobs", output, "--blobs", store])
                    XCTAssertEqual(check.status, 0, "round \(round), dump \(seed): " + check.stdout + check.stderr)
                } else {
                    XCTAssertEqual(p.terminationStatus, 1, message)
                    // "1 object already exists" or "N objects already exist", as the race falls.
                    XCTAssertTrue(message.contains(" in the directory \(store) with other content"), message)
                    XCTAssertFalse(FileManager.default.fileExists(atPath: output))
                }
            }
            XCTAssertLessThanOrEqual(outcomes.suffix(2).filter { $0 == 0 }.count, 1, "two runs wrote the same names")
            let objects = try CLI.run(["check-blobs", dir.path("names.json"), "--blobs", store, "--ref-style", "path"])
            XCTAssertEqual(objects.status, 0, "round \(round): " + objects.stdout + objects.stderr)
        }
        print("exit codes of the concurrent runs: \(outcomes)")
    }

    /// A key of 300 bytes makes a name segment no file system takes: the dry run already says so, and
    /// a real run stops on it as a data error before writing any part of that object.
    func testANameSegmentLongerThanAFileNameIsRefusedByTheNameRules() throws {
        let dir = try TemporaryDirectory()
        let long = String(repeating: "k", count: 300)
        let image =
            "data:image/png;base64,"
            + Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + [UInt8](repeating: 7, count: 1500)).base64EncodedString()
        try write("{\"v1\": {\"\(long)\": {\"image\": \"\(image)\"}}}", dir.path("in.json"))
        let dry = try CLI.run(["extract-blobs", dir.path("in.json"), "--blobs", dir.path("blobs"), "--dry-run"])
        XCTAssertEqual(dry.status, 1, dry.stdout + dry.stderr)
        XCTAssertTrue(dry.stderr.contains("has a segment of 300 bytes (a file name holds at most 255)"), dry.stderr)
        let run = try CLI.run(["extract-blobs", dir.path("in.json"), "-o", dir.path("out.json"), "--blobs", dir.path("blobs")])
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertTrue(run.stderr.contains("has a segment of 300 bytes"), run.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.path("out.json")))
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.path("blobs")), "the store this failed run created is left")
    }

    /// Names made from a record's keys are checked for the whole record (its batch) before any of
    /// its objects is written: the record's first image, whose name is fine, is not stored when its
    /// second image's name has a 300-byte segment (it was, before the second name was made).
    func testARecordWithOneBadNameHasNoneOfItsObjectsWritten() throws {
        let dir = try TemporaryDirectory()
        let long = String(repeating: "k", count: 300)
        func image(_ fill: UInt8) -> String {
            "data:image/png;base64,"
                + Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + [UInt8](repeating: fill, count: 1500)).base64EncodedString()
        }
        try write("{\"v1\": {\"r\": {\"a\": \"\(image(1))\", \"\(long)\": \"\(image(2))\"}}}", dir.path("in.json"))
        let run = try CLI.run([
            "extract-blobs", dir.path("in.json"), "-o", dir.path("out.json"), "--blobs", dir.path("blobs"), "--jobs", "1",
        ])
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertTrue(run.stderr.contains("has a segment of 304 bytes"), run.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.path("out.json")))
        // Nothing was stored, so the store this run created is removed again.
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.path("blobs")))
        // Into a store that exists, the record's first image is not there either.
        try FileManager.default.createDirectory(atPath: dir.path("blobs/other"), withIntermediateDirectories: true)
        XCTAssertEqual(
            try CLI.run(["extract-blobs", dir.path("in.json"), "-o", dir.path("out.json"), "--blobs", dir.path("blobs")]).status, 1)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path("blobs")).filter { $0 != ".dumpkit" }, ["other"])
    }

    /// A name restore would refuse (`..` between backslashes) is refused when extracting too, so a
    /// store the tool wrote can always be archived and restored by the tool.
    func testNamesRestoreWouldRefuseAreRefusedWhenExtracting() throws {
        let dir = try TemporaryDirectory()
        try write(dumpWithImages(1, seed: 1), dir.path("in.json"))
        let run = try CLI.run([
            "extract-blobs", dir.path("in.json"), "-o", dir.path("out.json"), "--blobs", dir.path("blobs"),
            "--name", #"..\..\{field}.{ext}"#,
        ])
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertTrue(run.stderr.contains("has a '..' between backslashes, which restore refuses"), run.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.path("out.json")))
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.path("blobs")), "the store this failed run created is left")
    }

    /// A download URL written by someone else whose name is no object name (`..%2F`) is left as it
    /// is and counted, like any URL extract-blobs did not make; the others are inlined.
    func testURLsNamingNoValidObjectAreLeftAloneAndCounted() throws {
        let dir = try TemporaryDirectory()
        let foreign = "https://firebasestorage.googleapis.com/v0/b/my-app.appspot.com/o/..%2F..%2Fetc%2Fpasswd?alt=media&token=x"
        try write(
            String(dumpWithImages(2, seed: 3).dropLast()) + ", \"users\": {\"u1\": {\"avatar\": \"\(foreign)\"}}}", dir.path("in.json"))
        let args = ["--blobs", dir.path("blobs"), "--ref-style", "url"]
        let extracted = try CLI.run(
            ["extract-blobs", dir.path("in.json"), "-o", dir.path("out.json"), "--bucket", "my-app.appspot.com"] + args)
        XCTAssertEqual(extracted.status, 0, extracted.stderr)
        let back = try CLI.run(["inline-blobs", dir.path("out.json"), "-o", dir.path("back.json")] + args)
        XCTAssertEqual(back.status, 0, back.stderr)
        XCTAssertTrue(back.stderr.contains("inlined 2 references"), back.stderr)
        XCTAssertTrue(back.stderr.contains("left 1 reference that extract-blobs did not make"), back.stderr)
        let restored = String(decoding: try read(dir.path("back.json")), as: UTF8.self)
        XCTAssertTrue(restored.contains(foreign), restored)
        XCTAssertTrue(restored.contains("data:image/png;base64,"), restored)
    }

    /// `kill -9` at random moments, then a run to the end: the same output and store as a run that
    /// was never interrupted, and no temporary file left in the store.
    func testRunsKilledAtAnyMomentThenRerunGiveTheSameResult() throws {
        let dir = try TemporaryDirectory()
        let input = dir.path("in.json")
        try generate("6MB", seed: 3, to: input)
        for sub in ["ref", "run"] { try FileManager.default.createDirectory(atPath: dir.path(sub), withIntermediateDirectories: true) }
        func arguments(_ sub: String) -> [String] {
            ["extract-blobs", input, "-o", dir.path("\(sub)/out.json"), "--blobs", dir.path("\(sub)/blobs"), "--jobs", "2", "-q"]
        }
        let start = Date()
        let reference = try CLI.run(arguments("ref"))
        let full = Date().timeIntervalSince(start)
        XCTAssertEqual(reference.status, 0, reference.stderr)

        var rng = SystemRandomNumberGenerator()
        var log: [String] = []
        var killedMidway = 0
        for _ in 0..<8 {
            let p = Process()
            p.executableURL = CLI.binary
            p.arguments = arguments("run")
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            let delay = Double.random(in: 0.0...(full * 0.9), using: &rng)
            try p.run()
            usleep(useconds_t(delay * 1_000_000))
            kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
            let killed = p.terminationReason == .uncaughtSignal
            if killed { killedMidway += 1 }
            log.append(String(format: "%.3fs%@", delay, killed ? " killed" : " finished"))
            // Whatever is in place is whole: the same bytes as in the uninterrupted store.
            let want = try tree(dir.path("ref/blobs"))
            for (name, bytes) in try tree(dir.path("run/blobs")) where !name.hasPrefix(".dumpkit/tmp/") {
                XCTAssertEqual(bytes, want[name], "\(name) after a kill at \(log.last!)")
            }
        }
        let leftovers = try tree(dir.path("run/blobs")).keys.filter { $0.hasPrefix(".dumpkit/tmp/") }.count
        XCTAssertGreaterThan(killedMidway, 0, "no run was interrupted: \(log)")

        let last = try CLI.run(Array(arguments("run").dropLast()))
        XCTAssertEqual(last.status, 0, last.stderr)
        if leftovers > 0 {
            XCTAssertTrue(
                last.stderr.contains(
                    "removed \(leftovers) temporary file\(leftovers == 1 ? "" : "s") left in the store by an interrupted run"),
                last.stderr)
        }
        XCTAssertEqual(try read(dir.path("run/out.json")), try read(dir.path("ref/out.json")), "kills at \(log)")
        let got = try tree(dir.path("run/blobs")), want = try tree(dir.path("ref/blobs"))
        XCTAssertEqual(got.keys.sorted(), want.keys.sorted(), "kills at \(log)")
        XCTAssertEqual(got.keys.filter { got[$0] != want[$0] }.sorted(), [], "objects with other bytes; kills at \(log)")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path("run/blobs/.dumpkit/tmp")), [])
        print("interrupted runs: \(log); \(leftovers) temporary files left before the last run")
    }

    /// A run that fails before writing into a store it created leaves no store behind; a store
    /// that was there keeps what it had.
    func testAFailedRunLeavesNoStoreItCreated() throws {
        let dir = try TemporaryDirectory()
        let empty = dir.path("empty.json")
        try Data().write(to: URL(fileURLWithPath: empty))
        var r = try CLI.run(["extract-blobs", empty, "-o", dir.path("out.json"), "--blobs", dir.path("new/store")])
        XCTAssertEqual(r.status, 2, r.stderr)
        XCTAssertTrue(r.stderr.contains("empty input"), r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.path("new/store")))
        // A folder the user made stays, without the control folder.
        try FileManager.default.createDirectory(atPath: dir.path("made"), withIntermediateDirectories: true)
        r = try CLI.run(["extract-blobs", empty, "-o", dir.path("out.json"), "--blobs", dir.path("made")])
        XCTAssertEqual(r.status, 2, r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.path("made/.dumpkit")))
        XCTAssertTrue(FileManager.default.fileExists(atPath: dir.path("made")))
        // A store in use keeps its objects and metadata.
        let store = dir.path("store")
        r = try CLI.run([
            "extract-blobs", TestData.projectRoot.appendingPathComponent("samples/todolist/v1.json").path, "-o", dir.path("clean.json"),
            "--blobs", store, "-q",
        ])
        XCTAssertEqual(r.status, 0, r.stderr)
        let before = filesBelow(store)
        XCTAssertEqual(try CLI.run(["extract-blobs", empty, "-o", dir.path("out.json"), "--blobs", store]).status, 2)
        XCTAssertEqual(filesBelow(store), before)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.path("out.json")))
        // migrate's extract-blobs steps too.
        let plans = ["schemas/todolist/plan.yaml", "schemas/todolist/images.yaml"].flatMap {
            ["--plan", TestData.projectRoot.appendingPathComponent($0).path]
        }
        r = try CLI.run(["migrate", empty, "-o", dir.path("v2.json"), "--blobs", dir.path("bucket")] + plans)
        XCTAssertEqual(r.status, 2, r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.path("bucket")))
    }
}
