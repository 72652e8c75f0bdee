import DumpKit
import FuzzSupport
import JSONStream

// NDJSONReader and NDJSONWriter on any bytes:
// - the reader gives the same records, or the same error, however the input is cut into reads and
//   whatever its buffer size;
// - records written by NDJSONWriter (built values, and values handed over as compact JSON) read
//   back as the same records.

/// The records of a whole input, or the error that ended it (after the records before it).
struct Outcome: Equatable {
    var records: [Record] = []
    var error: String?
}

func read(_ bytes: [UInt8], chunk: Int, buffer: Int) -> Outcome {
    let reader = NDJSONReader(source: MemoryByteSource(bytes, chunkSize: chunk), options: .init(bufferSize: buffer), sourceName: "in")
    var outcome = Outcome()
    do {
        while let record = try reader.next(passThrough: nil) { outcome.records.append(record) }
    } catch {
        outcome.error = "\(error)"
    }
    return outcome
}

func write(_ records: [Record], asCompactJSON: Bool) -> [UInt8] {
    let sink = MemoryByteSink()
    let writer = NDJSONWriter(writer: JSONWriter(sink: sink))
    do {
        for record in records {
            if asCompactJSON {
                let value = MemoryByteSink()
                let valueWriter = JSONWriter(sink: value)
                try valueWriter.value(record.value!)
                try valueWriter.flush()
                try value.bytes.withUnsafeBytes { try writer.write(path: record.path, compactJSON: $0, from: record.path) }
            } else {
                try writer.write(record, from: record.path)
            }
        }
        try writer.finish()
    } catch {
        preconditionFailure("writing the records failed: \(error)")
    }
    return sink.bytes
}

@main
enum FuzzNDJSON {
    static func main() {
        runFuzzer { data in
            let bytes = Array(data)
            let whole = read(bytes, chunk: .max, buffer: 1 << 20)
            for (chunk, buffer) in [(1, 64), (13, 100)] {
                let other = read(bytes, chunk: chunk, buffer: buffer)
                precondition(other == whole, "chunks of \(chunk), buffer \(buffer): \(other), whole: \(whole)")
            }
            guard whole.error == nil else { return }
            let written = write(whole.records, asCompactJSON: false)
            precondition(write(whole.records, asCompactJSON: true) == written, "compact JSON values were written otherwise")
            let back = read(written, chunk: .max, buffer: 1 << 20)
            precondition(back == whole, "the written records read back otherwise: \(back)")
        }
    }
}
