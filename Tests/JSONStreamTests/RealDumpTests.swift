import Foundation
import JSONStream
import TestSupport
import XCTest

/// Public Realtime-Database exports: read, write, read again gives equal values, and the canonical
/// form is byte-stable.
final class RealDumpTests: XCTestCase {
    func testRoundTripAndCanonicalStability() throws {
        let dir = try TestData.directory("real-dumps")
        let files = try TestData.files(in: dir, withExtension: "json")
        XCTAssertEqual(files.count, 5)
        for f in files {
            let bytes = Array(try Data(contentsOf: f))
            let value = try JSONReader(source: MemoryByteSource(bytes, chunkSize: 4093)).readValue()
            for options in [JSONWriter.Options.compact, .init(pretty: true)] {
                let text = try serialize(value, options)
                XCTAssertEqual(try parse(text), value, "\(f.lastPathComponent) \(options)")
            }
            // Streaming transfer gives the same bytes as writing the materialised value.
            let sink = MemoryByteSink()
            let w = JSONWriter(sink: sink, options: .canonical)
            try JSONReader(source: MemoryByteSource(bytes)).transfer(to: w)
            try w.flush()
            let canonical = try serialize(value, .canonical)
            XCTAssertEqual(sink.string, canonical, f.lastPathComponent)
            // Stable: canonical of canonical is the same bytes, also through a spilling sort.
            XCTAssertEqual(try serialize(parse(canonical), .canonical), canonical, f.lastPathComponent)
            XCTAssertEqual(try serialize(parse(canonical), .init(sortKeys: true, sortBudget: 4096)), canonical, f.lastPathComponent)
            XCTAssertEqual(sortedDeep(try parse(canonical)), sortedDeep(value), f.lastPathComponent)
        }
    }

    private func sortedDeep(_ v: JSONValue) -> JSONValue {
        switch v {
        case .object(let o):
            return .object(JSONObject(o.sortedByDatabaseOrder().members.map { .init(key: $0.key, value: sortedDeep($0.value)) }))
        case .array(let a): return .array(a.map(sortedDeep))
        default: return v
        }
    }
}
