import JSONStream
import Synchronization

/// A dump input that is not a local file: an object in a bucket (`s3://BUCKET/KEY`,
/// `gs://BUCKET/KEY`). DumpKit does not speak HTTP: the program registers an opener (the `dumpkit`
/// CLI registers the one of `ObjectStores`), and `InputFile` reads the bytes it hands over.
public struct RemoteInput: Sendable {
    /// A descriptor the object's bytes arrive on, in order, to its end; `InputFile` closes it.
    public var descriptor: Int32
    /// The object's size.
    public var size: Int64?
    /// Waits until the transfer has ended and throws what ended it early (or found the object
    /// changed); `InputFile` calls it at the end of the bytes, and after closing the descriptor when
    /// it is done with the input before then.
    public var finish: @Sendable () throws -> Void

    public init(descriptor: Int32, size: Int64?, finish: @escaping @Sendable () throws -> Void) {
        self.descriptor = descriptor
        self.size = size
        self.finish = finish
    }

    /// Opens `location` when it is a URL the opener reads, or gives `nil` for a local path.
    public typealias Opener = @Sendable (String) throws -> RemoteInput?

    private static let opener = Mutex<Opener?>(nil)

    /// Makes `InputFile` open URLs with `opener`, for the rest of the process.
    public static func register(_ opener: @escaping Opener) {
        Self.opener.withLock { $0 = opener }
    }

    /// The input at `location` when it is a URL (`SCHEME://...`), else `nil`.
    static func open(_ location: String) throws -> RemoteInput? {
        guard location.contains("://") else { return nil }
        guard let open = opener.withLock({ $0 }) else {
            throw InputError(file: location, message: "URLs are read only when an opener is registered (RemoteInput.register)")
        }
        return try open(location)
    }
}
