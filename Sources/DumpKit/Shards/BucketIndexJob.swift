/// `dumpkit index --bucket`: one pass over a bucket's listing (a folder, or a bucket `openBucket`
/// opens: `s3://`, `gs://`, listed a page at a time and sorted by name) into the `BucketIndex` that `archive --shard`
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
            // Stores list in their own order (SeaweedFS walks folders: `a/b` before `a-b`), sorted
            // here on disk beyond a budget, so a listing of any length fits.
            let sorter = ExternalSorter()
            try bucket.list { object in
                var size = UInt64(object.size).bigEndian
                try sorter.add(key: Array(object.name.utf8), payload: withUnsafeBytes(of: &size) { Array($0) })
                listed += 1
                if listed & 1023 == 0 { progress?.recordDone() }
            }
            let sorted = try sorter.sorted()
            while try sorted.next() {
                let size = sorted.payload.withUnsafeBytes { UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self)) }
                try builder.add(name: String(decoding: sorted.key, as: UTF8.self), size: Int64(size))
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
