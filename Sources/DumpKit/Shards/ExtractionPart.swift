import ArchiveKit
import JSONStream

/// What an `extract-blobs` shard found beside its output part, in `OUT.part-I-of-N.objects`: a first
/// line `{"report": {...}}` (the shard's `BlobExtractionReport` as `--report` writes it), then one
/// line per object the shard named first, sorted by name: `[name, sha256, size, outcome, pointer]`.
///
/// Counts of strings, types, skipped strings and mismatches add up over shards (their samples are the
/// first in pointer order, so the first of all shards' samples are the unsharded ones). What is
/// counted per object (distinct objects, what the store did, duplicate contents) is decided at merge
/// from the objects of all shards, each counted once, as the unsharded run counts it; one name with
/// two contents in two shards is the `BlobNameConflict` the unsharded run stops with.
enum ExtractionPart {
    /// `OUT.part-I-of-N.objects`.
    static func path(output: String, shard: Int, of shards: Int) -> String {
        ShardManifest.partPath(output: output, shard: shard, of: shards) + ".objects"
    }

    /// Writes the shard's report and objects atomically; returns the file's CRC-32C for the manifest.
    static func write(_ report: BlobExtractionReport, to path: String) throws -> UInt32 {
        let file = try OutputFile(path: path, compression: CompressionFilter.none)
        do {
            let checksum = CRC32CByteSink(file)
            let w = JSONWriter(sink: checksum, options: .compact)
            try w.value(.object(["report": report.jsonValue]))
            try w.raw("\n")
            for o in report.namedObjects.sorted(by: { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }) {
                try w.value(
                    .array([
                        .string(o.name), .string(o.sha256), .number(JSONNumber(o.size)),
                        o.outcome.map { .string(outcomeName($0)) } ?? .null,
                        .string(o.pointer),
                    ]))
                try w.raw("\n")
            }
            try w.flush()
            try file.commit()
            return checksum.value
        } catch {
            file.abort()
            throw error
        }
    }

    /// The report the unsharded run makes, from the shards' files in order (checked against the
    /// CRC-32C their manifests record).
    static func merge(_ paths: [String], crc32c: [UInt32?], sampleLimit: Int = 100) throws -> BlobExtractionReport {
        var totals = BlobExtractionReport.Totals()
        var objects: [String: BlobExtractionReport.NamedObject] = [:]
        for (path, expected) in zip(paths, crc32c) {
            func bad(_ why: String) -> ShardError { ShardError(message: "\(path): \(why); run that shard again") }
            let input: InputFile
            do { input = try InputFile(path: path) } catch { throw bad("missing") }
            guard try MergeJob.checksum(path).crc32c == expected else { throw bad("not the file its manifest describes") }
            let reader = JSONReader(source: input, options: .init(multipleDocuments: true), sourceName: path)
            guard try reader.peek() != .end, let report = try reader.readValue().objectValue?["report"]?.objectValue else {
                throw bad("no report line")
            }
            try add(report, to: &totals, limit: sampleLimit, bad: bad)
            while try reader.peek() != .end {
                guard let a = try reader.readValue().arrayValue, a.count == 5, let name = a[0].stringValue, let sha256 = a[1].stringValue,
                    let size = a[2].numberValue?.int64Value, let pointer = a[4].stringValue
                else { throw bad("an object line is not [name, sha256, size, outcome, pointer]") }
                let outcome = a[3].stringValue.flatMap(parseOutcome)
                let object = BlobExtractionReport.NamedObject(name: name, sha256: sha256, size: size, outcome: outcome, pointer: pointer)
                guard var known = objects[name] else {
                    objects[name] = object
                    continue
                }
                guard known.sha256 == sha256 else { throw BlobNameConflict(name: name, pointers: [known.pointer, pointer].sorted()) }
                // Written by two shards: it counts once, as what the first write did to the store
                // (a replacement, else a new object, else one that was there).
                if rank(outcome) > rank(known.outcome) { known.outcome = outcome }
                objects[name] = known
            }
        }
        var contents: [String: Int64] = [:]
        totals.objects = .init()
        for o in objects.values {
            totals.objects.count += 1
            totals.objects.bytes += o.size
            contents[o.sha256] = o.size
            switch o.outcome {
            case .stored?:
                totals.stored.count += 1
                totals.stored.bytes += o.size
            case .unchanged?:
                totals.unchanged.count += 1
                totals.unchanged.bytes += o.size
            case .replaced?:
                totals.replaced.count += 1
                totals.replaced.bytes += o.size
                BlobExtractionReport.keep(o.name, in: &totals.replacedNames, limit: sampleLimit)
            case nil: break
            }
        }
        totals.duplicates = .init(
            count: totals.extracted.count - contents.count, bytes: totals.extracted.bytes - contents.values.reduce(0, +))
        return BlobExtractionReport(totals: totals, sampleLimit: sampleLimit)
    }

    /// Adds what sums over shards: strings, types, skipped strings and mismatches with their samples.
    private static func add(
        _ r: JSONObject, to t: inout BlobExtractionReport.Totals, limit: Int, bad: (String) -> ShardError
    ) throws {
        func int(_ v: JSONValue?) throws -> Int64 {
            guard let n = v?.numberValue?.int64Value else { throw bad("a count of the report is missing") }
            return n
        }
        let extracted = r["extracted"]?.objectValue
        t.extracted.count += Int(try int(extracted?["count"]))
        t.extracted.bytes += try int(extracted?["bytes"])
        t.encodedBytes += try int(extracted?["encodedBytes"])
        for member in r["types"]?.objectValue ?? JSONObject() {
            t.types[member.key, default: .init()].count += Int(try int(member.value.objectValue?["count"]))
            t.types[member.key, default: .init()].bytes += try int(member.value.objectValue?["bytes"])
        }
        for reason in EmbeddedFile.Skip.allCases {
            let skipped = r["skipped"]?.objectValue?[reason.rawValue]?.objectValue
            let count = Int(try int(skipped?["count"]))
            guard count > 0 else { continue }
            t.skipped[reason, default: 0] += count
            for p in skipped?["pointers"]?.arrayValue ?? [] {
                guard let p = p.stringValue else { throw bad("a skipped string's pointer is not a string") }
                BlobExtractionReport.keep(p, in: &t.skippedSamples[reason, default: []], limit: limit)
            }
        }
        let mismatches = r["mimeMismatches"]?.objectValue
        t.mismatches += Int(try int(mismatches?["count"]))
        for s in mismatches?["samples"]?.arrayValue ?? [] {
            guard let o = s.objectValue, let pointer = o["pointer"]?.stringValue, let declared = o["declared"]?.stringValue,
                let detected = o["detected"]?.stringValue
            else { throw bad("a type mismatch sample is not {pointer, declared, detected}") }
            BlobExtractionReport.keep(
                BlobExtractionReport.Mismatch(pointer: pointer, declared: declared, detected: detected), in: &t.mismatchSamples,
                limit: limit)
        }
    }

    private static func outcomeName(_ o: BlobPutOutcome) -> String {
        switch o {
        case .stored: "stored"
        case .replaced: "replaced"
        case .unchanged: "unchanged"
        }
    }

    private static func parseOutcome(_ s: String) -> BlobPutOutcome? {
        switch s {
        case "stored": .stored
        case "replaced": .replaced
        case "unchanged": .unchanged
        default: nil
        }
    }

    private static func rank(_ o: BlobPutOutcome?) -> Int {
        switch o {
        case .replaced?: 3
        case .stored?: 2
        case .unchanged?: 1
        case nil: 0
        }
    }

}
