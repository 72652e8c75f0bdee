import Foundation
import JSONStream
import TestSupport
import XCTest

@testable import DumpKit

/// docs/PLANS.md and the operation catalog agree: every operation has its section, every section
/// names operations, and every example of the operations section loads and runs.
final class PlanDocsTests: XCTestCase {
    private var docs: String {
        (try? String(contentsOf: TestData.projectRoot.appendingPathComponent("docs/PLANS.md"), encoding: .utf8)) ?? ""
    }

    /// The text of the section headed `## title`, up to the next `## ` heading.
    private func section(_ title: String) throws -> Substring {
        let text = docs
        let start = try XCTUnwrap(text.range(of: "\n## \(title)\n"), "docs/PLANS.md has no '## \(title)'")
        let rest = text[start.upperBound...]
        return rest[..<(rest.range(of: "\n## ")?.lowerBound ?? rest.endIndex)]
    }

    /// The fenced `yaml` blocks of `text`.
    private func yamlBlocks(_ text: Substring) -> [String] {
        text.components(separatedBy: "```yaml\n").dropFirst().map { String($0.components(separatedBy: "\n```")[0]) }
    }

    func testEveryOperationHasASectionAndEverySectionNamesOperations() throws {
        let headings = try section("Operations").split(separator: "\n").filter { $0.hasPrefix("### ") }.map { $0.dropFirst(4) }
        let named = Set(headings.flatMap { $0.split(separator: " ").filter { $0 != "and" }.map(String.init) })
        XCTAssertEqual(named, Set(OperationCatalog.names), "### headings of docs/PLANS.md's operations section")
    }

    func testEveryOperationExampleLoadsAndRuns() throws {
        let blocks = yamlBlocks(try section("Operations"))
        XCTAssertGreaterThanOrEqual(blocks.count, OperationCatalog.names.count - 1)
        var examples: [String] = []
        for block in blocks {
            // A block is either steps (`- name: ...`) or operations, each item an example of its own.
            if block.hasPrefix("- name:") {
                examples.append(block)
                continue
            }
            var items: [String] = []
            for line in block.split(separator: "\n", omittingEmptySubsequences: false) {
                if line.hasPrefix("- ") { items.append(String(line)) } else if !items.isEmpty { items[items.count - 1] += "\n" + line }
            }
            examples += items.map { item in
                "- match: /v1/todolist/{id}\n  ops:\n" + item.split(separator: "\n").map { "    " + $0 }.joined(separator: "\n")
            }
        }
        XCTAssertGreaterThan(examples.count, 20)
        let dir = try TemporaryDirectory()
        let record = #"""
            {"_createdAt": 1482814956, "photo_count": "3", "price": "1.5", "tax": "0.2", "count": 4, "done": "true",
             "savedAt": 1482814956.123, "date": "2016/12/14 10:30:00", "at": "2016-12-14T10:30:00+09:00", "progress": "着手中",
             "level": 1, "legacy": 1, "meta": {"tmp": 1, "created": 2}, "image1": "a", "image2": "b", "images": ["x"],
             "photo": {"name": "1482814956123"}, "title": "t"}
            """#
        try Data(
            #"{"v1": {"todolist": {"-KZy__8VkJ6DHmJYPkt0": \#(record)}}, "posts": {"p": {"spam": true}}, "v2": {"todolist": {"-K1": {"images": ["y"]}}}}"#
                .utf8
        )
        .write(to: dir.url.appendingPathComponent("dump.json"))
        for (i, steps) in examples.enumerated() {
            let plan =
                "name: example\nfrom: v1\nto: v2\nsteps:\n" + steps.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n") + "\n"
            try Data(plan.utf8).write(to: dir.url.appendingPathComponent("plan\(i).yaml"))
            var job = MigrateJob(input: dir.path("dump.json"), output: dir.path("out\(i).json"), planPaths: [dir.path("plan\(i).yaml")])
            job.onError = .keep
            job.rejectsPath = dir.path("rejects\(i).ndjson")
            job.blobStore = dir.path("blobs")
            do {
                let summary = try job.run()
                XCTAssertTrue(FileManager.default.fileExists(atPath: dir.path("out\(i).json")), steps)
                XCTAssertFalse(
                    summary.nothingToDo && summary.warnings.isEmpty && !steps.contains("extract-blobs"), "changed nothing:\n\(steps)")
            } catch {
                XCTFail("\(error)\n\(steps)")
            }
        }
    }
}
