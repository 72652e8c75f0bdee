import DumpKit
import Foundation

/// How buckets are reached, from the command line and the environment: `--endpoint` (an S3-compatible
/// endpoint, or a GCS emulator), `--checksum`, `--access-token` (Google), and the environment the
/// clients read their credentials from.
public struct ObjectStoreOptions: Sendable {
    public var endpoint: String?
    public var checksum: ChecksumMode
    public var accessToken: String?
    public var environment: [String: String]

    public init(
        endpoint: String? = nil, checksum: ChecksumMode = .crc32c, accessToken: String? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) {
        self.endpoint = endpoint
        self.checksum = checksum
        self.accessToken = accessToken
        self.environment = environment
    }

    /// The client of the bucket `url` names, with credentials from the options and the environment.
    public func client(for url: ObjectStoreURL) throws -> any ObjectStoreClient {
        switch url.scheme {
        case .s3:
            let configuration = try AWSConfiguration.resolve(store: url.description, endpoint: endpoint, environment: environment)
            return S3Client(url: url, configuration: configuration, checksum: checksum)
        case .gs:
            return try GCSClient.fromEnvironment(url: url, accessToken: accessToken, endpoint: endpoint, environment: environment)
        }
    }

    /// The client and key of the one object `location` names (`s3://BUCKET/KEY`: a dump input or
    /// output), or `nil` when it is not a store URL; a bucket alone is refused.
    public func object(at location: String) throws -> (client: any ObjectStoreClient, key: String)? {
        guard let url = try ObjectStoreURL(location) else { return nil }
        guard !url.prefix.isEmpty else {
            throw ObjectStoreURLError(location: location, reason: "names a bucket, not an object: give s3://BUCKET/KEY or gs://BUCKET/KEY")
        }
        return (try client(for: url), String(url.prefix.dropLast()))
    }

    /// Opens the store a `--blobs` location names: a bucket for `s3://` and `gs://` URLs, else a
    /// directory. The one place stores are opened, for every command.
    public func openBlobStore(_ location: String, writable: Bool) throws -> any BlobStore {
        guard let url = try ObjectStoreURL(location) else {
            return try DirectoryBlobStore(directory: location, writable: writable)
        }
        return BucketBlobStore(client: try client(for: url))
    }

    /// `openBlobStore` as the opener jobs take.
    public var opener: BlobStoreOpener {
        let options = self
        return { location, writable in try options.openBlobStore(location, writable: writable) }
    }
}
