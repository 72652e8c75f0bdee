import ArgumentParser
import DumpKit
import Foundation
import JSONStream

/// `dumpkit stats`: what is in a dump, before migrating it.
struct StatsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Show what a dump holds: path patterns with counts, bytes and types, depth, bad keys, base64 images.",
        discussion: """
            Ids are collapsed into named captures, so /users/<uid>/messages/-Kabc.../text is counted \
            under /users/{uid}/messages/{id}/text: {id} push IDs, {uid} Auth UIDs (28 letters and \
            digits), {n} numbers and array positions, {email} e-mail keys, {key} siblings whose values \
            have the same members or more than 64 siblings ({n2}: a name repeated on a path). The \
            record patterns at the end (recordPatterns with --json) are good --records choices. One \
            streaming pass; memory does not grow with the dump.

            Examples:
              dumpkit stats backup.json.gz
              dumpkit stats dump.json --json | jq '.patterns[] | select(.count > 1000)'
            """
    )

    @Argument(help: "Input dump, or - for standard input.")
    var input: String

    @Flag(help: "Print the statistics as JSON.")
    var json = false

    @OptionGroup var common: CommonOptions

    func run() throws {
        try reportingErrors {
            let file = try InputFile(path: input)
            let progress = common.progress()
            progress.map { $0.attach(file) }
            let stats = try DumpStats.gather(from: file, sourceName: file.name)
            progress?.finish()
            if json {
                let sink = StandardOutput()
                let w = JSONWriter(sink: sink, options: .init(pretty: true))
                try w.value(stats.jsonValue)
                try w.raw("\n")
                try w.flush()
            } else {
                print(stats.text)
            }
        }
    }
}

/// Standard output as a JSON byte sink.
final class StandardOutput: JSONByteSink {
    func write(_ bytes: UnsafeRawBufferPointer) throws {
        FileHandle.standardOutput.write(Data(bytes))
    }
}
