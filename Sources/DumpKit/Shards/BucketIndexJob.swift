/// `dumpkit index --bucket`: one pass over a bucket's listing (a folder, or a bucket `openBucket`
/// opens: `s3://`, `gs://`, listed a page at a time) into the `BucketIndex` that `archive --shard`
/// splits the bucket by. Reads names and sizes only, never an object's bytes.
public struct BucketIndexJob {
    public var source: String
    public var output: String
    /// The most bytes in a unit of more than one object.
    public var unitBytes: Int64 = 1 << 20
    /// Opens a bucket location that is not a directory (the CLI passes the ObjectStores one).
    public var openBucket: ArchiveSourceOpener = ArchiveJob.openDirectoriesOnly

    public init(source: String, output: String) {
        self.source = source
        self.output = output
    }

    /// Lists the bucket, writes the index and returns it, with the index file's size.
    public func run(progress: ProgressMeter? = nil) throws -> (index: BucketIndex, indexBytes: Int64) {
        guard unitBytes >= 1 else { throw UsageError("--unit-bytes must be at least 1, not \(unitBytes)") }
        var builder = BucketIndex.Builder(source: source, unitBytes: unitBytes)
        var listed = 0
        if let bucket = try openBucket(source) {
            try bucket.list { object in
                try builder.add(name: object.name, size: object.size)
                listed += 1
                if listed & 1023 == 0 { progress?.recordDone() }
            }
        } else {
            // A folder is read whole and sorted, as `archive` reads it.
            let scan = try BucketScanner(root: source, prefix: "", filter: PathFilter()).scan()
            for item in scan.items.sorted(by: ArchiveItem.precedes) { try builder.add(name: item.name, size: item.size) }
        }
        progress?.finish()
        let index = builder.index()
        return (index, try index.write(to: output))
    }
}
