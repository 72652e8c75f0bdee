import Foundation
import XCTest

@testable import DumpKit

/// `BlobPutWindow` against a store whose puts take a while, counting what overlaps.
final class BlobPutWindowTests: XCTestCase {
    /// An in-memory store whose puts sleep `delay` and record the most puts, and bytes, at once.
    private final class SlowStore: BlobStore, @unchecked Sendable {
        let delay: TimeInterval
        let failing: String?
        private let lock = NSLock()
        private(set) var objects: [String: [UInt8]] = [:]
        private(set) var calls = 0
        private(set) var inFlight = 0
        private(set) var mostInFlight = 0
        private(set) var bytesInFlight = 0
        private(set) var mostBytesInFlight = 0
        private(set) var namesInFlight: Set<String> = []
        private(set) var overlappedNames: [String] = []

        init(delay: TimeInterval, failing: String? = nil) {
            self.delay = delay
            self.failing = failing
        }

        var description: String { "slow store" }

        func put(_ content: UnsafeRawBufferPointer, metadata: BlobMetadata, replacing: Bool) throws -> BlobPutOutcome {
            lock.withLock {
                calls += 1
                inFlight += 1
                mostInFlight = max(mostInFlight, inFlight)
                bytesInFlight += content.count
                mostBytesInFlight = max(mostBytesInFlight, bytesInFlight)
                if !namesInFlight.insert(metadata.name).inserted { overlappedNames.append(metadata.name) }
            }
            Thread.sleep(forTimeInterval: delay)
            return try lock.withLock {
                inFlight -= 1
                bytesInFlight -= content.count
                namesInFlight.remove(metadata.name)
                if metadata.name == failing { throw BlobStoreError(store: description, name: metadata.name, message: "refused") }
                if let existing = objects[metadata.name], existing != Array(content), !replacing {
                    throw BlobExistsError(store: description, name: metadata.name, existingSHA256: "", newSHA256: metadata.sha256)
                }
                let replaced = objects[metadata.name] != nil
                objects[metadata.name] = Array(content)
                return replaced ? .replaced : .stored
            }
        }

        func put(
            streaming metadata: BlobMetadata, replacing: Bool, fill: (_ write: (UnsafeRawBufferPointer) throws -> Void) throws -> Void
        ) throws -> BlobPutOutcome {
            var content: [UInt8] = []
            try fill { content.append(contentsOf: $0) }
            return try content.withUnsafeBytes { try put($0, metadata: metadata, replacing: replacing) }
        }

        func sync() throws {}
        func get(_ name: String) throws -> [UInt8] { try lock.withLock { objects[name] }! }
        func metadata(_ name: String) throws -> BlobMetadata? { nil }
        func exists(_ name: String) throws -> Bool { lock.withLock { objects[name] != nil } }
        func list(_ body: (String) throws -> Void) throws { try lock.withLock { Array(objects.keys) }.forEach(body) }
    }

    /// Outcomes as the completion saw them, by label.
    private final class Outcomes: @unchecked Sendable {
        var stored: [Int] = []
        var failed: [Int: String] = [:]
    }

    private func metadata(_ name: String, _ content: [UInt8]) -> BlobMetadata {
        content.withUnsafeBytes { ContentDigest($0) }.metadata(name: name, contentType: "application/octet-stream")
    }

    private func window(_ store: SlowStore, jobs: Int, maxBytes: Int = 1 << 20, outcomes: Outcomes) -> BlobPutWindow<Int> {
        BlobPutWindow(store: store, jobs: jobs, maxBytes: maxBytes) { label, _, outcome in
            switch outcome {
            case .success: outcomes.stored.append(label)
            case .failure(let error as BlobExistsError): outcomes.failed[label] = "\(error)"
            case .failure(let error): throw error
            }
        }
    }

    func testPutsOverlapUpToJobsAndEveryOutcomeIsCollected() throws {
        let store = SlowStore(delay: 0.005)
        let outcomes = Outcomes()
        let window = window(store, jobs: 8, outcomes: outcomes)
        for i in 0..<200 {
            let content = [UInt8(i % 256), 1, 2]
            try window.put(content, metadata: metadata("o/\(i)", content), replacing: false, label: i)
        }
        try window.finish()
        XCTAssertEqual(outcomes.stored.sorted(), Array(0..<200))
        XCTAssertEqual(store.objects.count, 200)
        XCTAssertEqual(store.objects["o/7"], [7, 1, 2])
        XCTAssertLessThanOrEqual(store.mostInFlight, 8)
        XCTAssertGreaterThan(store.mostInFlight, 1, "puts did not overlap")
    }

    func testPutsOfOneNameTakeTurnsAndTheLastStays() throws {
        let store = SlowStore(delay: 0.01)
        let outcomes = Outcomes()
        let window = window(store, jobs: 8, outcomes: outcomes)
        for i in 0..<6 {
            let content = [UInt8(i)]
            try window.put(content, metadata: metadata("same", content), replacing: true, label: i)
            try window.put(content, metadata: metadata("other-\(i)", content), replacing: false, label: 100 + i)
        }
        // A streamed put of the name waits for the held ones.
        let last: [UInt8] = [9, 9]
        try window.putHere(metadata: metadata("same", last), label: 6) {
            try store.put(streaming: metadata("same", last), replacing: true) { write in try last.withUnsafeBytes { try write($0) } }
        }
        try window.finish()
        XCTAssertEqual(store.overlappedNames, [])
        XCTAssertEqual(store.objects["same"], last)
        XCTAssertEqual(outcomes.stored.count, 13)
        // Without `replacing`, a second put of other bytes is refused, and the first stays.
        let kept = SlowStore(delay: 0.01)
        let keptOutcomes = Outcomes()
        let second = self.window(kept, jobs: 4, outcomes: keptOutcomes)
        try second.put([1], metadata: metadata("n", [1]), replacing: false, label: 0)
        try second.put([2], metadata: metadata("n", [2]), replacing: false, label: 1)
        try second.finish()
        XCTAssertEqual(kept.objects["n"], [1])
        XCTAssertEqual(Array(keptOutcomes.failed.keys), [1])
    }

    func testBytesHeldStayWithinTheBudgetAndALargerObjectGoesAlone() throws {
        let store = SlowStore(delay: 0.005)
        let outcomes = Outcomes()
        let window = window(store, jobs: 16, maxBytes: 1_000, outcomes: outcomes)
        for i in 0..<40 {
            let content = [UInt8](repeating: UInt8(i), count: i == 20 ? 5_000 : 300)
            try window.put(content, metadata: metadata("o/\(i)", content), replacing: false, label: i)
        }
        try window.finish()
        XCTAssertEqual(store.objects.count, 40)
        XCTAssertEqual(store.mostBytesInFlight, 5_000, "the large object went with others, or never alone")
        XCTAssertGreaterThan(store.mostInFlight, 1)
        // Without the large one: never more than the budget.
        let small = SlowStore(delay: 0.005)
        let smallWindow = self.window(small, jobs: 16, maxBytes: 1_000, outcomes: Outcomes())
        for i in 0..<40 {
            let content = [UInt8](repeating: UInt8(i), count: 300)
            try smallWindow.put(content, metadata: metadata("o/\(i)", content), replacing: false, label: i)
        }
        try smallWindow.finish()
        XCTAssertLessThanOrEqual(small.mostBytesInFlight, 900)
        XCTAssertGreaterThan(small.mostInFlight, 1)
    }

    func testAnErrorTheCompletionThrowsStopsTheWindow() throws {
        let store = SlowStore(delay: 0.01, failing: "o/5")
        let outcomes = Outcomes()
        let window = window(store, jobs: 2, outcomes: outcomes)
        var handed = 0
        do {
            for i in 0..<1_000 {
                let content = [UInt8(i % 256)]
                try window.put(content, metadata: metadata("o/\(i)", content), replacing: false, label: i)
                handed += 1
            }
            XCTFail("every put was handed over after one failed")
        } catch {
            XCTAssertTrue("\(error)".contains("o/5") && "\(error)".contains("refused"), "\(error)")
        }
        XCTAssertLessThan(handed, 20)
        XCTAssertThrowsError(try window.finish()) { XCTAssertTrue("\($0)".contains("refused"), "\($0)") }
        XCTAssertLessThan(store.calls, 20, "puts went on after the failure")
        XCTAssertEqual(store.inFlight, 0)
        // `stop` drops what is waiting and waits for what runs.
        let stopped = SlowStore(delay: 0.5)
        let stoppedWindow = self.window(stopped, jobs: 2, outcomes: Outcomes())
        for i in 0..<4 { try stoppedWindow.put([1], metadata: metadata("s/\(i)", [1]), replacing: false, label: i) }
        stoppedWindow.stop(CocoaError(.userCancelled))
        XCTAssertEqual(stopped.inFlight, 0)
        XCTAssertLessThan(stopped.calls, 4)
    }
}
