import JSONStream

extension CheckBlobsJob {
    /// Runs shard `spec` of this check from the index at `indexPath`: reads the shard's whole range
    /// as the dump reads there (`ShardUnitSource` as one document, lines and columns shifted to the
    /// dump's, as `validate` shards do), checks its references against the store, and writes
    /// `output.part-I-of-N`: a first line `{"report": {source, store, style}}`, the findings in order
    /// (`{"finding": ..., "object": NAME}` where the finding is an object's metadata), and a last line
    /// `{"shard": {references, decided, existing}}`: the objects whose metadata finding the shard
    /// decided and the referenced objects the store holds. `merge` keeps an object's metadata
    /// finding only from the first shard that decided it and reports orphans from one listing of
    /// the store against every shard's objects: the unsharded report.
    public func runShard(_ spec: ShardSpec, indexPath: String, output: String, progress: ProgressMeter? = nil) throws -> ShardManifest {
        try ShardRun.checkFiles(input: input, output: output)
        let opened = try openStore(store, false)
        let run = try ShardRun(spec, indexPath: indexPath, input: input, output: output, writerOptions: .init(), wholeRange: true)
        do {
            let source = run.source
            let checker = BlobReferenceChecker(store: opened, style: referenceStyle)
            checker.keepsNames = true
            var decided: [String] = []
            checker.onMetadataDecided = { decided.append($0) }
            try line(
                ["report": .object(["source": .string(input), "store": .string(store), "style": .string(referenceStyle.rawValue)])], run)
            var findings = 0
            if !source.isEmpty {
                let reader = CandidateReader(
                    source: source, patterns: match, selection: BlobReference.candidates(style: referenceStyle), sourceName: input)
                reader.locatesCandidates = true
                while let candidate = try reader.next(passThrough: nil) {
                    // A metadata finding follows the decision on its object at once.
                    var emitted: [(Finding, object: String?)] = []
                    try checker.check(candidate.record, locate: reader.takeLocation) {
                        emitted.append(($0, $0.rule == "blobs:metadata" ? decided.last : nil))
                    }
                    for (finding, object) in emitted {
                        var f = finding
                        if let line = f.line {
                            if line == 1, let column = f.column { f.column = column + source.firstLineColumnShift }
                            f.line = line + source.lineShift
                        }
                        var o: JSONObject = ["finding": FindingsPart.json(f)]
                        if let object { o["object"] = .string(object) }
                        try line(o, run)
                        findings += 1
                    }
                    progress?.recordDone()
                }
            }
            try line(
                [
                    "shard": .object([
                        "references": .number(JSONNumber(checker.referencesChecked)), "decided": .array(decided.map { .string($0) }),
                        "existing": .array(checker.existingNames.map { .string($0) }),
                    ])
                ], run)
            let written = try run.commit(tree: false)
            progress?.finish()
            var manifest = run.manifest(
                command: "check-blobs",
                options: "store=\(store) ref-style=\(referenceStyle.rawValue) match=\(match.map(\.text).joined(separator: ","))",
                written: written, units: source.unitsRead)
            manifest.counts = ["references": checker.referencesChecked, "findings": findings]
            try manifest.write(output: output)
            return manifest
        } catch {
            run.abort()
            progress?.finish()
            throw error
        }
    }

    private func line(_ o: JSONObject, _ run: ShardRun) throws {
        try run.writer.value(.object(o))
        try run.writer.raw("\n")
    }

    /// The findings and reference count of the unsharded check, from the parts of a sharded one in
    /// order: each object's metadata finding from the first shard that decided it, then the orphans
    /// of one listing of the store (opened with `openStore`) against every shard's objects.
    static func merge(parts: [String], openStore: BlobStoreOpener) throws -> (source: String, findings: [Finding], references: Int) {
        var source: String?
        var store: String?
        var findings: [Finding] = []
        var references = 0
        var decided = Set<String>()
        var existing = Set<String>()
        for path in parts {
            func bad(_ why: String) -> ShardError { ShardError(message: "\(path): not a check-blobs part (\(why)); run that shard again") }
            let reader = JSONReader(source: try InputFile(path: path), options: .init(multipleDocuments: true), sourceName: path)
            guard try reader.peek() != .end, let header = try reader.readValue().objectValue?["report"]?.objectValue,
                let partSource = header["source"]?.stringValue, let partStore = header["store"]?.stringValue
            else { throw bad("its first line is not a report's") }
            source = source ?? partSource
            store = store ?? partStore
            var last: JSONObject?
            while try reader.peek() != .end {
                guard last == nil, let o = try reader.readValue().objectValue else { throw bad("a line after the last") }
                if let f = o["finding"] {
                    guard let f = FindingsPart.finding(f) else { throw bad("a finding without its fields") }
                    if let object = o["object"]?.stringValue, decided.contains(object) { continue }
                    findings.append(f)
                } else if let shard = o["shard"]?.objectValue {
                    last = shard
                } else {
                    throw bad("an unknown line")
                }
            }
            guard let last, let n = last["references"]?.numberValue?.int64Value, let d = last["decided"]?.arrayValue,
                let e = last["existing"]?.arrayValue
            else { throw bad("its last line is missing") }
            references += Int(n)
            decided.formUnion(d.compactMap(\.stringValue))
            existing.formUnion(e.compactMap(\.stringValue))
        }
        guard let source, let store else { throw ShardError(message: "no check-blobs parts to merge") }
        var orphans: [String] = []
        try openStore(store, false).list { if !existing.contains($0) { orphans.append($0) } }
        findings += orphans.sorted().map(BlobReferenceChecker.orphan)
        return (source, findings, references)
    }
}
