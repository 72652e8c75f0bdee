/// Opens the blob store a `--blobs` location names, for reading or (`writable`) for writing. Jobs
/// take one so that the library opens directories by itself while the CLI also opens buckets
/// (`s3://`, `gs://`, through the ObjectStores module), without DumpKit depending on HTTP.
public typealias BlobStoreOpener = @Sendable (_ location: String, _ writable: Bool) throws -> any BlobStore

extension DirectoryBlobStore {
    /// The library's default opener: every location is a directory.
    public static let openDirectory: BlobStoreOpener = { location, writable in
        try DirectoryBlobStore(directory: location, writable: writable)
    }
}
