import Foundation
import Synchronization

/// Progress of an archive command: files and bytes done of their totals, MB/s and ETA, reported to a
/// callback at most a few times a second. Safe to update from several threads.
public final class ArchiveProgress: Sendable {
    /// One report.
    public struct Snapshot: Sendable {
        /// What is being done: "hashing", "archiving", "restoring", "verifying", "listing".
        public var phase: String
        public var files: Int
        public var totalFiles: Int?
        public var bytes: Int64
        public var totalBytes: Int64?
        /// Seconds since the phase began.
        public var seconds: Double
        /// Whether this is the phase's last report.
        public var done: Bool

        /// Megabytes (10^6 bytes) per second so far.
        public var megabytesPerSecond: Double { seconds > 0 ? Double(bytes) / 1e6 / seconds : 0 }

        /// Seconds left at the rate so far, when the total is known.
        public var eta: Double? {
            guard let totalBytes, bytes > 0, seconds > 0, totalBytes >= bytes else { return nil }
            return Double(totalBytes - bytes) / (Double(bytes) / seconds)
        }

        /// `archiving  1234/20000 files  123.4 MB / 987.5 MB (12%)  150 MB/s  ETA 0:05`.
        public var line: String {
            var s = "\(phase)  \(files)" + (totalFiles.map { "/\($0)" } ?? "") + " files  " + ProgressMeter.format(bytes: bytes)
            if let totalBytes, totalBytes > 0 {
                s += " / \(ProgressMeter.format(bytes: totalBytes)) (\(min(100, Int(Double(bytes) * 100 / Double(totalBytes))))%)"
            }
            s += String(format: "  %.0f MB/s", megabytesPerSecond)
            if let eta, !done { s += "  ETA \(Int(eta) / 60):" + String(format: "%02d", Int(eta) % 60) }
            return s
        }
    }

    private let report: @Sendable (Snapshot) -> Void
    private let interval: UInt64
    /// The phase so far, when it started and when it was last reported (uptime nanoseconds).
    private struct State {
        var snapshot = Snapshot(phase: "", files: 0, bytes: 0, seconds: 0, done: false)
        var started: UInt64 = 0
        var lastReport: UInt64 = 0
    }

    private let state = Mutex(State())

    /// `report` is called on whichever thread made progress, one call at a time, throttled to one per `interval` seconds.
    public init(interval: Double = 0.2, report: @escaping @Sendable (Snapshot) -> Void) {
        self.interval = UInt64(interval * 1e9)
        self.report = report
    }

    /// Starts a phase with its totals, when known.
    func begin(_ phase: String, totalFiles: Int? = nil, totalBytes: Int64? = nil) {
        state.withLock { state in
            state.started = DispatchTime.now().uptimeNanoseconds
            state.lastReport = state.started
            state.snapshot = Snapshot(
                phase: phase, files: 0, totalFiles: totalFiles, bytes: 0, totalBytes: totalBytes, seconds: 0, done: false)
        }
    }

    /// Counts `bytes` more bytes.
    func add(bytes: Int) {
        update { $0.bytes += Int64(bytes) }
    }

    /// Sets the byte count (for progress measured by a position, such as archive bytes read).
    func set(bytes: Int64) {
        update { $0.bytes = bytes }
    }

    /// Counts one more file.
    func fileDone() {
        update { $0.files += 1 }
    }

    /// Sends the last report of the phase.
    func finish() {
        state.withLock { state in
            state.snapshot.done = true
            state.snapshot.seconds = Double(DispatchTime.now().uptimeNanoseconds - state.started) / 1e9
            report(state.snapshot)
        }
    }

    private func update(_ change: (inout Snapshot) -> Void) {
        state.withLock { state in
            change(&state.snapshot)
            let now = DispatchTime.now().uptimeNanoseconds
            guard now - state.lastReport >= interval else { return }
            state.lastReport = now
            state.snapshot.seconds = Double(now - state.started) / 1e9
            report(state.snapshot)
        }
    }
}
