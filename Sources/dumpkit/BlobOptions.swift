import ArgumentParser
import DumpKit
import Foundation

/// Options the blob commands share: the store, the reference style and the path patterns.
struct BlobOptions: ParsableArguments {
    @Option(
        name: .customLong("blobs"),
        help:
            "The blob store: a directory mirroring a bucket (created if needed when writing), or a bucket: s3://BUCKET/PREFIX, gs://BUCKET/PREFIX."
    )
    var store: String

    @Option(
        name: .customLong("ref-style"),
        help:
            "References: object ({path, contentType, size, sha256, md5}), salada ({name, url, mimeType}), path (the object name) or url (the download URL)."
    )
    var referenceStyle: BlobReferenceStyle = .object

    @Option(
        name: .customLong("match"),
        help: "Only values at or below paths matching this pattern, e.g. '/v1/todolist/{id}/image1' (repeatable; default: everywhere).")
    var match: [String] = []

    /// The `--match` patterns, parsed.
    func patterns() throws -> [PathPattern] {
        try match.map { try PathPattern($0) }
    }
}

/// Workers of a blob command on a bucket when `--jobs` is not given: each spends most of its time
/// waiting for a request, so many more than the cores keep the store busy.
let bucketWorkers = 32

/// `--jobs N`, checked; without it, the number of cores, or `bucketWorkers` for a bucket `store`.
func concurrency(_ jobs: Int?, store: String? = nil) throws -> Int {
    let isBucket = store.map { $0.hasPrefix("s3://") || $0.hasPrefix("gs://") } ?? false
    return try jobsGiven(jobs, alias: nil) ?? (isBucket ? bucketWorkers : ProcessInfo.processInfo.activeProcessorCount)
}

extension BlobReferenceStyle: ExpressibleByArgument {}
