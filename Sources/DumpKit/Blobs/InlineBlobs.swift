import Crypto
import Foundation
import JSONStream
import Synchronization

/// Turns blob references back into the strings they replaced (`inline-blobs`, the rollback of
/// `extract-blobs`): each reference's object is read from the store, checked against the size and
/// SHA-256 the store and the reference record, and written back as base64 with its original header.
///
/// Salada and URL references are only inlined when their object is in the store and their download
/// token is the one `extract-blobs` derives for it, so that files which were in a bucket before
/// (with their own tokens) stay as they are; path references only when the string names an object.
/// An object reference whose object is missing, or any object that is not what was recorded, is an
/// error.
public struct InlineBlobs: RecordTransformer, UnitTransformer {
    /// Which references to inline.
    public struct Options: Sendable {
        /// Only references whose path matches one of these patterns, or lies below (none: all).
        public var match: [PathPattern] = []
        public var referenceStyle: BlobReferenceStyle = .object
        /// How many records to work on at once.
        public var concurrency = ProcessInfo.processInfo.activeProcessorCount

        public init() {}
    }

    /// Counts of what was done; safe to update from worker threads.
    public final class Tally: Sendable {
        private let counts = Mutex((inlined: 0, bytes: Int64(0), foreign: 0))
        public init() {}
        /// References turned back into strings.
        public var inlined: Int { counts.withLock { $0.inlined } }
        /// Their decoded bytes.
        public var bytes: Int64 { counts.withLock { $0.bytes } }
        /// Salada or URL references left alone: their name is not a valid object name, their object
        /// is not in the store, or their token is not the one extract-blobs made.
        public var foreign: Int { counts.withLock { $0.foreign } }
        func add(bytes: Int64) {
            counts.withLock {
                $0.inlined += 1
                $0.bytes += bytes
            }
        }
        func addForeign() { counts.withLock { $0.foreign += 1 } }
    }

    public let name = "inline-blobs"
    public let options: Options
    public let store: BlobStore
    public let tally = Tally()

    public var maxConcurrency: Int { max(1, options.concurrency) }

    public init(store: BlobStore, options: Options = Options()) {
        self.store = store
        self.options = options
    }

    public func transform(_ record: Record) throws -> [Record] {
        guard let value = record.value else { return [record] }
        var path = record.path
        let within = options.match.isEmpty || ExtractBlobs.captures(options.match, path) != nil
        guard let replaced = try rewrite(value, path: &path, within: within) else { return [record] }
        var out = record
        out.value = replaced
        return [out]
    }

    /// The candidates of a `CandidateReader` whose selection is `BlobReference.candidates(style:)`
    /// (it decodes no files, so each is its record).
    public func transform(units: [BlobCandidate]) throws -> [[Record]] {
        try transform(batch: units.map(\.record))
    }

    /// The value with its references inlined, or `nil` when nothing changed.
    private func rewrite(_ value: JSONValue, path: inout [String], within: Bool) throws -> JSONValue? {
        if within, let reference = BlobReference(value, style: options.referenceStyle) {
            return try inline(reference, pointer: JSONPointer.string(path))
        }
        func child(_ key: String, _ v: JSONValue) throws -> JSONValue? {
            path.append(key)
            defer { path.removeLast() }
            let inner = within || ExtractBlobs.captures(options.match, path) != nil
            if !inner && !options.match.contains(where: { $0.isPrefix(path) }) { return nil }
            return try rewrite(v, path: &path, within: inner)
        }
        return try value.rewritingChildren(child)
    }

    /// The original string of one reference, or `nil` for a foreign Salada/URL reference.
    private func inline(_ reference: BlobReference, pointer: String) throws -> JSONValue? {
        do {
            try BlobObjectName.validate(reference.name)
        } catch {
            // No store holds such a name (a user-written URL with `..%2F`, say): not extract-blobs's.
            guard options.referenceStyle != .object else {
                throw InlineBlobsError(pointer: pointer, name: reference.name, problem: "is not a valid object name: \(error.reason)")
            }
            tally.addForeign()
            return nil
        }
        guard let metadata = try store.metadata(reference.name) else {
            switch options.referenceStyle {
            case .object:
                throw InlineBlobsError(pointer: pointer, name: reference.name, problem: "is not in the store (\(store.description))")
            case .salada, .url: tally.addForeign()
            case .path: break  // a string that merely looks like a name
            }
            return nil
        }
        if options.referenceStyle.needsBucket && reference.token != DownloadToken.derive(sha256: metadata.sha256, name: reference.name) {
            tally.addForeign()
            return nil
        }
        let bytes = try store.get(reference.name)
        let sha256 = Hex.lowercase(SHA256.hash(data: bytes))
        let expected = (size: reference.size ?? metadata.size, sha256: reference.sha256 ?? metadata.sha256)
        guard Int64(bytes.count) == expected.size, sha256 == expected.sha256 else {
            throw InlineBlobsError(
                pointer: pointer, name: reference.name,
                problem:
                    "has \(bytes.count) bytes with SHA-256 \(sha256), but \(expected.size) bytes with SHA-256 \(expected.sha256) were recorded"
            )
        }
        tally.add(bytes: Int64(bytes.count))
        return .string(bytes.withUnsafeBytes { Base64.encode($0, after: reference.originalHeader(contentType: metadata.contentType)) })
    }
}

/// A reference that cannot be inlined: its object is missing or is not what it records.
public struct InlineBlobsError: DataError, CustomStringConvertible, Sendable {
    public let pointer: String
    public let name: String
    public let problem: String
    public var description: String { "object \(String(reflecting: name)) referenced at \(pointer) \(problem)" }
}
