import CloudHTTP
import DumpKit
import NIOCore

#if canImport(Glibc)
    import Glibc
#endif

/// A command's output written to a bucket (`RemoteOutput`): `dumpkit convert in.json -o
/// s3://b/v2.json.zst`. The finished file goes up in one PUT when small, else as a multipart upload
/// (`ObjectStoreClient.create`) that becomes the object only when every part is in and is aborted
/// on any failure, so no partial object ever stands under the name; parts are read from the file
/// as they are sent, so memory is the parts in flight.
public enum ObjectOutput {
    /// The uploader for `location` when it is an `s3://` or `gs://` URL of an object, else `nil`.
    public static func uploader(for location: String, options: ObjectStoreOptions) throws -> RemoteOutput.Uploader? {
        guard let url = try ObjectStoreURL(location) else { return nil }
        guard !url.prefix.isEmpty else {
            throw OutputError(file: location, message: "names a bucket, not an object: give s3://BUCKET/KEY or gs://BUCKET/KEY")
        }
        let key = String(url.prefix.dropLast())
        let client = try options.client(for: url)
        return { _, descriptor, size in
            var described = StoredObject(key: key, size: size)
            described.contentType = contentType(of: key)
            let object = described
            let read: @Sendable (Int64, Int) async throws -> ByteBuffer = { offset, length in
                var buffer = ByteBuffer()
                buffer.reserveCapacity(length)
                let got = try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: length) { raw in
                    var done = 0
                    while done < length {
                        let n = pread(descriptor, raw.baseAddress! + done, length - done, off_t(offset) + off_t(done))
                        if n < 0 && errno == EINTR { continue }
                        guard n > 0 else { throw OutputError(file: location, message: "cannot read the finished output back") }
                        done += n
                    }
                    return done
                }
                precondition(got == length)
                return buffer
            }
            _ = try runBlocking { try await client.create(key: key, size: size, object: object, createOnly: false, read: read) }
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
