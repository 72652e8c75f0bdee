import CloudHTTP
import DumpKit
import Foundation
import NIOCore

#if canImport(Glibc)
    import Glibc
#endif

/// The parts of sharded runs in buckets, for `merge` (DumpKit's `BucketPartStore`): listed page by
/// page, checked by their descriptions, and joined in the store: on S3 as a multipart upload whose
/// parts are `UploadPartCopy`s of the shards' parts (`S3PartCopyJoin`), on Cloud Storage by
/// `compose` (`ComposeJoin`). Parts in another bucket than the output are joined through this
/// process in bounded memory (`StreamedJoin`).
public struct BucketShardParts: BucketPartStore {
    public let options: ObjectStoreOptions

    public init(options: ObjectStoreOptions) { self.options = options }

    /// The client, key and bucket address (`s3://BUCKET/`) of an object's location.
    private func object(_ location: String) throws -> (client: any ObjectStoreClient, key: String, base: String) {
        guard let (client, key) = try options.object(at: location) else {
            throw ObjectStoreURLError(location: location, reason: "is not an s3:// or gs:// URL")
        }
        return (client, key, "\(client.url.scheme.rawValue)://\(client.url.bucket)/")
    }

    public func eachLocation(startingWith prefix: String, _ body: (String) throws -> Void) throws {
        let (client, key, base) = try object(prefix)
        var token: String?
        repeat {
            let t = token
            let page: ListPage
            do {
                page = try runBlocking { try await client.listPage(prefix: key, token: t) }
            } catch let e as ObjectStoreError {
                // Named as listed (`s3://b/out.json.part-*`), not as the prefix the client was made for.
                throw ObjectStoreError(
                    store: prefix + "*", endpoint: e.endpoint, object: nil, status: e.status, code: e.code, message: e.message)
            }
            for o in page.objects { try body(base + o.key) }
            token = page.next
        } while token != nil
    }

    public func describe(_ location: String) throws -> StoredPart? {
        let (client, key, _) = try object(location)
        guard let o = try runBlocking({ try await client.head(key: key) }) else { return nil }
        return StoredPart(
            location: location, size: o.size, etag: client is S3Client ? o.etag : nil,
            crc32c: client is GCSClient ? o.crc32c.flatMap(Self.crc32c(base64:)) : nil, generation: o.generation)
    }

    /// The CRC-32C Cloud Storage reports (base64 of its four bytes, big-endian).
    static func crc32c(base64: String) -> UInt32? {
        guard let bytes = Data(base64Encoded: base64), bytes.count == 4 else { return nil }
        return bytes.reduce(0) { $0 << 8 | UInt32($1) }
    }

    public func join(_ pieces: [JoinPiece], into output: String) throws -> PreparedJoin {
        let (client, key, base) = try object(output)
        var target = StoredObject(key: key, size: pieces.reduce(0) { $0 + $1.size })
        target.contentType = ObjectOutput.contentType(of: key)
        let sources: [JoinSource] = try pieces.map { piece in
            switch piece {
            case .bytes(let bytes): return .bytes(bytes)
            case .stored(let part):
                let (c, k, _) = try object(part.location)
                return .object(client: c, key: k, part: part)
            }
        }
        let sameBucket =
            pieces.allSatisfy {
                guard case .stored(let part) = $0 else { return true }
                return part.location.hasPrefix(base)
            } && target.size > 0
        if sameBucket, let s3 = client as? S3Client {
            let join = S3PartCopyJoin(client: s3, key: key, object: target)
            try join.prepare(sources)
            return join
        }
        if sameBucket, let gcs = client as? GCSClient {
            let join = ComposeJoin(client: gcs, key: key, object: target)
            try join.prepare(sources)
            return join
        }
        return StreamedJoin(client: client, key: key, object: target, sources: sources)
    }
}

/// A piece of a join as the store's joins read it: a part, pinned to the version described, or bytes
/// of this process.
enum JoinSource: Sendable {
    case object(client: any ObjectStoreClient, key: String, part: StoredPart)
    case bytes([UInt8])

    var size: Int64 {
        switch self {
        case .object(_, _, let part): part.size
        case .bytes(let bytes): Int64(bytes.count)
        }
    }
}

/// Reads `length` bytes at `offset` of the pieces joined end to end, each part pinned to the version
/// described (S3's ETag, Cloud Storage's generation), so that a part replaced meanwhile fails the join
/// as a stale shard (exit 1), as a copy or compose of it does.
private func readJoined(_ sources: [JoinSource], at offset: Int64, length: Int) async throws -> ByteBuffer {
    var out = ByteBuffer()
    out.reserveCapacity(length)
    var start: Int64 = 0
    for source in sources {
        let end = start + source.size
        defer { start = end }
        let from = max(offset, start), to = min(offset + Int64(length), end)
        guard from < to else { continue }
        let (client, key, part): (any ObjectStoreClient, String, StoredPart)
        switch source {
        case .bytes(let bytes):
            out.writeBytes(bytes[Int(from - start)..<Int(to - start)])
            continue
        case .object(let c, let k, let p): (client, key, part) = (c, k, p)
        }
        let read: ObjectRead
        do {
            read = try await client.read(key: key, range: (from - start)..<(to - start), version: part.etag ?? part.generation)
        } catch let e as ObjectStoreError where e.status == 412 || e.status == 404 {
            throw ShardError(message: "\(part.location) changed after merge checked it; run that shard again")
        }
        guard read.body.readableBytes == Int(to - from) else {
            throw ObjectStoreError(
                store: client.url.description, endpoint: client.endpoint, object: key,
                message: "asked for \(to - from) bytes at \(from - start), got \(read.body.readableBytes)")
        }
        out.writeImmutableBuffer(read.body)
    }
    return out
}

/// The join of a store without copies in it, or of parts in other buckets: the parts' bytes are
/// read in ranges and sent in parts (`ObjectStoreClient.create`), all in `publish()`. Memory: the
/// parts in flight.
final class StreamedJoin: PreparedJoin {
    let client: any ObjectStoreClient
    let key: String
    let object: StoredObject
    let sources: [JoinSource]
    let copiedInStore: Int64 = 0
    private(set) var streamed: Int64 = 0

    init(client: any ObjectStoreClient, key: String, object: StoredObject, sources: [JoinSource]) {
        self.client = client
        self.key = key
        self.object = object
        self.sources = sources
    }

    func publish() throws {
        let client = client, key = key, object = object, sources = sources
        _ = try runBlocking {
            try await client.create(key: key, size: object.size, object: object, createOnly: false) { offset, length in
                try await readJoined(sources, at: offset, length: length)
            }
        }
        streamed = object.size
    }

    func abort() {}
}

/// An S3 multipart upload of the output whose parts are copies of the shards' parts, made by the
/// store (`UploadPartCopy`, each only while the part's ETag is the one checked). S3 wants every part
/// but the last to be at least 5 MiB and at most 5 GiB: a shard part under 5 MiB, and the start of
/// the part after it, are read and sent as one part of at least 5 MiB (`plan`), and a part over
/// 5 GiB is copied in ranges. Bytes of this process (`JoinPiece.bytes`: a merged archive's manifest
/// frames and end frame) are sent, never copied: with the start of the next piece when under
/// 5 MiB, else in parts of 5 to 10 MiB. Four parts go at a time (at most 40 MiB held). Completed in
/// `publish()`; aborted on any failure.
final class S3PartCopyJoin: PreparedJoin {
    let client: S3Client
    let key: String
    let object: StoredObject
    private var uploadID: String?
    private var uploaded: [UploadedPart] = []
    private(set) var copiedInStore: Int64 = 0
    private(set) var streamed: Int64 = 0

    /// A part of the upload: a range of one shard part copied by the store, or ranges of shard parts
    /// read and sent as one part.
    enum Step: Equatable {
        case copy(part: Int, range: Range<Int64>)
        case send([Segment])
    }

    struct Segment: Equatable {
        var part: Int
        var range: Range<Int64>
    }

    init(client: S3Client, key: String, object: StoredObject) {
        self.client = client
        self.key = key
        self.object = object
    }

    deinit { abort() }

    /// The upload's parts for pieces of `sizes`, in order: every part but the last is `minimum` to
    /// `maximum` bytes; a shard part of at least `minimum` (with none pending before it) is copied
    /// whole, or in equal ranges over `maximum`; smaller ones are gathered, with the start of the next
    /// piece, into sent parts of `minimum`. The pieces in `sent` are not in the store: their bytes
    /// are gathered as small parts are, and what is left of them at `minimum` or more is sent in
    /// equal parts of `minimum` to twice that.
    static func plan(
        sizes: [Int64], sent: Set<Int> = [], minimum: Int64 = S3Client.minimumPartSize, maximum: Int64 = S3Client.maximumPartSize
    ) -> [Step] {
        var steps: [Step] = []
        var pending: [Segment] = []
        var pendingBytes: Int64 = 0
        for (i, size) in sizes.enumerated() {
            var offset: Int64 = 0
            if pendingBytes > 0 || size < minimum {
                let take = min(size, minimum - pendingBytes)
                if take > 0 { pending.append(Segment(part: i, range: 0..<take)) }
                pendingBytes += take
                offset = take
                if pendingBytes >= minimum {
                    steps.append(.send(pending))
                    pending = []
                    pendingBytes = 0
                }
            }
            let rest = size - offset
            guard rest > 0 else { continue }
            if rest < minimum {
                pending.append(Segment(part: i, range: offset..<size))
                pendingBytes += rest
                continue
            }
            if sent.contains(i) {
                let count = rest / minimum
                for r in 0..<count {
                    steps.append(.send([Segment(part: i, range: (offset + rest * r / count)..<(offset + rest * (r + 1) / count))]))
                }
                continue
            }
            let count = (rest + maximum - 1) / maximum
            for r in 0..<count {
                steps.append(.copy(part: i, range: (offset + rest * r / count)..<(offset + rest * (r + 1) / count)))
            }
        }
        if !pending.isEmpty { steps.append(.send(pending)) }
        return steps
    }

    /// Plans and sends the upload's parts; `sources` are in the output's bucket.
    func prepare(_ sources: [JoinSource]) throws {
        let steps = Self.plan(
            sizes: sources.map(\.size),
            sent: Set(
                sources.indices.filter {
                    guard case .bytes = sources[$0] else { return false }
                    return true
                }))
        guard steps.count <= S3Client.maximumParts else {
            throw ObjectStoreError(
                store: client.url.description, endpoint: client.endpoint, object: key,
                message: "the parts would make \(steps.count) upload parts, more than S3's 10,000")
        }
        let client = client, key = key, object = object
        guard
            let upload = try runBlocking({ try await client.beginUpload(key: key, object: object, createOnly: false) })
                as? S3Client.MultipartUpload
        else {
            throw ObjectStoreError(store: client.url.description, endpoint: client.endpoint, object: key, message: "no multipart upload")
        }
        uploadID = upload.uploadID
        do {
            uploaded = try runBlocking {
                try await withThrowingTaskGroup(of: UploadedPart.self) { group in
                    var done: [UploadedPart] = []
                    for (index, step) in steps.enumerated() {
                        if index >= client.partsInFlight, let part = try await group.next() { done.append(part) }
                        group.addTask {
                            switch step {
                            case .copy(let i, let range):
                                guard case .object(_, let sourceKey, let part) = sources[i] else {
                                    preconditionFailure("bytes of this process are sent, not copied")
                                }
                                do {
                                    return try await client.copyPart(
                                        key: key, uploadID: upload.uploadID, number: index + 1, sourceKey: sourceKey, range: range,
                                        etag: part.etag)
                                } catch let e as ObjectStoreError where e.status == 412 {
                                    throw ShardError(message: "\(part.location) changed after merge checked it; run that shard again")
                                }
                            case .send(let segments):
                                var body = ByteBuffer()
                                for s in segments {
                                    var bytes = try await readJoined([sources[s.part]], at: s.range.lowerBound, length: s.range.count)
                                    body.writeBuffer(&bytes)
                                }
                                return try await client.uploadPart(key: key, uploadID: upload.uploadID, number: index + 1, body: body)
                            }
                        }
                    }
                    while let part = try await group.next() { done.append(part) }
                    return done
                }
            }
        } catch {
            abort()
            throw error
        }
        for step in steps {
            switch step {
            case .copy(_, let range): copiedInStore += Int64(range.count)
            case .send(let segments): streamed += segments.reduce(0) { $0 + Int64($1.range.count) }
            }
        }
    }

    func publish() throws {
        guard let uploadID else { return }
        let upload = S3Client.MultipartUpload(client: client, key: key, uploadID: uploadID, createOnly: false)
        let parts = uploaded, size = object.size
        do {
            _ = try runBlocking { try await upload.complete(parts, last: ByteBuffer(), size: size) }
        } catch {
            abort()
            throw error
        }
        self.uploadID = nil
    }

    func abort() {
        guard let uploadID else { return }
        self.uploadID = nil
        let client = client, key = key
        try? runBlocking { try await client.abort(key: key, uploadID: uploadID) }
    }
}

/// A Cloud Storage `compose` of the shards' parts (each only at the generation checked) into the
/// output. Bytes of this process (a merged archive's manifest and end frames) are first uploaded as
/// temporary objects (`KEY.dumpkit-compose-PID-RANDOM-piece-I`). Compose takes at most 32 sources:
/// more are composed in rounds into temporary objects named for this run
/// (`KEY.dumpkit-compose-PID-RANDOM-ROUND-J`). Only this run creates and deletes its temporaries,
/// after the last compose or on failure. The last compose, into the output, is atomic.
final class ComposeJoin: PreparedJoin {
    let client: GCSClient
    let key: String
    let object: StoredObject
    private var sources: [(key: String, generation: String?)] = []
    /// The temporary objects this run made, with their generations.
    private var temporaries: [(key: String, generation: String?)] = []
    private(set) var copiedInStore: Int64 = 0
    /// The bytes of this process uploaded as temporaries.
    private(set) var streamed: Int64 = 0

    init(client: GCSClient, key: String, object: StoredObject) {
        self.client = client
        self.key = key
        self.object = object
    }

    deinit { abort() }

    /// Uploads the pieces of bytes and composes the sources (all in the output's bucket) in rounds
    /// down to the 32 of the last compose.
    func prepare(_ pieces: [JoinSource]) throws {
        let run = "\(key).dumpkit-compose-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        var round = 0
        do {
            let client = client
            for (i, piece) in pieces.enumerated() {
                switch piece {
                case .object(_, let key, let part):
                    sources.append((key, part.generation))
                case .bytes(let bytes):
                    let name = "\(run)-piece-\(i)", object = StoredObject(key: name, size: Int64(bytes.count))
                    let outcome = try runBlocking {
                        try await client.put(key: name, body: ByteBuffer(bytes: bytes), object: object, createOnly: true)
                    }
                    guard case .created = outcome else {
                        throw ObjectStoreError(
                            store: client.url.description, endpoint: client.endpoint, object: name,
                            message: "another object has this run's temporary name")
                    }
                    // Recorded before its generation is known, so that a failure from here on deletes it.
                    temporaries.append((name, nil))
                    let generation = try runBlocking { try await client.head(key: name) }?.generation
                    temporaries[temporaries.count - 1].generation = generation
                    sources.append((name, generation))
                    streamed += Int64(bytes.count)
                }
            }
            while sources.count > GCSClient.maximumComposeSources {
                var next: [(key: String, generation: String?)] = []
                for (j, start) in stride(from: 0, to: sources.count, by: GCSClient.maximumComposeSources).enumerated() {
                    let group = Array(sources[start..<min(start + GCSClient.maximumComposeSources, sources.count)])
                    let name = "\(run)-\(round)-\(j)", client = client, object = object
                    let made = try Self.changedPartIsStale {
                        try runBlocking { try await client.compose(group, into: name, object: object) }
                    }
                    temporaries.append((name, made.generation))
                    next.append((name, made.generation))
                }
                sources = next
                round += 1
            }
        } catch {
            abort()
            throw error
        }
    }

    func publish() throws {
        let client = client, key = key, object = object, sources = sources
        do {
            _ = try Self.changedPartIsStale { try runBlocking { try await client.compose(sources, into: key, object: object) } }
        } catch {
            abort()
            throw error
        }
        copiedInStore = object.size - streamed
        deleteTemporaries()
    }

    func abort() { deleteTemporaries() }

    /// A source no longer at the generation checked (412) is a part that changed after the check:
    /// a stale shard (exit 1), not a store error.
    private static func changedPartIsStale<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let e as ObjectStoreError where e.status == 412 {
            throw ShardError(message: "a part changed after merge checked it (\(e.message)); run merge again to find which")
        }
    }

    private func deleteTemporaries() {
        let client = client
        for t in temporaries { try? runBlocking { try await client.delete(key: t.key, generation: t.generation) } }
        temporaries = []
    }
}
