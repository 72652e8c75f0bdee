import ArchiveKit
import ArgumentParser
import DumpKit
import Foundation

/// Options of the commands that write archives (`archive`, `backup`).
struct ArchiveOptions: ParsableArguments {
    @Option(help: "Archive format: tar or zip (default: from the output's name, else tar).")
    var format: ArchiveFormat?

    @Option(
        help:
            "Compression: zstd, gzip, xz, bzip2 or none; zip takes gzip (deflate) or none (default: from the output's name, else zstd for tar, deflate for zip)."
    )
    var compression: CompressionFilter?

    @Option(help: "Compression level (zstd 1-22 and negative fast levels, gzip/xz/zip 0-9).")
    var level: Int?

    @Option(help: "Hashing and compression threads (default: the number of cores).")
    var threads: Int?

    @Option(help: "Take only objects whose name matches this glob (repeatable; * also matches /).")
    var include: [String] = []

    @Option(help: "Leave out objects whose name matches this glob (repeatable).")
    var exclude: [String] = []

    /// Copies the options into `job`, with the creation time from SOURCE_DATE_EPOCH.
    func configure(_ job: inout ArchiveJob) throws {
        job.format = format
        job.compression = compression
        job.level = level
        job.threads = threads
        job.filter = PathFilter(include: include, exclude: exclude)
        job.created = try ArchiveJob.sourceDateEpoch(in: ProcessInfo.processInfo.environment)
    }
}

extension ArchiveJob.Summary {
    /// Warns of `--include` patterns that matched no object, and then fails with exit code 1.
    func checkIncludes() throws {
        guard let unmatched = unmatchedIncludes else { return }
        let message = "dumpkit: warning: \(unmatched) (the archive holds the other patterns' \(counted(objects, "object")))\n"
        FileHandle.standardError.write(Data(message.utf8))
        throw Exit.findings
    }
}

extension ArchiveFormat: ExpressibleByArgument {}
extension CompressionFilter: ExpressibleByArgument {}
extension SafeExtractor.OverwritePolicy: ExpressibleByArgument {}

extension CommonOptions {
    /// A progress line for archive commands on standard error, when that is a terminal.
    func archiveProgress() -> ArchiveProgress? {
        guard !quiet, isatty(STDERR_FILENO) != 0 else { return nil }
        return ArchiveProgress { snapshot in
            let line = "\r\u{1B}[K" + snapshot.line + (snapshot.done ? "\n" : "")
            FileHandle.standardError.write(Data(line.utf8))
        }
    }

    /// Prints each problem on standard error, then fails with exit code 1 if there were any.
    func report(_ problems: [VerifyJob.Problem], in archive: String, doing action: String) throws {
        for problem in problems {
            FileHandle.standardError.write(Data("dumpkit: \(archive): \(problem)\n".utf8))
        }
        if !problems.isEmpty { throw ArchiveProblems(count: problems.count, archive: archive, action: action) }
    }
}
