import ArgumentParser
import DumpKit
import Foundation
import JSONStream

/// `--json`, which every command takes: one JSON object on standard output instead of the text for
/// people (fields per command in docs/JSON-OUTPUT.md); messages then go to standard error.
struct JSONSummaryOption: ParsableArguments {
    @Flag(help: "Print one JSON object on standard output (fields in docs/JSON-OUTPUT.md); messages go to standard error.")
    var json = false

    /// Refuses `--json` with an output that also goes to standard output.
    func check(output: String?) throws {
        if json && output == "-" {
            throw ValidationError("--json and the output would both go to standard output; give -o FILE")
        }
    }
}

/// Writes `value` as indented JSON and a newline to standard output.
func printJSON(_ value: JSONValue) throws {
    let w = JSONWriter(sink: StandardOutput(), options: .init(pretty: true))
    try w.value(value)
    try w.raw("\n")
    try w.flush()
}

/// Standard output as a JSON byte sink.
final class StandardOutput: JSONByteSink {
    func write(_ bytes: UnsafeRawBufferPointer) throws {
        FileHandle.standardOutput.write(Data(bytes))
    }
}
