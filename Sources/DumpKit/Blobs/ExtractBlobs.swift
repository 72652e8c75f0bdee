import Foundation
import JSONStream
import Synchronization

/// Moves files embedded in strings (base64 data URIs, bare base64 of a known type) into a blob
/// store and replaces each string by a reference (`extract-blobs`).
///
/// Every string of a record is looked at (`Options.match` narrows that to paths). Decoding, hashing
/// and writing happen in `transform(batch:)`, which the pipeline runs for up to `maxConcurrency`
/// batches of records at once; the references are the same whatever the order the work finishes in.
public final class ExtractBlobs: RecordTransformer, UnitTransformer {
    /// How to find, name and refer to the files.
    public struct Options: Sendable {
        /// Only strings whose path matches one of these patterns, or lies below a path that does
        /// (none: every string).
        public var match: [PathPattern] = []
        /// Files smaller than this (decoded) stay in the dump.
        public var minimumBytes = 1024
        /// Only `data:` URIs; bare base64 stays in the dump, whatever its bytes.
        public var dataURIsOnly = false
        /// How objects are named.
        public var naming: BlobNameTemplate = .pathBased
        public var referenceStyle: BlobReferenceStyle = .object
        /// The bucket of download URLs (required by the Salada and URL styles).
        public var bucket: String?
        /// How many records to work on at once.
        public var concurrency = ProcessInfo.processInfo.activeProcessorCount
        /// Replace objects the store holds with other bytes (`--replace`); without it they are refused.
        public var replace = false

        public init() {}
    }

    public let name = "extract-blobs"
    public let options: Options
    /// Where objects go; `nil` for a dry run, which decodes, hashes and counts but writes nothing.
    public let store: BlobStore?
    /// What the extraction has found and done so far.
    public let report: BlobExtractionReport
    /// Whether an object the store holds with other bytes is counted in the report's conflicts and
    /// the run goes on (the caller must then fail), rather than stopping the run.
    public let listsConflicts: Bool
    private let claims = NameClaims()

    public var maxConcurrency: Int { max(1, options.concurrency) }

    /// What a `CandidateReader` should hand this step: strings long enough to hold a file, with the
    /// files in them decoded by the reader (`BlobCandidate.files`).
    public var candidates: CandidateReader.Selection {
        let minimumLength = EmbeddedFile.minimumEncodedLength(options.minimumBytes)
        return CandidateReader.Selection(
            string: { $0.count >= minimumLength },
            files: .init(minimumBytes: options.minimumBytes, dataURIsOnly: options.dataURIsOnly))
    }

    /// Checks the options (see `check`); a `nil` store makes a dry run. With `listsConflicts`, objects
    /// that exist with other bytes are gathered in `report` (`BlobExistsError` otherwise stops the run).
    public init(
        store: BlobStore?, options: Options = Options(), report: BlobExtractionReport = BlobExtractionReport(),
        listsConflicts: Bool = false
    ) throws(UsageError) {
        try Self.check(options)
        self.store = store
        self.options = options
        self.report = report
        self.listsConflicts = listsConflicts
    }

    /// Fails when options do not fit together: a URL style without a bucket, a minimum below 1.
    /// (Captures a name template uses may come from the record's pattern, so they are checked
    /// when a file is named.)
    public static func check(_ options: Options) throws(UsageError) {
        if options.referenceStyle.needsBucket && (options.bucket ?? "").isEmpty {
            throw UsageError("--ref-style \(options.referenceStyle.rawValue) needs --bucket (the bucket of the download URLs)")
        }
        if options.minimumBytes < 1 { throw UsageError("--min-bytes must be at least 1") }
    }

    public func transform(_ record: Record) throws -> [Record] {
        do {
            return try transform(batch: [record])[0]
        } catch let e as BatchRecordError {
            throw e.underlying
        }
    }

    public func transform(batch records: [Record]) throws -> [[Record]] {
        try transform(records, files: nil)
    }

    /// Takes the files a `CandidateReader` decoded (`candidates`) where they stand, and scans the
    /// candidates' other strings.
    public func transform(units: [BlobCandidate]) throws -> [[Record]] {
        try transform(units.map(\.record), files: units.map(\.files))
    }

    /// Decodes the files embedded in every record first (or takes those `files` holds, by record,
    /// at their `null`s), hashes them all together (their MD5s side by side,
    /// `ContentDigest.digests(of:)`) and names them, then stores them and rewrites the records in
    /// order. Every name of the batch is checked (`BlobObjectName`) before any of its objects is
    /// written, so a name the store would refuse stops the run with nothing of its record, or of
    /// the records after it in the batch, written.
    private func transform(_ records: [Record], files decoded: [[[String]: EmbeddedFile]]?) throws -> [[Record]] {
        // What each string the extraction looks at holds, in visiting order, record by record, and
        // where each file was found (its record, path and captures).
        var scans: [[EmbeddedFile.Scan]] = []
        scans.reserveCapacity(records.count)
        var sites: [(record: Int, path: [String], captures: [String: String])] = []
        for (index, record) in records.enumerated() {
            var found: [EmbeddedFile.Scan] = []
            if let value = record.value {
                var path = record.path
                let files = decoded?[index] ?? [:]
                _ = try rewrite(value, path: &path, captures: initialCaptures(record), files: files) { leaf, path, captures in
                    let scan: EmbeddedFile.Scan
                    switch leaf {
                    case .file(let file): scan = .file(file)
                    case .text(var s):
                        scan = s.withUTF8 {
                            EmbeddedFile.scan(
                                UnsafeRawBufferPointer($0), minimumBytes: options.minimumBytes, dataURIsOnly: options.dataURIsOnly)
                        }
                    }
                    if case .file = scan { sites.append((index, path, captures)) }
                    found.append(scan)
                    return nil
                }
            }
            scans.append(found)
        }
        let found = scans.joined().compactMap { scan -> EmbeddedFile? in
            if case .file(let f) = scan { return f }
            return nil
        }
        let digests = ContentDigest.digests(of: found.map(\.bytes))
        var names: [String] = []
        names.reserveCapacity(found.count)
        for (file, (site, digest)) in zip(found, zip(sites, digests)) {
            let record = records[site.record]
            do {
                let name = try options.naming.render(
                    path: site.path, recordPath: record.path,
                    captures: record.captures.merging(site.captures) { _, new in new },
                    fileExtension: file.fileExtension, sha256: digest.sha256)
                try BlobObjectName.validate(name)
                names.append(name)
            } catch {
                throw BatchRecordError(index: site.record, underlying: error)
            }
        }
        var nextDigest = 0
        var results: [[Record]] = []
        results.reserveCapacity(records.count)
        for (index, record) in records.enumerated() {
            guard let value = record.value else {
                results.append([record])
                continue
            }
            var scan = scans[index].makeIterator()
            var path = record.path
            do {
                let replaced = try rewrite(value, path: &path, captures: initialCaptures(record), files: decoded?[index] ?? [:]) {
                    _, path, _ in
                    switch scan.next()! {
                    case .none: return nil
                    case .skipped(let reason):
                        report.skipped(reason, pointer: JSONPointer.string(path))
                        return nil
                    case .file(let file):
                        defer { nextDigest += 1 }
                        return try extract(file, digest: digests[nextDigest], name: names[nextDigest], path: path)
                    }
                }
                guard let replaced else {
                    results.append([record])
                    continue
                }
                var out = record
                out.value = replaced
                results.append([out])
            } catch {
                throw BatchRecordError(index: index, underlying: error)
            }
        }
        return results
    }

    /// The captures a record starts with: none needed without `match`, else those of the pattern
    /// its path lies in (`nil` when above every pattern).
    private func initialCaptures(_ record: Record) -> [String: String]? {
        options.match.isEmpty ? [:] : Self.captures(options.match, record.path)
    }

    /// What `rewrite` visits: a string, or a file a reader decoded.
    private enum Leaf {
        case text(String)
        case file(EmbeddedFile)
    }

    /// The value with the leaves `visit` replaces, or `nil` when nothing changed. `visit` sees the
    /// strings inside the `match` patterns, and the `null`s where `files` has a file, in document
    /// order, with their path and captures; `captures` is non-nil once the path is inside a pattern.
    private func rewrite(
        _ value: JSONValue, path: inout [String], captures: [String: String]?, files: [[String]: EmbeddedFile],
        visit: (Leaf, [String], [String: String]) throws -> JSONValue?
    ) throws -> JSONValue? {
        func child(_ key: String, _ v: JSONValue) throws -> JSONValue? {
            path.append(key)
            defer { path.removeLast() }
            let inner = captures ?? Self.captures(options.match, path)
            if inner == nil && !options.match.contains(where: { $0.isPrefix(path) }) { return nil }
            return try rewrite(v, path: &path, captures: inner, files: files, visit: visit)
        }
        switch value {
        case .string(let s):
            guard let captures else { return nil }
            return try visit(.text(s), path, captures)
        case .null:
            guard let captures, !files.isEmpty, let file = files[path] else { return nil }
            return try visit(.file(file), path, captures)
        default:
            return try value.rewritingChildren(child)
        }
    }

    /// The captures of the first pattern matching `path` or one of its ancestors.
    static func captures(_ patterns: [PathPattern], _ path: [String]) -> [String: String]? {
        for p in patterns where p.depth <= path.count {
            if let c = p.match(Array(path.prefix(p.depth))) { return c }
        }
        return nil
    }

    /// Stores one decoded file under `name` (checked) and returns the reference that replaces its string.
    private func extract(_ file: EmbeddedFile, digest: ContentDigest, name: String, path: [String]) throws -> JSONValue {
        let token = DownloadToken.derive(sha256: digest.sha256, name: name)
        let metadata = digest.metadata(name: name, contentType: file.contentType, customMetadata: ["firebaseStorageDownloadTokens": token])
        let pointer = JSONPointer.string(path)
        let first = try claims.claim(name, sha256: digest.sha256, pointer: pointer)
        var outcome: BlobPutOutcome?
        if first, let store {
            do {
                outcome = try file.bytes.withUnsafeBytes { try store.put($0, metadata: metadata, replacing: options.replace) }
            } catch let e as BlobExistsError where listsConflicts {
                report.conflict(name: e.name)
            }
        }
        report.extracted(file, digest: digest, name: name, pointer: pointer, newObject: first, outcome: outcome)
        if let declared = file.mismatchedDeclaredType {
            report.mismatch(pointer: pointer, declared: declared, detected: file.contentType)
        }
        let reference = BlobReference(
            name: name, contentType: file.contentType, size: digest.size, sha256: digest.sha256, md5: digest.md5, token: token,
            form: file.form)
        return reference.jsonValue(style: options.referenceStyle, bucket: options.bucket)
    }
}

/// Two different contents whose references would name the same object.
public struct BlobNameConflict: DataError, CustomStringConvertible, Sendable {
    public let name: String
    /// Two places whose contents differ.
    public let pointers: [String]
    public var description: String {
        "object name \(String(reflecting: name)) would hold different contents from \(pointers.joined(separator: " and ")); use a --name template that tells them apart (e.g. with {path} or {sha256})"
    }
}

/// The object names used so far in a run, with the content each holds, so that one name never
/// gets two contents and each object is written once.
private final class NameClaims: Sendable {
    private struct Claim {
        var content: DigestKey
        var pointer: String
    }

    private let claims = Mutex<[String: Claim]>([:])

    /// Whether this is the first use of `name`; throws if it was used for other content.
    func claim(_ name: String, sha256: String, pointer: String) throws -> Bool {
        let key = DigestKey(sha256: sha256)
        return try claims.withLock { claims in
            if let existing = claims[name] {
                guard existing.content == key else {
                    // Name the two places in pointer order, whichever worker got there first.
                    throw BlobNameConflict(name: name, pointers: [existing.pointer, pointer].sorted())
                }
                return false
            }
            claims[name] = Claim(content: key, pointer: pointer)
            return true
        }
    }
}
