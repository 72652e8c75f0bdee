import ArgumentParser
import DumpKit
import Foundation

/// Options the blob commands share: the store, the reference style and the path patterns.
struct BlobOptions: ParsableArguments {
    @Option(name: .customLong("blobs"), help: "The blob store: a directory mirroring a bucket (created if needed when writing).")
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

/// `--jobs N`, checked; the number of cores when not given.
func concurrency(_ jobs: Int?) throws -> Int {
    try jobsGiven(jobs, alias: nil) ?? ProcessInfo.processInfo.activeProcessorCount
}

extension BlobReferenceStyle: ExpressibleByArgument {}
