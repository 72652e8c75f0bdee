import ArgumentParser
import DumpKit
import Foundation

/// Options every command shares.
struct CommonOptions: ParsableArguments {
    @Flag(name: .shortAndLong, help: "Print nothing but errors (no progress line).")
    var quiet = false

    @Flag(
        name: .customLong("progress"),
        help: "Report progress on standard error even when it is not a terminal (a line every 10 seconds, for CI logs).")
    var forcesProgress = false

    /// A progress reporter on standard error for runs longer than a second: one line redrawn in place
    /// on a terminal, or with `--progress` elsewhere a line every 10 seconds. No colours are used.
    func progress() -> ProgressMeter? {
        guard !quiet else { return nil }
        if isatty(STDERR_FILENO) != 0 {
            return ProgressMeter { snapshot in
                let line = "\r\u{1B}[K" + snapshot.line + (snapshot.done ? "\n" : "")
                FileHandle.standardError.write(Data(line.utf8))
            }
        }
        guard forcesProgress else { return nil }
        return ProgressMeter(interval: 10) { snapshot in
            FileHandle.standardError.write(Data(("progress: " + snapshot.line + (snapshot.done ? " (done)" : "") + "\n").utf8))
        }
    }

    /// Prints a message for people on standard error unless `--quiet`.
    func note(_ message: String) {
        guard !quiet else { return }
        FileHandle.standardError.write(Data((message + "\n").utf8))
    }
}

/// Prints `dumpkit: warning: <message>` on standard error: an option that has no effect in this
/// call, say (shown even with `--quiet`, which silences progress and notes).
func warn(_ message: String) {
    FileHandle.standardError.write(Data("dumpkit: warning: \(message)\n".utf8))
}

/// `--jobs` with `--threads`, the hidden older name some commands had for it, as one value.
func jobsGiven(_ jobs: Int?, alias threads: Int?) throws -> Int? {
    if jobs != nil && threads != nil { throw UsageError("--threads is the older name of --jobs; give one of them") }
    guard let n = jobs ?? threads else { return nil }
    guard n >= 1 else { throw UsageError("--jobs must be at least 1") }
    return n
}

/// Exit codes: 0 ok, 1 findings or data errors, 2 usage or input errors.
enum Exit {
    static let findings = ExitCode(1)
    static let input = ExitCode(2)
}

/// Runs a command body, turning library errors into one clear line on standard error and the
/// documented exit code.
func reportingErrors<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let e as ExitCode {
        throw e
    } catch let e as UsageError {
        FileHandle.standardError.write(Data("dumpkit: error: \(e)\n".utf8))
        throw Exit.input
    } catch {
        FileHandle.standardError.write(Data("dumpkit: error: \(error)\n".utf8))
        let underlying = (error as? PipelineError)?.underlying ?? error
        throw underlying is DataError ? Exit.findings : Exit.input
    }
}
