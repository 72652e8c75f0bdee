import DumpKit
import Foundation
import JSONStream
import TestSupport
import XCTest

/// The code the README ("Using the library") and the DocC article (GettingStarted.md) show: each
/// snippet is the text between `// snippet: NAME` and `// end snippet` below, compiled and run here
/// on the samples, and `testTheDocumentsShowTheseExactSnippets` checks that both documents contain
/// it word for word, so the documentation cannot rot.
final class LibrarySnippetsTests: XCTestCase {
    func testReadingRecords() throws {
        try inSampleFolder {
            // snippet: reading-records
            let dump = try InputFile(path: "samples/todolist/v1.json")
            let reader = DumpReader(source: dump, patterns: [try PathPattern("/v1/todolist/{id}")])
            let outside = DiscardingPassThrough()  // skips what lies outside the records
            var titles: [String: String] = [:]
            while let record = try reader.next(passThrough: outside) {
                titles[record.captures["id"]!] = record.value?.objectValue?["title"]?.stringValue
            }
            // end snippet
            XCTAssertEqual(titles.count, 40)
            XCTAssertEqual(titles["-KYwC1ipKKWX7m00HxJo"], "牛乳を買う")
        }
    }

    func testMigratingADump() throws {
        try inSampleFolder {
            try migrate()
            XCTAssertTrue(try String(contentsOfFile: "v2.json", encoding: .utf8).contains(#""v2":{"todolist":{"-K"#))
            XCTAssertEqual(try String(contentsOfFile: "v2.json.rejects.ndjson", encoding: .utf8).split(separator: "\n").count, 4)
        }
    }

    /// The migration snippet, also the first step of the others.
    private func migrate() throws {
        // snippet: migrating-a-dump
        var migrate = MigrateJob(input: "samples/todolist/v1.json", output: "v2.json", planPaths: ["schemas/todolist/plan.yaml"])
        migrate.onError = .keep  // values the plan cannot migrate stay as they were, listed in v2.json.rejects.ndjson
        let summary = try migrate.run()
        print("\(summary.stats.changed) records changed, \(summary.stats.rejects) values kept as they were")
        // end snippet
        XCTAssertEqual(summary.stats.changed, 40)
        XCTAssertEqual(summary.stats.rejects, 4)
    }

    func testMigratingOneRecord() throws {
        try inSampleFolder {
            // snippet: migrating-one-record
            let plan = try MigrationPlan.load(path: "schemas/todolist/plan.yaml")
            let runner = PlanRunner(plans: [plan], onError: .fail)  // .fail: a value it cannot migrate throws
            let v1 = Record(
                path: ["v1", "todolist", "-KYwC1ipKKWX7m00HxJo"],
                value: .object(["title": .string("牛乳を買う"), "photo_count": .string("2"), "progress": .string("着手中")]))
            let v2 = try runner.apply(v1).moved[0]
            print(v2.pointer, v2.value!)  // /v2/todolist/-KYwC1ipKKWX7m00HxJo, photoCount 2, progress "doing"
            // end snippet
            XCTAssertEqual(v2.pointer, "/v2/todolist/-KYwC1ipKKWX7m00HxJo")
            let fields = try XCTUnwrap(v2.value?.objectValue)
            XCTAssertEqual(fields.keys, ["title", "photoCount", "progress"])
            XCTAssertEqual(fields["photoCount"], .number(JSONNumber(2)))
            XCTAssertEqual(fields["progress"], .string("doing"))
        }
    }

    func testExtractingBlobs() throws {
        try inSampleFolder {
            try migrate()
            // snippet: extracting-blobs
            var extract = ExtractBlobsJob(input: "v2.json", output: "v2.clean.json", store: "bucket")
            extract.options.match = [try PathPattern("/v2/todolist/{id}/images")]
            extract.options.referenceStyle = .salada  // Salada Files {name, url, mimeType}; tokens in the objects' metadata
            extract.options.bucket = "salada-todo.appspot.com"
            extract.options.minimumBytes = 1
            let moved = try extract.run().report.snapshot.extracted
            print("\(moved.count) files (\(moved.bytes) bytes) moved into bucket/")
            // end snippet
            XCTAssertEqual(moved.count, 3)
            let objects = try FileManager.default.subpathsOfDirectory(atPath: "bucket").filter {
                $0.hasSuffix(".jpg") || $0.hasSuffix(".png")
            }
            XCTAssertEqual(objects.count, 3, "\(objects)")
            XCTAssertFalse(try String(contentsOfFile: "v2.clean.json", encoding: .utf8).contains("data:image"))
        }
    }

    func testValidatingWithASchema() throws {
        try inSampleFolder {
            try migrate()
            // snippet: validating
            var validate = ValidateJob(input: "v2.json")
            validate.schemas = [try SchemaBinding.load(pattern: "/v2/todolist/{id}", file: "schemas/todolist/v2.schema.json")]
            let report = try validate.run()  // findings, never thrown: a bad schema or an unreadable dump throws
            for finding in report.findings { print(finding.severity, finding.rule, finding.pointer, finding.message) }
            // end snippet
            XCTAssertEqual(report.errorCount, 4, "the four values the migration kept: \(report.findings)")
            XCTAssertEqual(
                Set(report.findings.map(\.rule)), ["schema:type", "schema:enum", "schema:additionalProperties"])
        }
    }

    func testAPictureOfTheDump() throws {
        try inSampleFolder {
            // snippet: stats-html
            let stats = try DumpStats.gather(from: try InputFile(path: "samples/todolist/v1.json"))
            print(stats.recordPatterns, stats.base64Images, stats.largestRecords.first!.pointer)
            try StatsHTMLReport(stats: stats, title: "todolist v1").render().write(toFile: "report.html", atomically: true, encoding: .utf8)
            // end snippet
            XCTAssertTrue(try String(contentsOfFile: "report.html", encoding: .utf8).contains("<svg id=\"treemap\""))
        }
    }

    /// Every snippet appears, word for word, in a `swift` code block of the README and of the DocC article.
    func testTheDocumentsShowTheseExactSnippets() throws {
        let snippets = try Self.snippets()
        XCTAssertEqual(
            snippets.map(\.name),
            ["reading-records", "migrating-a-dump", "migrating-one-record", "extracting-blobs", "validating", "stats-html"])
        for document in ["README.md", "Sources/DumpKit/DumpKit.docc/GettingStarted.md"] {
            let text = try String(contentsOf: TestData.projectRoot.appendingPathComponent(document), encoding: .utf8)
            for snippet in snippets {
                XCTAssertTrue(
                    text.contains("```swift\n" + snippet.code + "\n```"),
                    "\(document) lacks the snippet '\(snippet.name)':\n\(snippet.code)")
            }
        }
    }

    /// The snippets of this file, dedented, in their order.
    static func snippets() throws -> [(name: String, code: String)] {
        let lines = try String(contentsOfFile: #filePath, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        var out: [(name: String, code: String)] = []
        var current: (name: String, lines: [Substring])?
        for line in lines {
            let trimmed = line.drop { $0 == " " }
            if trimmed.hasPrefix("// snippet: ") {
                current = (String(trimmed.dropFirst("// snippet: ".count)), [])
            } else if trimmed == "// end snippet", let c = current {
                let indent = c.lines.filter { !$0.isEmpty }.map { $0.prefix { $0 == " " }.count }.min() ?? 0
                out.append((c.name, c.lines.map { String($0.dropFirst(indent)) }.joined(separator: "\n")))
                current = nil
            } else {
                current?.lines.append(line)
            }
        }
        return out
    }

    /// Runs `body` in a new temporary folder holding links to the project's `samples` and `schemas`,
    /// so that the snippets' paths are the ones a reader of the documents has in a clone. (The
    /// working directory is the process's: tests run one at a time, and it is put back.)
    private func inSampleFolder(_ body: () throws -> Void) throws {
        let dir = try TemporaryDirectory()
        for name in ["samples", "schemas"] {
            try FileManager.default.createSymbolicLink(
                atPath: dir.path(name), withDestinationPath: TestData.projectRoot.appendingPathComponent(name).path)
        }
        let previous = FileManager.default.currentDirectoryPath
        XCTAssertTrue(FileManager.default.changeCurrentDirectoryPath(dir.url.path))
        defer { _ = FileManager.default.changeCurrentDirectoryPath(previous) }
        try body()
    }
}
