import CloudHTTP
import Dispatch
import DumpKit
import NIOCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A command's output written to a bucket (`RemoteOutputStream`): `dumpkit convert in.json -o
/// s3://b/v2.json.zst`. Bytes go up in parts while the command writes them (an S3 multipart upload
/// with parts in flight, a Cloud Storage resumable session chunk after chunk), and the object
/// appears only in `publish()`; any failure or `abort()` drops the upload, so no partial object ever
/// stands under the name and no part is left behind. An output smaller than one part goes in one
/// request at `publish()`. Memory: the part being filled and the parts in flight.
///
/// An upload under way is also aborted when the process is interrupted (SIGINT, SIGTERM): S3 keeps
/// the parts of an upload nobody completes or aborts, and bills them. Its waits block the writing
/// thread (`runBlocking`): write from a thread of the caller's own.
public final class ObjectOutput: RemoteOutputStream {
    private let client: any ObjectStoreClient
    private let key: String
    private let object: StoredObject
    /// The part being filled.
    private var current = ByteBuffer()
    private var upload: (any ObjectUpload)?
    private var inFlight: [Task<UploadedPart, any Error>] = []
    private var parts: [UploadedPart] = []
    private var nextPart = 1
    /// Bytes handed to parts sent or under way.
    private var sentBytes: Int64 = 0
    /// Create-only: an object already under the name is kept (`outcome` `.exists`), as
    /// `ObjectStoreClient.create` keeps it.
    var createOnly = false
    /// What `publish()` did; `nil` before.
    private(set) var outcome: CreateOutcome?

    /// The output `location` names when it is an `s3://` or `gs://` URL of an object, else `nil`.
    public static func open(_ location: String, options: ObjectStoreOptions) throws -> ObjectOutput? {
        guard let (client, key) = try options.object(at: location) else { return nil }
        var object = StoredObject(key: key, size: 0)
        object.contentType = contentType(of: key)
        return ObjectOutput(client: client, key: key, object: object)
    }

    init(client: any ObjectStoreClient, key: String, object: StoredObject) {
        self.client = client
        self.key = key
        self.object = object
        current.reserveCapacity(client.partSize(1, of: nil))
    }

    deinit { abort() }

    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        var rest = bytes[...]
        while !rest.isEmpty {
            let room = client.partSize(nextPart, of: nil) - current.readableBytes
            let take = min(room, rest.count)
            current.writeBytes(UnsafeRawBufferPointer(rebasing: rest.prefix(take)))
            rest = rest.dropFirst(take)
            if take == room { try sendCurrent() }
        }
    }

    public func finish() throws {
        guard upload != nil else { return }  // all of it is in `current`: one request in `publish()`
        if !client.lastPartCompletes && current.readableBytes > 0 { try sendCurrent() }
        while !inFlight.isEmpty { try awaitOldest() }
    }

    public func publish() throws {
        try finish()
        let client = client, key = key, body = current
        var object = object
        object.size = sentBytes + Int64(body.readableBytes)
        do {
            if let upload {
                let parts = parts, size = object.size
                outcome = try runBlocking { try await upload.complete(parts, last: body, size: size) }
            } else if nextPart > 1 {
                outcome = .exists  // the create-only upload found an object and was never begun
            } else {
                let described = object, createOnly = createOnly
                outcome = try runBlocking { try await client.put(key: key, body: body, object: described, createOnly: createOnly) }
            }
        } catch {
            abort()
            throw error
        }
        if upload != nil { UploadsUnderWay.remove(ObjectIdentifier(self)) }
        upload = nil
        current = ByteBuffer()
    }

    /// S3's ETag of the published object (a HEAD); Cloud Storage reports a CRC-32C instead: `nil`.
    public func storedETag() throws -> String? {
        guard client is S3Client else { return nil }
        return try client.existing(key: key).etag
    }

    public func abort() {
        // Parts still under way are stopped and waited for, so none lands after the abort.
        for task in inFlight { task.cancel() }
        for task in inFlight { _ = try? runBlocking { try await task.value } }
        inFlight = []
        guard let upload else { return }
        self.upload = nil
        UploadsUnderWay.remove(ObjectIdentifier(self))
        try? runBlocking { await upload.abort() }
    }

    /// Sends `current` as the next part, once fewer than `partsInFlight` are under way; the first
    /// full part starts the upload.
    private func sendCurrent() throws {
        do {
            if upload == nil && nextPart == 1 {
                let client = client, key = key, object = object, createOnly = createOnly
                let begun = try runBlocking { try await client.beginUpload(key: key, object: object, createOnly: createOnly) }
                upload = begun
                if let begun { UploadsUnderWay.add(ObjectIdentifier(self), begun) }
            }
            while inFlight.count >= client.partsInFlight { try awaitOldest() }
        } catch {
            abort()
            throw error
        }
        guard let upload else {
            // A create-only upload that found an object: the rest is counted, not sent.
            nextPart += 1
            sentBytes += Int64(current.readableBytes)
            current.clear()
            return
        }
        let number = nextPart, offset = sentBytes, body = current
        inFlight.append(Task { try await upload.send(part: number, at: offset, body) })
        nextPart += 1
        sentBytes += Int64(body.readableBytes)
        current = ByteBuffer()
        current.reserveCapacity(client.partSize(nextPart, of: nil))
    }

    /// Waits for the oldest part under way; its failure aborts the upload.
    private func awaitOldest() throws {
        let task = inFlight.removeFirst()
        do {
            parts.append(try runBlocking { try await task.value })
        } catch {
            abort()
            throw error
        }
    }

    /// The content type an output's name gives it.
    static func contentType(of key: String) -> String {
        if key.hasSuffix(".gz") { return "application/gzip" }
        if key.hasSuffix(".zst") { return "application/zstd" }
        if key.hasSuffix(".xz") { return "application/x-xz" }
        if key.hasSuffix(".bz2") { return "application/x-bzip2" }
        if key.hasSuffix(".ndjson") || key.hasSuffix(".jsonl") { return "application/x-ndjson" }
        return "application/json"
    }
}

/// The uploads of this process not yet completed or aborted, aborted if it is interrupted: the
/// first upload installs handlers for SIGINT and SIGTERM, which abort them all and exit with
/// 128 + the signal (130, 143), as the default action's status says.
private enum UploadsUnderWay {
    private static let uploads = Mutex<[ObjectIdentifier: any ObjectUpload]>([:])
    private static let handlers = Mutex<[any DispatchSourceSignal]>([])

    static func add(_ id: ObjectIdentifier, _ upload: any ObjectUpload) {
        installHandlers()
        uploads.withLock { $0[id] = upload }
    }

    static func remove(_ id: ObjectIdentifier) {
        _ = uploads.withLock { $0.removeValue(forKey: id) }
    }

    private static func installHandlers() {
        handlers.withLock { sources in
            guard sources.isEmpty else { return }
            for sig in [SIGINT, SIGTERM] {
                signal(sig, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
                source.setEventHandler {
                    let open = uploads.withLock { Array($0.values) }
                    for upload in open { try? runBlocking { await upload.abort() } }
                    let reason = "dumpkit: interrupted; \(open.count) upload\(open.count == 1 ? "" : "s") under way aborted\n"
                    _ = reason.withCString { write(STDERR_FILENO, $0, strlen($0)) }
                    exit(128 + sig)
                }
                source.resume()
                sources.append(source)
            }
        }
    }
}
