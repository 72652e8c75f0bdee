import CloudHTTP
import DumpKit
import NIOCore

/// A bucket (S3-compatible or Cloud Storage, through its `ObjectStoreClient`) as the source of
/// `archive` and `backup`: the DumpKit `ArchiveObjectSource` over HTTP.
///
/// - `list` reads the listing a page (1,000 objects) at a time, with page tokens.
/// - `describe` completes what an S3 listing lacks (content type, cache control, content
///   disposition/encoding/language, custom metadata, DumpKit's hash record) with a HEAD per object,
///   `jobs` at once; a Cloud Storage listing has it all.
/// - `read` gets an object, or a range of it, `jobs` reads at once, only of the version listed: S3 sends
///   `If-Match` with the listed ETag, Cloud Storage asks for the listed `generation`; the ETag or
///   generation, the whole size and the byte count of the answer are checked as well. A difference,
///   a 412, or a 404 (gone) is an `ArchiveSourceChange`.
///
/// The hashes it vouches for, which the archive checks the bytes against: Cloud Storage's `md5Hash`
/// and `crc32c` (the store computes them) and DumpKit's SHA-256 record; on S3 DumpKit's records only
/// (an ETag is not always an MD5: multipart uploads, KMS encryption).
public final class BucketArchiveSource: ArchiveObjectSource {
    public let client: any ObjectStoreClient
    /// Requests (HEADs, reads) in flight at once.
    public let jobs: Int
    private let slots: ByteBudget

    public init(client: any ObjectStoreClient, jobs: Int = 32) {
        self.client = client
        self.jobs = max(1, jobs)
        slots = ByteBudget(total: max(1, jobs))
    }

    public var location: String { client.url.description }

    public func list(_ body: (ArchiveSourceObject) throws -> Void) throws {
        let described = client.listsMetadata
        try client.eachObject { stored, name in try body(Self.object(stored, name: name, described: described)) }
    }

    public func describe(_ objects: [ArchiveSourceObject], progress: @escaping @Sendable () -> Void) throws
        -> [Result<ArchiveSourceObject, ArchiveSourceChange>]
    {
        guard objects.contains(where: { !$0.described }) else { return objects.map { .success($0) } }
        let client = self.client, jobs = self.jobs
        return try runBlocking {
            try await withThrowingTaskGroup(of: (Int, Result<ArchiveSourceObject, ArchiveSourceChange>).self) { group in
                var results = [Result<ArchiveSourceObject, ArchiveSourceChange>?](repeating: nil, count: objects.count)
                var next = 0
                func start(_ index: Int) {
                    let object = objects[index]
                    group.addTask { (index, try await Self.describe(object, client: client)) }
                }
                while next < min(jobs, objects.count) {
                    start(next)
                    next += 1
                }
                while let (index, result) = try await group.next() {
                    results[index] = result
                    progress()
                    if next < objects.count {
                        start(next)
                        next += 1
                    }
                }
                return results.map { $0! }
            }
        }
    }

    public func read(_ object: ArchiveSourceObject, range: Range<Int64>?) -> ArchiveSourceRead {
        let read = ArchiveSourceRead()
        let client = self.client, slots = self.slots
        Task {
            do {
                let bytes = try await slots.holding(1) { try await Self.fetch(object, range: range, client: client) }
                read.complete(.success(bytes))
            } catch {
                read.complete(.failure(error))
            }
        }
        return read
    }

    // MARK: -

    /// What the store calls a version in messages.
    private static func versionName(_ client: any ObjectStoreClient) -> String {
        client.url.scheme == .s3 ? "ETag" : "generation"
    }

    /// The object a listing or a HEAD describes, with the hashes the store vouches for.
    static func object(_ stored: StoredObject, name: String, described: Bool) -> ArchiveSourceObject {
        // On S3, `md5` may come from the ETag, which is an MD5 only for some uploads: taken when
        // DumpKit's record is there (it writes all three).
        let recorded = stored.generation == nil ? stored.sha256 != nil && stored.crc32c != nil : true
        return ArchiveSourceObject(
            name: name, size: stored.size, version: stored.generation ?? stored.etag, updated: stored.updated, described: described,
            contentType: stored.contentType, cacheControl: stored.cacheControl, contentDisposition: stored.contentDisposition,
            contentEncoding: stored.contentEncoding, contentLanguage: stored.contentLanguage, customMetadata: stored.customMetadata,
            sha256: stored.sha256, md5: recorded ? stored.md5 : nil, crc32c: stored.crc32c)
    }

    /// The object with its metadata from a HEAD, or the change found: gone, another version or size.
    private static func describe(_ object: ArchiveSourceObject, client: any ObjectStoreClient) async throws
        -> Result<ArchiveSourceObject, ArchiveSourceChange>
    {
        guard !object.described else { return .success(object) }
        let location = client.url.description
        guard let stored = try await client.head(key: client.url.key(object.name)) else {
            return .failure(ArchiveSourceChange(location: location, name: object.name, reason: "deleted after it was listed"))
        }
        let version = stored.generation ?? stored.etag
        if version != object.version || stored.size != object.size {
            let label = versionName(client)
            return .failure(
                ArchiveSourceChange(
                    location: location, name: object.name,
                    reason:
                        "\(label) \(quoted(object.version)) and \(object.size) bytes when listed, \(label) \(quoted(version)) and \(stored.size) bytes when described"
                ))
        }
        var described = Self.object(stored, name: object.name, described: true)
        // The listing's time: to the millisecond, where a HEAD's Last-Modified has whole seconds.
        described.updated = object.updated ?? stored.updated
        return .success(described)
    }

    /// Reads `range` of the version of `object` listed; a change is an `ArchiveSourceChange`.
    private static func fetch(_ object: ArchiveSourceObject, range: Range<Int64>?, client: any ObjectStoreClient) async throws -> [UInt8] {
        let label = versionName(client)
        func change(_ reason: String) -> ArchiveSourceChange {
            ArchiveSourceChange(location: client.url.description, name: object.name, reason: reason)
        }
        let answer: ObjectRead
        do {
            answer = try await client.read(key: client.url.key(object.name), range: range, version: object.version)
        } catch let e as ObjectStoreError where (e.status == 404 && e.code != "NoSuchBucket") || e.status == 412 || e.status == 416 {
            throw change(
                e.status == 404
                    ? "deleted or replaced after it was listed: no object of \(label) \(quoted(object.version))"
                    : "replaced after it was listed: \(e.code ?? "HTTP \(e.status!)") for \(label) \(quoted(object.version))")
        }
        if let listed = object.version, let read = answer.version, read != listed {
            throw change("\(label) \(quoted(listed)) when listed, \(quoted(read)) when read")
        }
        if let size = answer.size, size != object.size {
            throw change("\(object.size) bytes when listed, \(size) when read")
        }
        let expected = range.map { Int($0.count) } ?? Int(object.size)
        guard answer.body.readableBytes == expected else {
            throw change("\(answer.body.readableBytes) bytes read where \(expected) were asked for")
        }
        return Array(answer.body.readableBytesView)
    }

    private static func quoted(_ version: String?) -> String {
        version.map { "\"\($0)\"" } ?? "(none)"
    }
}

extension ObjectStoreOptions {
    /// The source an `archive` or `backup` bucket location names: a bucket for an `s3://` or `gs://`
    /// URL, reading `jobs` objects at once; `nil` for a directory.
    public func archiveSource(_ location: String, jobs: Int) throws -> (any ArchiveObjectSource)? {
        guard let url = try ObjectStoreURL(location) else { return nil }
        return BucketArchiveSource(client: try client(for: url), jobs: jobs)
    }

    /// `archiveSource` as `ArchiveJob.openBucket` takes it.
    public func archiveSourceOpener(jobs: Int) -> ArchiveSourceOpener {
        let options = self
        return { location in try options.archiveSource(location, jobs: jobs) }
    }
}
