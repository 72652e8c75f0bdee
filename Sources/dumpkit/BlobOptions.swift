import ArgumentParser
import DumpKit
import Foundation

/// Options the blob commands share: the store, the reference style and the path patterns.
struct BlobOptions: ParsableArguments {
    @Option(name: .customLong("blobs"), help: "The blob store: a directory mirroring a bucket (created if needed when writing), or a bucket: s3://BUCKET/PREFIX, gs://BUCKET/PREFIX.")
    var store: String

    @Option(name: .customLong("ref-style"), help: "References: object ({path, contentType, size, sha256, md5}), salada ({name, url, mimeType}), path (the object name) or url (the download URL).")
    var referenceStyle: BlobReferenceStyle = .object

    @Option(name: .customLong("match"), help: "Only values at or below paths matching this pattern, e.g. '/v1/todolist/{id}/image1' (repeatable; default: everywhere).")
    var match: [String] = []

    /// The `--match` patterns, parsed.
    func patterns() throws -> [PathPattern] {
        try match.map { try PathPattern($0) }
    }
}

/// `--jobs N`, checked.
func concurrency(_ jobs: Int?) throws -> Int {
    guard let jobs else { return ProcessInfo.processInfo.activeProcessorCount }
    guard jobs >= 1 else { throw UsageError("--jobs must be at least 1") }
    return jobs
}

extension BlobReferenceStyle: ExpressibleByArgument {}
