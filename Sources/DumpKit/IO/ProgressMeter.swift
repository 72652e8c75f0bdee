import Foundation

/// ProgressMeter of a long run: bytes read of the input's size, records, MB/s and ETA, reported to a
/// callback at most a few times a second.
public final class ProgressMeter {
    /// One report.
    public struct Snapshot: Sendable {
        public var bytes: Int64
        public var total: Int64?
        public var records: Int
        public var seconds: Double
        public var done: Bool

        /// Megabytes (10^6 bytes) per second so far.
        public var megabytesPerSecond: Double { seconds > 0 ? Double(bytes) / 1e6 / seconds : 0 }
        /// Seconds left at the current rate, when the total is known.
        public var eta: Double? {
            guard let total, bytes > 0, seconds > 0 else { return nil }
            return Double(total - bytes) / (Double(bytes) / seconds)
        }

        /// A one-line rendering: `45.2 MB / 1.0 GB (4%)  120 MB/s  ETA 0:07  12,345 records`.
        public var line: String {
            var s = ProgressMeter.format(bytes: bytes)
            if let total, total > 0 {
                s += " / \(ProgressMeter.format(bytes: total)) (\(Int(Double(bytes) * 100 / Double(total)))%)"
            }
            s += String(format: "  %.0f MB/s", megabytesPerSecond)
            if let eta, !done { s += "  ETA \(Int(eta) / 60):" + String(format: "%02d", Int(eta) % 60) }
            if records > 0 { s += "  \(records) records" }
            return s
        }
    }

    private let report: (Snapshot) -> Void
    private let start = Date()
    private var last = Date.distantPast
    private var bytes: Int64 = 0
    private var total: Int64?
    private var records = 0
    private let interval: TimeInterval
    private let delay: TimeInterval
    private var reported = false

    /// `report` is called on the working thread, throttled to one call per `interval`, and not before
    /// `delay` seconds: a run shorter than that reports nothing, not even when it finishes.
    public init(interval: TimeInterval = 0.2, delay: TimeInterval = 1, report: @escaping (Snapshot) -> Void) {
        self.interval = interval
        self.delay = delay
        self.report = report
    }

    /// Follows the reads of `input`.
    public func attach(_ input: InputFile) {
        input.onRead = attach(total: input.size)
    }

    /// Follows reads that the caller reports to the function returned (the bytes read so far), of
    /// `total` bytes in all.
    public func attach(total: Int64?) -> (Int64) -> Void {
        self.total = total
        return { [unowned self] n in
            self.bytes = n
            self.tick()
        }
    }

    public func recordDone() {
        records += 1
        if records & 1023 == 0 { tick() }
    }

    private func tick() {
        let now = Date()
        guard now.timeIntervalSince(last) >= interval, now.timeIntervalSince(start) >= delay else { return }
        last = now
        reported = true
        report(snapshot(done: false))
    }

    /// Sends the final report, when the run reported before.
    public func finish() {
        if reported { report(snapshot(done: true)) }
    }

    private func snapshot(done: Bool) -> Snapshot {
        Snapshot(bytes: bytes, total: total, records: records, seconds: Date().timeIntervalSince(start), done: done)
    }

    /// `1.5 GB`, `45.2 MB`, `512 B` (powers of 1000).
    public static func format(bytes: Int64) -> String {
        let b = Double(bytes)
        if b >= 1e9 { return String(format: "%.1f GB", b / 1e9) }
        if b >= 1e6 { return String(format: "%.1f MB", b / 1e6) }
        if b >= 1e3 { return String(format: "%.1f kB", b / 1e3) }
        return "\(bytes) B"
    }
}
