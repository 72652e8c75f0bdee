import ArchiveKit
import ArgumentParser
import JSONStream

/// How the commands that write a dump write it: indentation, key order, compression level, seekable zstd.
struct DumpOutputOptions: ParsableArguments {
    @Flag(help: "Indented output.")
    var pretty = false

    @Flag(help: "Members in the Realtime Database's key order, so the same data always gives the same bytes.")
    var canonical = false

    @Option(help: "Compression level of a compressed output (its name ends in .gz, .zst, .xz or .bz2).")
    var level: Int?

    @Flag(
        help: ArgumentHelp(
            "Write a .zst output in zstd's seekable format, which dumpkit index and --shard read from any offset.",
            discussion: """
                Independent frames of 4 MiB and a seek table at the end (under 1% larger than plain zstd); \
                zstd -d and every zstd reader read it as usual. Needs an output whose name ends in .zst.
                """))
    var seekable = false

    var writerOptions: JSONWriter.Options { JSONWriter.Options(pretty: pretty, sortKeys: canonical) }

    /// Warns of the options that do nothing when writing `output` (`nil`: a dry run, which writes none).
    func warnUnused(output: String?) {
        guard let output else {
            let given = [
                pretty ? "--pretty" : nil, canonical ? "--canonical" : nil, level != nil ? "--level" : nil, seekable ? "--seekable" : nil,
            ].compactMap { $0 }
            if !given.isEmpty {
                warn("\(given.joined(separator: ", ")) \(given.count == 1 ? "has" : "have") no effect with --dry-run (nothing is written)")
            }
            return
        }
        if level != nil && CompressionFilter.forPath(output) == .none {
            warn(
                "--level has no effect: \(output == "-" ? "standard output" : output) is not compressed (a name ending in .gz, .zst, .xz or .bz2 is)"
            )
        }
    }
}
