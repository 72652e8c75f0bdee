import XCTest

@testable import DumpKit

/// The progress line: nothing for short runs, throttled reports for long ones.
final class ProgressMeterTests: XCTestCase {
    private final class Reports: @unchecked Sendable {
        var snapshots: [ProgressMeter.Snapshot] = []
    }

    func testARunShorterThanTheDelayReportsNothingNotEvenItsEnd() {
        let reports = Reports()
        let meter = ProgressMeter(interval: 0, delay: 3600) { reports.snapshots.append($0) }
        for _ in 0..<5000 { meter.recordDone() }
        meter.finish()
        XCTAssertTrue(reports.snapshots.isEmpty)
    }

    func testALongerRunReportsAndEnds() {
        let reports = Reports()
        let meter = ProgressMeter(interval: 0, delay: 0) { reports.snapshots.append($0) }
        for _ in 0..<5000 { meter.recordDone() }
        meter.finish()
        // A report every 1024 records, then the final one.
        XCTAssertEqual(reports.snapshots.count, 5)
        XCTAssertEqual(reports.snapshots.last?.done, true)
        XCTAssertEqual(reports.snapshots.last?.records, 5000)
    }
}
