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
/// registers (the `dumpkit` CLI registers the one of `ObjectStores`); either of them in zstd's
/// seekable format is read as its decompressed bytes (`SeekableZstdSource`). Other compressed dumps
/// are refused: a compressed stream cannot be read from the middle.
package enum PositionalInput {
    /// An opened dump.
    package struct Opened {
        package var source: PositionalByteSource
        /// The size of the bytes `source` serves (decompressed, for seekable zstd).
        package var size: Int64
        /// The version of a bucket object, as the store names it (`ETag "…"`, `generation …`): a
        /// shard compares it with the index's. Nil for a local file.
        package var version: String?

        package init(source: PositionalByteSource, size: Int64, version: String?) {
            self.source = source
            self.size = size
            self.version = version
        }
    }

    /// Opens `location` when it is a URL the opener reads; `nil` for a local path.
    package typealias Opener = @Sendable (String) throws -> Opened?

    private static let opener = Mutex<Opener?>(nil)

    /// Makes `open` read URLs with `opener`, for the rest of the process.
    package static func register(_ opener: @escaping Opener) {
        Self.opener.withLock { $0 = opener }
    }

    /// Opens `location` (a path or a URL): plain bytes, or seekable zstd read decompressed.
    package static func open(_ location: String) throws -> Opened {
        var opened: Opened
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
            opened = Opened(source: try ReadOnlyFile(path: location), size: Int64(st.st_size), version: nil)
        }
        var magic = [UInt8](repeating: 0, count: CompressionFilter.magicLength)
        let n = try magic.withUnsafeMutableBytes { try opened.source.read(at: 0, into: $0) }
        let compression = magic.withUnsafeBytes { CompressionFilter.detect(magic: UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
        switch compression {
        case .none:
            return opened
        case .zstd:
            if let seekable = try SeekableZstdSource.open(opened.source, size: opened.size, name: location) {
                opened.source = seekable
                opened.size = seekable.size
                return opened
            }
            throw UsageError(
                "\(location) is zstd-compressed without a seek table, and such a stream cannot be read from the middle, so it cannot "
                    + "be sharded: make a seekable copy to shard from (\(advice(location)))")
        default:
            throw UsageError(
                "\(location) is \(compression)-compressed, and a \(compression) stream cannot be read from the middle, so it cannot "
                    + "be sharded: make a seekable zstd copy to shard from (\(advice(location)))")
        }
    }

    /// The command that makes a shardable copy of `location`.
    private static func advice(_ location: String) -> String {
        "dumpkit convert \(location) -o DUMP.json.zst --seekable"
    }
}
