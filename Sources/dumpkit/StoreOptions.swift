import ArgumentParser
import DumpKit
import ObjectStores

/// How buckets (`s3://`, `gs://` store URLs) are reached; credentials come from the environment (see
/// docs/OBJECT-STORES.md).
struct StoreOptions: ParsableArguments {
    @Option(
        help:
            "Endpoint of an S3-compatible store (overrides AWS_ENDPOINT_URL_S3/AWS_ENDPOINT_URL), or of a Cloud Storage emulator for gs:// URLs."
    )
    var endpoint: String?

    @Option(
        help:
            "How S3 uploads prove their bytes (multipart parts, and objects sent whole with the hashes they record): crc32c (x-amz-checksum-crc32c), md5 (Content-MD5) or off."
    )
    var checksum: ChecksumMode = .crc32c

    @Option(
        name: .customLong("access-token"),
        help: "OAuth2 access token for gs:// URLs (else GOOGLE_OAUTH_ACCESS_TOKEN, else the key GOOGLE_APPLICATION_CREDENTIALS names).")
    var accessToken: String?

    /// The options as the ObjectStores module takes them.
    var objectStores: ObjectStoreOptions {
        ObjectStoreOptions(endpoint: endpoint, checksum: checksum, accessToken: accessToken)
    }

    /// Opens the store a `--blobs` location names (a folder or a bucket URL): the one function every command opens stores with.
    var openStore: BlobStoreOpener { objectStores.opener }
}

extension ChecksumMode: ExpressibleByArgument {}

/// A command with `StoreOptions`: its `--endpoint` and `--access-token` also reach the bucket objects
/// it reads as dump inputs (`DumpKitCommand.main` registers the opener).
protocol UsesStores {
    var stores: StoreOptions { get }
}

extension CheckBlobsCommand: UsesStores {}
extension CopyCommand: UsesStores {}
extension ExtractBlobsCommand: UsesStores {}
extension InlineBlobsCommand: UsesStores {}
extension MigrateCommand: UsesStores {}
extension RestoreCommand: UsesStores {}
extension ValidateCommand: UsesStores {}
