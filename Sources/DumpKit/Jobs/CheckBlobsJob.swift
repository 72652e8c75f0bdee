/// `dumpkit check-blobs`: cross-checks a dump's blob references against a store (see
/// `BlobReferenceChecker`); nothing is written.
public struct CheckBlobsJob {
    public var input: String
    /// The store's location (only read).
    public var store: String
    /// Opens the store (`DirectoryBlobStore.openDirectory` unless the caller opens buckets too).
    public var openStore: BlobStoreOpener = DirectoryBlobStore.openDirectory
    public var referenceStyle: BlobReferenceStyle = .object
    /// Only references at or below these patterns (none: all).
    public var match: [PathPattern] = []

    public init(input: String, store: String) {
        self.input = input
        self.store = store
    }

    /// The findings (in dump order, orphans last by name) and how many references were checked.
    public func run(progress: ProgressMeter? = nil) throws -> (findings: [Finding], references: Int) {
        let opened = try openStore(store, false)
        let inFile = try InputFile(path: input)
        progress?.attach(inFile)
        defer { progress?.finish() }
        return try BlobReferenceChecker.findings(in: inFile, sourceName: inFile.name, store: opened, style: referenceStyle, match: match)
    }
}
