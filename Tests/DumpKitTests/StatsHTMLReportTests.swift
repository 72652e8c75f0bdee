import DumpKit
import JSONStream
import XCTest

/// `StatsHTMLReport`: a self-contained page, bounded whatever the dump, with its keys escaped.
final class StatsHTMLReportTests: XCTestCase {
    private func page(_ json: String) throws -> String {
        StatsHTMLReport(stats: try DumpStats.gather(from: MemoryByteSource(json)), title: "dump.json").render()
    }

    private func count(_ needle: String, in text: String) -> Int { text.components(separatedBy: needle).count - 1 }

    func testThePageHasEverySectionAndLoadsNothing() throws {
        let html = try page(
            #"{"posts": {"-KVSAs1hM7KCYS43IOLg": {"title": "a", "photo": "data:image/png;base64,iVBORw0KGgo="}, "-KVSAs1hM7KCYS43IOLh": {"title": "b"}}, "bad.key": 1}"#
        )
        for id in ["treemap", "record-patterns", "files", "largest", "forbidden", "patterns"] {
            XCTAssertTrue(html.contains("id=\"\(id)\""), id)
        }
        XCTAssertTrue(html.contains("<li><code>/posts/{id}</code></li>"), html)
        XCTAssertTrue(html.contains("<li><code>/bad.key</code></li>"))
        XCTAssertTrue(html.contains("<rect class=\"tm files\""), "the image is a red rectangle")
        XCTAssertTrue(html.contains("data-pattern=\"/posts/{id}/title\""))
        // One table row per pattern.
        let table = try XCTUnwrap(html.components(separatedBy: "<table id=\"patterns\"").last)
        XCTAssertEqual(count("<tr>", in: table), 1 + 6)
        // Nothing is loaded from anywhere.
        for reference in ["src=", "href=", "url(", "@import", "<link", "http:", "https:"] {
            XCTAssertFalse(html.contains(reference), reference)
        }
        XCTAssertEqual(
            html,
            try page(
                #"{"posts": {"-KVSAs1hM7KCYS43IOLg": {"title": "a", "photo": "data:image/png;base64,iVBORw0KGgo="}, "-KVSAs1hM7KCYS43IOLh": {"title": "b"}}, "bad.key": 1}"#
            ), "the same statistics give the same page")
    }

    func testKeysAreEscaped() throws {
        let html = try page(#"{"<script>alert(1)</script>": {"a\u001Bb": "x", "q\"'&": 1}}"#)
        XCTAssertFalse(html.contains("<script>alert"))
        XCTAssertTrue(html.contains("&lt;script&gt;alert(1)&lt;~1script&gt;"), "escaped, and / as ~1 in the pointer")
        XCTAssertTrue(html.contains("a\\u001Bb"), "control characters are shown, not written raw")
        XCTAssertFalse(html.contains("\u{1B}"))
        XCTAssertTrue(html.contains("q&quot;&#39;&amp;"))
    }

    func testTheTableAndTheTreemapAreBounded() throws {
        // 40 objects with 60 different fields each: 2,441 patterns, none collapsing.
        let objects = (0..<40).map { i in "\"o\(i)\": {" + (0..<60).map { "\"f\(i)_\($0)\": \($0)" }.joined(separator: ",") + "}" }
        let json = "{" + objects.joined(separator: ",") + "}"
        let stats = try DumpStats.gather(from: MemoryByteSource(json))
        XCTAssertEqual(stats.patterns.count, 1 + 40 + 40 * 60)
        let html = StatsHTMLReport(stats: stats, title: "wide.json").render()
        let table = try XCTUnwrap(html.components(separatedBy: "<table id=\"patterns\"").last)
        XCTAssertEqual(count("<tr>", in: table), 1 + StatsHTMLReport.maxTableRows)
        XCTAssertTrue(html.contains("The \(StatsHTMLReport.maxTableRows) largest of \(stats.patterns.count) patterns"))
        XCTAssertLessThanOrEqual(count("<rect ", in: html), StatsHTMLReport.maxRectangles)
        XCTAssertGreaterThan(count("<rect ", in: html), 40, "every top-level object is drawn")
    }
}
