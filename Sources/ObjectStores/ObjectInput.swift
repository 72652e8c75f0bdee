import CloudHTTP
import DumpKit
import Foundation
import JSONStream
import NIOCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One object of a bucket read as a dump input (`RemoteInput`): `dumpkit convert
/// s3://b/backups/dump.json.gz -o out.json`.
///
/// A thread of its own fetches the object in ranged GETs of `partSize` bytes, `partsInFlight` at a
/// time, and writes them in order to one end of a socket pair; `InputFile` reads the other end, so
/// memory is the parts in flight, not the object. Each range is retried by the client's
/// `RetryPolicy` on its own, so a dropped connection costs one range, not the transfer. The object
/// is looked at before and after: if its ETag or generation changed while it was read, the input
/// fails rather than give bytes of two versions.
public enum ObjectInput {
    /// Bytes per ranged GET.
    public static let partSize: Int64 = 8 << 20
    /// Ranged GETs under way at once.
    public static let partsInFlight = 4

    /// The input `location` names when it is an `s3://` or `gs://` URL of an object, else `nil`.
    public static func open(_ location: String, options: ObjectStoreOptions) throws -> RemoteInput? {
        guard let (client, key) = try options.object(at: location) else { return nil }
        let object = try client.existing(key: key)
        var ends: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
            throw InputError(file: location, message: "cannot make a socket pair: \(String(cString: strerror(errno)))")
        }
        let transfer = Transfer(client: client, key: key, object: object, descriptor: ends[1])
        let thread = Thread { transfer.run() }
        thread.name = "dumpkit-object-input"
        thread.start()
        return RemoteInput(descriptor: ends[0], size: object.size) { try transfer.wait() }
    }
}

/// The writing side of one object input.
private final class Transfer: Sendable {
    let client: any ObjectStoreClient
    let key: String
    let object: StoredObject
    let descriptor: Int32
    private let outcome = Mutex<Result<Void, any Error>?>(nil)
    private let done = DispatchSemaphore(value: 0)

    init(client: any ObjectStoreClient, key: String, object: StoredObject, descriptor: Int32) {
        self.client = client
        self.key = key
        self.object = object
        self.descriptor = descriptor
    }

    /// Fetches and writes every part, then closes its end (the reader then sees the end of the bytes).
    func run() {
        let result = Result<Void, any Error> { try send() }
        close(descriptor)
        outcome.withLock { $0 = result }
        done.signal()
    }

    /// Waits for `run` to end; throws what stopped it, unless the reader closed its end first.
    func wait() throws {
        done.wait()
        done.signal()  // for a second caller
        if case .failure(let error) = outcome.withLock({ $0 }), !(error is ReaderGone) { throw error }
    }

    private func send() throws {
        let client = client, key = key
        var parts: [Task<ByteBuffer, any Error>] = []
        var next: Int64 = 0
        func request() {
            let range = next..<min(next + ObjectInput.partSize, object.size)
            next = range.upperBound
            parts.append(Task { try await client.get(key: key, range: range) })
        }
        defer { for part in parts { part.cancel() } }
        while next < object.size && parts.count < ObjectInput.partsInFlight { request() }
        while !parts.isEmpty {
            let part = parts.removeFirst()
            let bytes = try runBlocking { try await part.value }
            if next < object.size { request() }
            try write(bytes)
        }
        guard let now = try runBlocking({ try await client.head(key: key) }) else {
            throw ObjectStoreError(
                store: client.url.description, endpoint: client.endpoint, object: key, status: 404,
                message: "the object was deleted while it was read")
        }
        if now.etag != object.etag || now.generation != object.generation || now.size != object.size {
            throw ObjectStoreError(
                store: client.url.description, endpoint: client.endpoint, object: key,
                message: "the object changed while it was read (ETag \(object.etag ?? "-") -> \(now.etag ?? "-")); read it again")
        }
    }

    /// Writes all of `bytes` to the socket (no SIGPIPE when the reader is gone: `ReaderGone`).
    private func write(_ bytes: ByteBuffer) throws {
        try bytes.withUnsafeReadableBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = Glibc.send(descriptor, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                if n < 0 {
                    if errno == EINTR { continue }
                    throw ReaderGone()
                }
                offset += n
            }
        }
    }
}

/// The reader closed its end before the object's end (it stopped reading, e.g. at an error).
private struct ReaderGone: Error {}
