import ArgumentParser
import DumpKit

/// `dumpkit archive`: a bucket directory into one tar or zip archive with a manifest.
struct ArchiveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "archive",
        abstract:
            "Archive a bucket (a directory, a DumpKit blob store, s3:// or gs://) into tar or zip, with a manifest of hashes and metadata.",
        discussion: """
            The first entry is .dumpkit-manifest.json (size, SHA-256, MD5, CRC-32C, content type, custom metadata \
            and time of every object); the metadata is also stored as pax SCHILY.xattr.user.dumpkit.* attributes. \
            Entries are sorted by name with owner 0/0, so the same bucket gives the same bytes; the manifest's \
            time is SOURCE_DATE_EPOCH when set, else the newest object's. Format and compression follow the \
            output's name: .tar.zst (recommended), .tar.gz, .tar.xz, .tar, .zip; another name needs --format. An \
            --include that matches no object is reported and the exit code is 1.

            From a bucket (s3://BUCKET/PREFIX, gs://BUCKET/PREFIX; credentials and --endpoint as in \
            docs/OBJECT-STORES.md) the listing is read a page at a time and --jobs objects (32) are read \
            ahead, each with its content type, cache control, content disposition/encoding/language and custom \
            metadata (firebaseStorageDownloadTokens included) in the manifest, so `dumpkit restore` can put \
            it back into a bucket. An object that changes while it is archived (another ETag, generation or \
            size than listed) is reported, left out, and the exit code is 1.

            Examples:
              dumpkit archive bucket/ -o bucket.tar.zst
              dumpkit archive store/ -o images.zip --include 'v1/*/image*'
              dumpkit archive bucket/ -o bucket.tar.zst --exclude '*.tmp' --dry-run
              SOURCE_DATE_EPOCH=1700000000 dumpkit archive bucket/ -o bucket.tar.zst \\
                  --level 19
              dumpkit archive gs://my-app.appspot.com -o bucket.tar.zst
              dumpkit archive s3://backups/my-app -o my-app.tar.zst --jobs 64 \\
                  --endpoint https://minio.example.com

            Sharded (docs/SCALE-OUT.md): index the listing once, archive each shard's range of names \
            into OUT.part-I-of-N, then join the parts; the result reads like an unsharded archive.
              dumpkit index --bucket gs://my-app.appspot.com -o bucket.dkindex
              dumpkit archive gs://my-app.appspot.com -o bucket.tar.zst --index bucket.dkindex --shard 0/16
              dumpkit merge bucket.tar.zst
            """
    )

    @Argument(help: "The bucket: a directory (or DumpKit blob store), s3://BUCKET/PREFIX or gs://BUCKET/PREFIX.")
    var source: String

    @Option(name: .shortAndLong, help: "The archive to write, or - for standard output.")
    var output: String

    @OptionGroup var archive: ArchiveOptions
    @OptionGroup var shards: ShardOptions
    @OptionGroup var common: CommonOptions

    func validate() throws {
        try archive.check(output: output)
    }

    func run() throws {
        try reportingErrors {
            var job = ArchiveJob(source: .bucket(source), output: output)
            try archive.configure(&job, bucket: source)
            if let spec = try shards.spec(), let index = shards.index { job.shard = (spec, try BucketIndex.read(path: index)) }
            let summary = try job.run(progress: archive.dryRun ? nil : common.archiveProgress())
            try archive.report(summary, output: output, noun: "object", common: common)
        }
    }
}
