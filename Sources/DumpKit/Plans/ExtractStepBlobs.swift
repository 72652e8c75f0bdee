/// Runs a plan's `extract-blobs` step inside `dumpkit migrate`: `ExtractBlobs` on the migrated records
/// the step matches (its patterns and `where`), every other record passing through. The name template
/// sees the record's last key as `{key}` besides the pattern's captures.
struct ExtractStepBlobs: RecordTransformer {
    let extraction: BlobExtraction
    let extractor: ExtractBlobs

    var name: String { "\(extraction.plan): \(extraction.step.label)" }

    /// The extractor for `extraction` with `options` (from `options(_:bucket:)`), writing to `store` (`nil`: a dry run).
    init(_ extraction: BlobExtraction, options: ExtractBlobs.Options, store: BlobStore?, report: BlobExtractionReport) throws {
        self.extraction = extraction
        extractor = try ExtractBlobs(store: store, options: options, report: report)
    }

    func transform(_ record: Record) throws -> [Record] {
        guard var captures = try extraction.step.match(path: record.path, value: record.value) else { return [record] }
        captures["key"] = record.path.last ?? ""
        var named = record
        named.captures = captures
        return try extractor.transform(named)
    }

    /// The step's options as `ExtractBlobs` takes them, checked: its fields below its patterns, one
    /// record at a time (the plan runner before it is not built for concurrent records).
    static func options(_ extraction: BlobExtraction, bucket: String?) throws -> ExtractBlobs.Options {
        let step = extraction.options
        var options = ExtractBlobs.Options()
        options.match = extraction.step.patterns.flatMap { pattern in
            step.fields.isEmpty ? [pattern] : step.fields.map { pattern.appending($0.segments) }
        }
        options.dataURIsOnly = step.match == .dataURI
        options.minimumBytes = max(1, step.minBytes)
        options.naming = try BlobNameTemplate(step.nameTemplate)
        switch step.refStyle {
        case .object: options.referenceStyle = .object
        case .saladaFile: options.referenceStyle = .salada
        case .name: options.referenceStyle = .path
        }
        options.bucket = bucket
        options.concurrency = 1
        do {
            try ExtractBlobs.check(options)
        } catch {
            throw UsageError("\(extraction.plan) \(extraction.step.label): \(error.description)")
        }
        return options
    }
}
