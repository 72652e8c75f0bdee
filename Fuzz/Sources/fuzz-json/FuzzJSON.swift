import FuzzSupport
import JSONStream

// JSONReader and JSONWriter on any bytes, as one document:
// - the reader gives the same value, or the same error (kind, offset, pointer), whatever the buffer
//   size and however the input is cut into reads (differential across buffer boundaries);
// - `readValue(into:)` (the tape) agrees with `readValue()`;
// - relaxed mode accepts whatever strict mode accepts, with the same value;
// - a value read back from the compact, pretty and canonical writers' output is the value (the
//   canonical one with its members in the database's key order), and writing it again gives the same
//   bytes; `transfer(to:)` writes the same bytes as writing the built value.

/// One read of a whole document: its value, or where and why it failed.
enum Outcome: Equatable {
    case value(JSONValue)
    case failure(JSONError.Kind, offset: Int64, pointer: String)
}

func read(_ bytes: [UInt8], chunk: Int, buffer: Int, relaxed: Bool = false) -> Outcome {
    let reader = JSONReader(source: MemoryByteSource(bytes, chunkSize: chunk), options: .init(relaxed: relaxed, bufferSize: buffer))
    do {
        let value = try reader.readValue()
        guard try reader.next() == .end else { return .failure(.unexpectedCharacter, offset: reader.offset, pointer: "") }
        return .value(value)
    } catch let error as JSONError {
        return .failure(error.kind, offset: error.offset, pointer: error.pointer)
    } catch {
        preconditionFailure("not a JSONError: \(error)")
    }
}

func readTape(_ bytes: [UInt8], chunk: Int, buffer: Int) -> JSONValue? {
    let reader = JSONReader(source: MemoryByteSource(bytes, chunkSize: chunk), options: .init(bufferSize: buffer))
    let tape = JSONTape()
    guard (try? reader.readValue(into: tape)) != nil, (try? reader.next()) == .end else { return nil }
    return tape.value(at: 0)
}

func write(_ value: JSONValue, _ options: JSONWriter.Options) -> [UInt8] {
    let sink = MemoryByteSink()
    let writer = JSONWriter(sink: sink, options: options)
    do {
        try writer.value(value)
        try writer.flush()
    } catch {
        preconditionFailure("writing \(value) failed: \(error)")
    }
    return sink.bytes
}

func mustRead(_ bytes: [UInt8], _ what: String) -> JSONValue {
    guard case .value(let v) = read(bytes, chunk: .max, buffer: 1 << 20) else {
        preconditionFailure("\(what) output does not read back: \(String(decoding: bytes, as: UTF8.self))")
    }
    return v
}

@main
enum FuzzJSON {
    static func main() {
        runFuzzer { data in
            let bytes = Array(data)
            let whole = read(bytes, chunk: .max, buffer: 1 << 20)
            for (chunk, buffer) in [(1, 64), (7, 64), (64, 100), (4099, 4096)] {
                let other = read(bytes, chunk: chunk, buffer: buffer)
                precondition(other == whole, "chunks of \(chunk), buffer \(buffer): \(other), whole: \(whole)")
            }
            guard case .value(let value) = whole else {
                precondition(readTape(bytes, chunk: 7, buffer: 64) == nil, "the tape accepted what readValue refused")
                return
            }
            precondition(readTape(bytes, chunk: 7, buffer: 64) == value, "the tape read another value")
            precondition(read(bytes, chunk: 5, buffer: 64, relaxed: true) == whole, "relaxed mode read another value")

            let compact = write(value, .compact)
            precondition(mustRead(compact, "compact") == value, "compact output reads back as another value")
            let pretty = write(value, .init(pretty: true))
            precondition(mustRead(pretty, "pretty") == value, "pretty output reads back as another value")
            let canonical = write(value, .canonical)
            let sorted = mustRead(canonical, "canonical")
            precondition(write(sorted, .canonical) == canonical, "canonical output is not stable")
            precondition(write(sorted, .compact) == canonical, "canonical output is not in canonical order")

            // transfer(to:) streams the document token by token: the same bytes as the built value.
            let sink = MemoryByteSink()
            let writer = JSONWriter(sink: sink, options: .compact)
            let reader = JSONReader(source: MemoryByteSource(bytes, chunkSize: 3), options: .init(bufferSize: 64))
            do {
                try reader.transfer(to: writer)
                try writer.flush()
            } catch {
                preconditionFailure("transfer failed on a valid document: \(error)")
            }
            precondition(sink.bytes == compact, "transfer wrote other bytes than the value")
        }
    }
}
