import ArchiveKit
import JSONStream
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A dump opened for reads at any offset, as the index pass and the shards read it: a local regular
/// file (`ReadOnlyFile`), or an object in a bucket read in ranges through the opener the program
/// registers (the `dumpkit` CLI registers the one of `ObjectStores`). Compressed dumps are refused: a
/// compressed stream cannot be read from the middle.
package enum PositionalInput {
    /// The source and size of `location` when it is a URL the opener reads, or `nil` for a local path.
    package typealias Opener = @Sendable (String) throws -> (source: PositionalByteSource, size: Int64)?

    private static let opener = Mutex<Opener?>(nil)

    /// Makes `open` read URLs with `opener`, for the rest of the process.
    package static func register(_ opener: @escaping Opener) {
        Self.opener.withLock { $0 = opener }
    }

    /// Opens `location` (a path or a URL) and checks that it is plain, uncompressed bytes.
    package static func open(_ location: String) throws -> (source: PositionalByteSource, size: Int64) {
        let opened: (source: PositionalByteSource, size: Int64)
        if location.contains("://") {
            guard let open = opener.withLock({ $0 }) else {
                throw InputError(file: location, message: "URLs are read only when an opener is registered (PositionalInput.register)")
            }
            guard let remote = try open(location) else { throw InputError(file: location, message: "is not a URL DumpKit reads") }
            opened = remote
        } else {
            var st = stat()
            guard stat(location, &st) == 0 else {
                throw InputError(file: location, message: "cannot open: \(String(cString: strerror(errno)))")
            }
            guard (st.st_mode & S_IFMT) == S_IFREG else {
                throw UsageError("\(location) is not a regular file: shards read it at their own offsets")
            }
            opened = (try ReadOnlyFile(path: location), Int64(st.st_size))
        }
        var magic = [UInt8](repeating: 0, count: CompressionFilter.magicLength)
        let n = try magic.withUnsafeMutableBytes { try opened.source.read(at: 0, into: $0) }
        let compression = magic.withUnsafeBytes { CompressionFilter.detect(magic: UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
        if compression != .none {
            throw UsageError(
                "\(location) is \(compression)-compressed, and a compressed stream cannot be read from the middle, "
                    + "so it cannot be sharded: decompress it first (dumpkit convert \(location) -o DUMP.json)")
        }
        return opened
    }
}
