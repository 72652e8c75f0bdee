import Foundation
import XCTest

@testable import DumpKit

/// Magic-number files for tests: real headers, deterministic filler.
enum BlobFixtures {
    static func filler(_ n: Int, seed: UInt8 = 7) -> [UInt8] { (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) } }
    static func png(_ n: Int = 2000, seed: UInt8 = 1) -> [UInt8] {
        [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + filler(n - 8, seed: seed)
    }
    static func jpeg(_ n: Int = 3000, seed: UInt8 = 2) -> [UInt8] { [0xFF, 0xD8, 0xFF, 0xE0] + filler(n - 4, seed: seed) }
    static func pdf(_ n: Int = 1500, seed: UInt8 = 3) -> [UInt8] { Array("%PDF-1.4\n".utf8) + filler(n - 9, seed: seed) }
    static func base64(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }
    static func dataURI(_ type: String, _ bytes: [UInt8]) -> String { "data:\(type);base64," + base64(bytes) }
}

final class BlobDetectionTests: XCTestCase {
    private func decode(_ s: String) -> [UInt8]? { Array(s.utf8).withUnsafeBytes { StrictBase64.decode($0) } }

    func testStrictBase64DecodesWhatFoundationEncodes() {
        var rng = SystemRandomNumberGenerator()
        for n in 0..<80 {
            let bytes = (0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) }
            XCTAssertEqual(decode(Data(bytes).base64EncodedString()), bytes, "length \(n)")
        }
        let big = (0..<100_003).map { UInt8(truncatingIfNeeded: $0 &* 7919) }
        let text = Data(big).base64EncodedString()
        XCTAssertEqual(decode(text), big)
        XCTAssertTrue(Array(text.utf8).withUnsafeBytes { StrictBase64.isValid($0) })
    }

    func testStrictBase64RejectsEverythingNotCanonical() {
        let bad = [
            "QQ", "QQ=", "QUI", "QUJD\nREVG", "QUJD REVG", "QU=D", "Q===", "====", "QR==", "QUJ=" + "QUJD", "QU-_",
            "QUJDRA", "QUJD\u{00E9}A==", "QUI/Rg=", "QUJ\"",
        ]
        for s in bad {
            XCTAssertNil(decode(s), s)
            XCTAssertFalse(Array(s.utf8).withUnsafeBytes { StrictBase64.isValid($0) }, s)
        }
        XCTAssertEqual(decode("QQ=="), [0x41])
        XCTAssertEqual(decode("QUI="), [0x41, 0x42])
        XCTAssertEqual(decode("QUJD"), [0x41, 0x42, 0x43])
        XCTAssertEqual(decode("+/+/"), [0xFB, 0xFF, 0xBF])
        XCTAssertEqual(decode(""), [])
    }

    func testStrictBase64FindsABadCharacterAnywhereInALongText() {
        // 400 characters: six blocks of 64 (decoded with vector instructions where the CPU has them)
        // and a tail of 16, the last quad among them.
        let bytes = (0..<300).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 7) }
        let text = Array(Data(bytes).base64EncodedString().utf8)
        XCTAssertEqual(text.withUnsafeBytes { StrictBase64.decode($0) }, bytes)
        let badBytes: [UInt8] = [0x3D, 0x2D, 0x5F, 0x0A, 0x20, 0x00, 0x22, 0x2E, 0x7F, 0x80, 0xC3, 0xFF]
        for bad in badBytes {
            // `=` in the last two places would be padding, which may be canonical.
            for position in 0..<(bad == 0x3D ? text.count - 2 : text.count) {
                var t = text
                t[position] = bad
                XCTAssertNil(t.withUnsafeBytes { StrictBase64.decode($0) }, "byte \(bad) at \(position)")
                XCTAssertFalse(t.withUnsafeBytes { StrictBase64.isValid($0) }, "byte \(bad) at \(position)")
            }
        }
    }

    func testStrictBase64RefusesPaddingBeforeTheEndOfALongText() {
        // isValid checks long texts in slices of 12,288 characters: padding that ends the first slice
        // is still inside the text.
        for text in [
            String(repeating: "QUJD", count: 3071) + "QQ==" + String(repeating: "QUJD", count: 100),
            String(repeating: "QUJD", count: 3071) + "QUI=" + "QUJD",
        ] {
            XCTAssertFalse(Array(text.utf8).withUnsafeBytes { StrictBase64.isValid($0) })
            XCTAssertNil(decode(text))
        }
        let fine = String(repeating: "QUJD", count: 3072) + "QQ=="
        XCTAssertTrue(Array(fine.utf8).withUnsafeBytes { StrictBase64.isValid($0) })
    }

    private func scan(_ s: String, minimumBytes: Int = 1024) -> EmbeddedFile.Scan {
        Array(s.utf8).withUnsafeBytes { EmbeddedFile.scan($0, minimumBytes: minimumBytes) }
    }

    private func file(_ s: String, minimumBytes: Int = 1024) -> EmbeddedFile? {
        if case .file(let f) = scan(s, minimumBytes: minimumBytes) { return f }
        return nil
    }

    private func skip(_ s: String) -> EmbeddedFile.Skip? {
        if case .skipped(let r) = scan(s) { return r }
        return nil
    }

    private func isNone(_ s: String, minimumBytes: Int = 1024) -> Bool {
        if case .none = scan(s, minimumBytes: minimumBytes) { return true }
        return false
    }

    func testDataURIsOfAnyTypeAndBareBase64OfKnownTypes() throws {
        let png = BlobFixtures.png()
        let f = try XCTUnwrap(file(BlobFixtures.dataURI("image/png", png)))
        XCTAssertEqual(f.bytes, png)
        XCTAssertEqual(f.contentType, "image/png")
        XCTAssertEqual(f.fileExtension, "png")
        XCTAssertEqual(f.form, .dataURI(header: "data:image/png;base64,"))
        XCTAssertNil(f.mismatchedDeclaredType)

        let pdf = try XCTUnwrap(file(BlobFixtures.dataURI("application/pdf", BlobFixtures.pdf())))
        XCTAssertEqual(pdf.contentType, "application/pdf")
        XCTAssertEqual(pdf.fileExtension, "pdf")

        let bare = try XCTUnwrap(file(BlobFixtures.base64(BlobFixtures.jpeg())))
        XCTAssertEqual(bare.contentType, "image/jpeg")
        XCTAssertEqual(bare.fileExtension, "jpg")
        XCTAssertEqual(bare.form, .bare)

        // A type magic bytes cannot tell: the declared one is kept.
        let svg = try XCTUnwrap(
            file("data:image/svg+xml;charset=utf-8;base64," + BlobFixtures.base64(Array(String(repeating: "<svg/>", count: 300).utf8))))
        XCTAssertEqual(svg.contentType, "image/svg+xml")
        XCTAssertEqual(svg.fileExtension, "svg")
        XCTAssertEqual(svg.form, .dataURI(header: "data:image/svg+xml;charset=utf-8;base64,"))
        // Aliases are not mismatches.
        XCTAssertNil(try XCTUnwrap(file(BlobFixtures.dataURI("image/jpg", BlobFixtures.jpeg()))).mismatchedDeclaredType)
        XCTAssertNil(try XCTUnwrap(file(BlobFixtures.dataURI("IMAGE/JPEG", BlobFixtures.jpeg()))).mismatchedDeclaredType)
    }

    func testDataURIsOnlyLeavesBareBase64AloneWithoutCountingIt() {
        func scan(_ s: String) -> EmbeddedFile.Scan {
            Array(s.utf8).withUnsafeBytes { EmbeddedFile.scan($0, minimumBytes: 16, dataURIsOnly: true) }
        }
        guard case .none = scan(BlobFixtures.base64(BlobFixtures.jpeg())) else { return XCTFail("bare base64 of a JPEG was taken") }
        guard case .none = scan(String(repeating: "ab", count: 64)) else { return XCTFail("hex-like text was counted") }
        guard case .file(let f) = scan(BlobFixtures.dataURI("image/png", BlobFixtures.png())) else {
            return XCTFail("a data URI was missed")
        }
        XCTAssertEqual(f.contentType, "image/png")
        guard case .skipped(.invalidBase64) = scan("data:image/png;base64," + String(repeating: "A", count: 63) + "!") else {
            return XCTFail("a broken data URI is still reported")
        }
    }

    func testWrongDeclaredTypeIsReportedAndTheBytesWin() throws {
        let f = try XCTUnwrap(file(BlobFixtures.dataURI("image/png", BlobFixtures.jpeg())))
        XCTAssertEqual(f.contentType, "image/jpeg")
        XCTAssertEqual(f.fileExtension, "jpg")
        XCTAssertEqual(f.mismatchedDeclaredType, "image/png")
        XCTAssertEqual(f.form, .dataURI(header: "data:image/png;base64,"))
    }

    func testChunkedDecodingTakesExactlyWhatScanTakes() {
        // Whatever the pieces, the decoder takes a file exactly when `scan` does (the same file) and
        // gives every other string back as it was.
        let png = BlobFixtures.png(), jpeg = BlobFixtures.jpeg()
        let b64 = BlobFixtures.base64(jpeg)
        let pngText: String = BlobFixtures.base64(png)
        let cut1: String = String(b64.prefix(1000)) + "=" + String(b64.dropFirst(1001))
        let broken: String = String(b64.prefix(76)) + "\n" + String(b64.dropFirst(76))
        let longHeader: String = "data:" + String(repeating: "x", count: 300) + ";base64," + b64
        var strings: [String] = [BlobFixtures.dataURI("image/png", png), BlobFixtures.dataURI("image/gif", jpeg)]
        strings += [BlobFixtures.dataURI("image/svg+xml", BlobFixtures.filler(2000)), "data:image/png;name=a.png;base64," + pngText]
        strings += [
            "DATA:image/png;base64," + pngText, b64, BlobFixtures.base64(BlobFixtures.jpeg(3001)),
            BlobFixtures.base64(BlobFixtures.jpeg(3002)),
        ]
        strings += [String(b64.dropLast(1)), String(b64.dropLast(4)), String(b64.dropLast(5)), b64 + "=", b64 + "AAAA", cut1, broken]
        strings += [b64.replacingOccurrences(of: "/", with: "_"), String(b64.dropLast(2)) + "B="]
        strings += [BlobFixtures.base64(BlobFixtures.filler(3000)), BlobFixtures.dataURI("image/png", BlobFixtures.filler(3000))]
        strings += [
            BlobFixtures.dataURI("image/png", BlobFixtures.png(1023)), "data:image/png;base64,",
            "data:text/plain," + String(repeating: "a", count: 3000),
        ]
        strings += [longHeader, String(repeating: "買い物 milk ", count: 300), String(repeating: "A", count: 3000), "", "d", "dat", "data:"]
        // Short ones, for small minimums: bare base64 is sniffed from its first 24 characters.
        let small: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0] + BlobFixtures.filler(20)
        strings += [
            "/9j/", "/9j/4AAQ", BlobFixtures.base64(Array(small.prefix(18))), BlobFixtures.base64(Array(small.prefix(17))),
            BlobFixtures.base64(Array(small.prefix(21))), BlobFixtures.base64(small),
            BlobFixtures.dataURI("image/jpeg", Array(small.prefix(4))),
        ]
        for (dataURIsOnly, minimumBytes) in [(false, 1024), (true, 1024), (false, 3), (false, 16)] {
            let decoder = ChunkedFileDecoder(minimumBytes: minimumBytes, dataURIsOnly: dataURIsOnly)
            for string in strings {
                let utf8 = Array(string.utf8)
                let expected = utf8.withUnsafeBytes { EmbeddedFile.scan($0, minimumBytes: minimumBytes, dataURIsOnly: dataURIsOnly) }
                for size in [1, 2, 3, 5, 7, 64, 1000, max(1, utf8.count)] {
                    var start = 0
                    repeat {
                        let end = min(utf8.count, start + size)
                        utf8[start..<end].withUnsafeBytes { decoder.append($0) }
                        start = end
                    } while start < utf8.count
                    let label =
                        "\(string.prefix(40))... (\(utf8.count) bytes) in pieces of \(size), minimum \(minimumBytes), dataURIsOnly \(dataURIsOnly)"
                    switch (decoder.finish(), expected) {
                    case (.file(let got), .file(let want)): XCTAssertEqual(got, want, label)
                    case (.text(let text), .file): XCTFail("not taken: \(label), got \(text.count) bytes of text")
                    case (.file, _): XCTFail("taken, but scan leaves it: \(label)")
                    case (.text(let text), _): XCTAssertEqual(text, utf8, label)
                    }
                }
            }
        }
    }

    func testStringsThatOnlyLookLikeFilesAreLeftAlone() {
        let png = BlobFixtures.png()
        let b64 = BlobFixtures.base64(png)
        // Truncated, with a line break, URL-safe alphabet, unpadded: invalid base64.
        XCTAssertEqual(skip(String(b64.dropLast(5))), .invalidBase64)
        XCTAssertEqual(skip("data:image/png;base64," + String(b64.dropLast(5))), .invalidBase64)
        XCTAssertEqual(skip(String(b64.prefix(76)) + "\n" + String(b64.dropFirst(76))), .invalidBase64)
        let urlSafe = b64.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        XCTAssertNotEqual(urlSafe, b64)
        XCTAssertEqual(skip(urlSafe), .invalidBase64)
        // Valid base64 of no known type.
        XCTAssertEqual(skip(BlobFixtures.base64(BlobFixtures.filler(3000))), .unknownType)
        XCTAssertEqual(skip(BlobFixtures.dataURI("image/png", BlobFixtures.filler(3000))), .unknownType)
        // Not files at all.
        XCTAssertTrue(isNone(String(repeating: "買い物 milk ", count: 300)))
        XCTAssertTrue(isNone("data:text/plain," + String(repeating: "a", count: 3000)))
        XCTAssertTrue(isNone(String(repeating: "A", count: 3000) + "!"))
        // Too small.
        XCTAssertTrue(isNone(BlobFixtures.dataURI("image/png", BlobFixtures.png(1023))))
        XCTAssertNotNil(file(BlobFixtures.dataURI("image/png", BlobFixtures.png(1024))))
        XCTAssertNotNil(file(BlobFixtures.dataURI("image/png", BlobFixtures.png(100)), minimumBytes: 100))
        XCTAssertEqual(EmbeddedFile.minimumEncodedLength(1024), 1368)
    }
}
