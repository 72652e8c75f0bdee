import DumpKit
import FuzzSupport
import Glibc
import JSONStream

// The archive reader (libarchive through ArchiveKit, DumpKit's manifest, the `.tar.zst` frame
// reader): `list` (text and JSON) and `verify` on any bytes as an archive file. Each must finish
// with a result or an error, never a crash, a hang or a leak; `list` must give the same entries
// twice, and its JSON must be JSON.

/// The file each input is written to (libarchive reads archives from files); one per process.
let path = "/tmp/dumpkit-fuzz-archive-\(getpid())"

func list(json: Bool) -> (output: [UInt8], entries: Int)? {
    var job = ListJob(archive: path)
    job.json = json
    let sink = MemoryByteSink()
    guard let summary = try? job.run(to: sink) else { return nil }
    return (sink.bytes, summary.entries)
}

@main
enum FuzzArchive {
    static func main() {
        atexit { unlink(path) }
        runFuzzer { data in
            let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            precondition(fd >= 0, "cannot create \(path)")
            precondition(write(fd, data.baseAddress, data.count) == data.count, "cannot write \(path)")
            close(fd)

            let text = list(json: false)
            if let again = list(json: false) {
                precondition(text?.output == again.output, "a second list gave other lines")
            }
            if let json = list(json: true) {
                precondition(text?.entries == json.entries, "list --json gave \(json.entries) entries, list \(text?.entries ?? -1)")
                precondition((try? JSONReader(bytes: json.output).readValue()) != nil, "list --json wrote no JSON")
            }
            _ = try? VerifyJob(archive: path).run()
        }
    }
}
