import JSONStream
import Synchronization

/// An object being written to a store while a command runs: bytes go up in parts as they come, and
/// the object appears under its name, whole, only in `publish()`. Not thread-safe: one writer.
public protocol RemoteOutputStream: AnyObject {
    /// Takes the next bytes; waits while the parts before them are sent. Throws what stopped the upload.
    func write(_ bytes: UnsafeRawBufferPointer) throws
    /// Sends everything but what makes the object appear, so that `publish()` only completes it.
    func finish() throws
    /// Makes the object appear under its name; on failure nothing appears and nothing is left behind.
    func publish() throws
    /// Drops the upload and whatever parts it sent; nothing appears.
    func abort()
    /// After `publish()`: the ETag an S3 store gives the object (what a shard's manifest records
    /// for `merge` to check the part by); `nil` where the store reports a CRC-32C instead.
    func storedETag() throws -> String?
}

extension RemoteOutputStream {
    public func storedETag() throws -> String? { nil }
}

/// Where outputs given as URLs go (`-o s3://BUCKET/KEY`, `gs://BUCKET/KEY`). DumpKit does not speak
/// HTTP: the program registers an opener (the `dumpkit` CLI registers the one of `ObjectStores`), and
/// `OutputFile` writes such an output through the stream it opens.
public enum RemoteOutput {
    /// The stream for `location` when it is a URL it writes, or `nil` for a local path.
    public typealias Opener = @Sendable (String) throws -> RemoteOutputStream?

    private static let opener = Mutex<Opener?>(nil)

    /// Makes `OutputFile` write URLs with `opener`, for the rest of the process.
    public static func register(_ opener: @escaping Opener) {
        Self.opener.withLock { $0 = opener }
    }

    /// The stream of `location` when it is a URL (`SCHEME://...`), else `nil`.
    static func stream(for location: String) throws -> RemoteOutputStream? {
        guard location.contains("://") else { return nil }
        guard let open = opener.withLock({ $0 }) else {
            throw OutputError(file: location, message: "URLs are written only when an opener is registered (RemoteOutput.register)")
        }
        return try open(location)
    }
}
