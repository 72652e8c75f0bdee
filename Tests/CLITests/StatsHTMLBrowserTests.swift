import Foundation
import TestSupport
import XCTest

/// `dumpkit stats --html` loaded in a real browser (headless Chromium): the page runs without
/// console messages and its DOM has the treemap, the tables and the suggested record patterns.
final class StatsHTMLBrowserTests: XCTestCase {
    func testTheReportLoadsInChromiumWithItsStructure() throws {
        _ = try RequiredTool.path("chromium", package: "chromium")
        let dir = try TemporaryDirectory()
        let report = dir.path("report.html")
        let sample = TestData.projectRoot.appendingPathComponent("samples/todolist/v1.json").path
        let r = try CLI.run(["stats", sample, "--html", report])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("record patterns: /v1/todolist/{id}"), "the text still goes to standard output")

        // --dump-dom prints the DOM after the page's script ran; the log goes to a file (a pipe could fill).
        let log = dir.path("chromium.log")
        let command = """
            timeout 120 chromium --headless --no-sandbox --disable-gpu --enable-logging=stderr --v=0 \
            --user-data-dir='\(dir.path("profile"))' --dump-dom 'file://\(report)' 2>'\(log)'
            """
        let dom = try Shell.run("bash", ["-c", command])
        let messages = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").filter { $0.contains(":CONSOLE") }
        XCTAssertEqual(messages, [], "console messages")
        XCTAssertTrue(dom.contains("<body data-ready=\"true\">"), "the script ran to its end")

        let structure = try JSONSerialization.jsonObject(with: Data(try dumpkitJSON(sample).utf8)) as! [String: Any]
        let patterns = structure["patterns"] as! [[String: Any]]
        // The treemap: a rectangle per pattern that is large enough to see, and the images in red.
        let rectangles = matches(#"<rect class="tm" [^>]*data-pattern="([^"]*)""#, in: dom)
        XCTAssertGreaterThanOrEqual(rectangles.count, 15, "\(rectangles)")
        XCTAssertTrue(rectangles.contains("/v1/todolist/{id}/title"), "\(rectangles)")
        XCTAssertEqual(
            Set(matches(#"<rect class="tm files" [^>]*data-pattern="([^"]*)""#, in: dom)),
            ["/v1/todolist/{id}/image1", "/v1/todolist/{id}/image2"])
        // The tables: one row per pattern, per pattern holding files, per largest record.
        XCTAssertEqual(rows(of: "patterns", in: dom), patterns.count)
        XCTAssertEqual(rows(of: "files", in: dom), patterns.filter { $0["base64Files"] != nil }.count)
        XCTAssertEqual(rows(of: "largest", in: dom), 10)
        // The suggested record patterns, as stats --json gives them.
        let suggested = matches(#"<li><code>([^<]*)</code></li>"#, in: section("record-patterns", of: dom))
        XCTAssertEqual(suggested, structure["recordPatterns"] as! [String])
    }

    private func dumpkitJSON(_ dump: String) throws -> String {
        let r = try CLI.run(["stats", dump, "--json"])
        XCTAssertEqual(r.status, 0, r.stderr)
        return r.stdout
    }

    /// The first capture group of every match of `pattern`.
    private func matches(_ pattern: String, in text: String) -> [String] {
        let re = try! NSRegularExpression(pattern: pattern)
        return re.matches(in: text, range: NSRange(text.startIndex..., in: text)).map { String(text[Range($0.range(at: 1), in: text)!]) }
    }

    /// The element with `id` up to the end of its section.
    private func section(_ id: String, of dom: String) -> String {
        guard let start = dom.range(of: "id=\"\(id)\"") else { return "" }
        let rest = dom[start.upperBound...]
        return String(rest[..<(rest.range(of: "</section>")?.lowerBound ?? rest.endIndex)])
    }

    /// The body rows of the table with `id`.
    private func rows(of id: String, in dom: String) -> Int {
        let table = section(id, of: dom)
        guard let body = table.range(of: "<tbody>") else { return 0 }
        return table[body.upperBound...].components(separatedBy: "<tr>").count - 1
    }
}
