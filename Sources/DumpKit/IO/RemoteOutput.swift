import JSONStream
import Synchronization

/// Where outputs given as URLs go (`-o s3://BUCKET/KEY`, `gs://BUCKET/KEY`). DumpKit does not speak
/// HTTP: the program registers an uploader (the `dumpkit` CLI registers the one of `ObjectStores`).
/// `OutputFile` writes such an output to a temporary file and hands it to the uploader only in
/// `commit()`, so the object appears whole or not at all.
public enum RemoteOutput {
    /// Uploads the finished output: `size` bytes readable from `descriptor` (with `pread`) to
    /// `location`, replacing what is there only once all of it is in.
    public typealias Uploader = @Sendable (_ location: String, _ descriptor: Int32, _ size: Int64) throws -> Void
    /// The uploader for `location` when it is a URL it writes, or `nil` for a local path.
    public typealias Opener = @Sendable (String) throws -> Uploader?

    private static let opener = Mutex<Opener?>(nil)

    /// Makes `OutputFile` write URLs with `opener`, for the rest of the process.
    public static func register(_ opener: @escaping Opener) {
        Self.opener.withLock { $0 = opener }
    }

    /// The uploader of `location` when it is a URL (`SCHEME://...`), else `nil`.
    static func uploader(for location: String) throws -> Uploader? {
        guard location.contains("://") else { return nil }
        guard let open = opener.withLock({ $0 }) else {
            throw OutputError(file: location, message: "URLs are written only when an uploader is registered (RemoteOutput.register)")
        }
        return try open(location)
    }
}
