import ArchiveKit
import Crypto
import Foundation
import JSONStream
import Workers

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// `dumpkit archive` and `dumpkit backup`: a bucket directory, or a backup set (dump, rules, bucket), into
/// one tar or zip archive whose first entry is the manifest.
///
/// The bucket may also be one of an object store (`s3://`, `gs://`), read through the
/// `ArchiveObjectSource` that `openBucket` gives: listed a page at a time, described (S3 lists no
/// metadata), and read a window ahead of the writer, each object checked to be the version listed;
/// objects that changed are reported in `Summary.changed`, never archived as if they were consistent.
///
/// A `.tar.zst` file is written in one pass over the files (`SinglePassArchiver`). Other outputs take two:
/// the first works out every object's metadata (from blob-store sidecars, or by hashing the files on
/// `threads` threads), so the manifest can be written first; the second streams each file into the
/// archive in 1 MiB blocks. Nothing but metadata (and a bounded read-ahead) is held in memory. Entries are sorted
/// by name, owned by 0/0 without names, timed by their files, and the manifest's time is
/// `SOURCE_DATE_EPOCH` or the newest file time, so the same input gives the same bytes. The archive is
/// written to a temporary file and renamed over `output` only when complete.
public struct ArchiveJob {
    /// What goes into the archive.
    public enum Source: Sendable {
        /// One bucket: a directory, or a bucket `openBucket` opens (`s3://`, `gs://`); objects keep their names.
        case bucket(String)
        /// A backup set: `dump/<file>`, `rules/<file>` and `bucket/<objects>` (the bucket as for `.bucket`).
        case backup(dump: String, rules: String?, bucket: String?)
    }

    public var source: Source
    /// The archive to write, or `-` for standard output.
    public var output: String
    /// Tar or zip; `nil` follows the output's name (tar when it says nothing).
    public var format: ArchiveFormat?
    /// `nil` follows the output's name, else zstd for tar and deflate (`.gzip`) for zip.
    public var compression: CompressionFilter?
    public var level: Int?
    /// Hashing and compression threads; `nil` for the number of cores.
    public var threads: Int?
    /// Which bucket objects to take.
    public var filter = PathFilter()
    /// The manifest's creation time; `nil` for the newest modification time of the files.
    public var created: Timestamp?
    /// List what would be archived (`Summary.entries`), reading no file's data and writing nothing.
    public var dryRun = false
    /// Opens a bucket location that is not a directory (`s3://`, `gs://`); the CLI passes the one of
    /// the ObjectStores module. By default every location is a directory.
    public var openBucket: ArchiveSourceOpener = ArchiveJob.openDirectoriesOnly
    /// Archive one shard of the bucket (`archive --shard`): the objects whose names fall in the shard's
    /// range of the index, into the part `OUTPUT.part-I-of-N`, with the part's objects and, last, its
    /// `ShardManifest` beside it; `MergeJob` joins the parts into `OUTPUT`.
    public var shard: (spec: ShardSpec, index: BucketIndex)?

    public init(source: Source, output: String) {
        self.source = source
        self.output = output
    }

    /// What a run wrote.
    public struct Summary: Sendable {
        public var objects: Int
        public var bytes: Int64
        public var format: ArchiveFormat
        public var compression: CompressionFilter
        /// Remarks for people: skipped links, stale sidecars.
        public var notes: [String]
        /// `--include` patterns that matched no object (the archive holds the others; the command exits 1).
        public var unmatchedIncludes: UnmatchedIncludes?
        /// A dry run's entries in archive order (after the manifest); empty when the archive was written.
        public var entries: [Entry] = []
        /// Bucket objects that changed while they were archived (another version or size than listed,
        /// gone, bytes that disagree with the store's hashes), with what became of each; the command
        /// reports them and exits 1. `objects` and `bytes` do not count them.
        public var changed: [ArchiveSourceChange] = []
        /// Of a shard (`shard`): the manifest of the part it wrote.
        public var part: ShardManifest?

        /// One file a dry run would archive.
        public struct Entry: Sendable {
            public var path: String
            public var size: Int64
        }
    }

    /// `SOURCE_DATE_EPOCH` (whole seconds) from `environment`, if set; fails when it is not a number.
    public static func sourceDateEpoch(in environment: [String: String]) throws -> Timestamp? {
        guard let text = environment["SOURCE_DATE_EPOCH"], !text.isEmpty else { return nil }
        guard let seconds = Int64(text) else { throw UsageError("SOURCE_DATE_EPOCH must be whole seconds since 1970, not '\(text)'") }
        return Timestamp(seconds: seconds)
    }

    /// The format and compression for the output, from the options and the output's name; an output
    /// whose name says neither (`x.7z`) needs `format`.
    public func resolvedFormat() throws -> (format: ArchiveFormat, compression: CompressionFilter) {
        let named = ArchiveFormat.forPath(output)
        if named == nil && format == nil && output != "-" {
            throw UsageError(
                "\(output): the name does not say what to write: end it in .tar.zst, .tar.gz, .tar.xz, .tar.bz2, .tar "
                    + "or .zip, or give --format tar or --format zip")
        }
        let format = self.format ?? named?.format ?? .tar
        // A zip's name says nothing about its compression; a tar's does (`.tar` is plain).
        let fromName = named?.format == format && format == .tar ? named?.compression : nil
        let compression = self.compression ?? fromName ?? (format == .tar ? .zstd : .gzip)
        return (format, compression)
    }

    /// Writes the archive.
    public func run(progress: ArchiveProgress? = nil) throws -> Summary {
        let (format, compression) = try resolvedFormat()
        if let shard { try checkShardable(format: format, compression: compression, index: shard.index) }
        let threads = self.threads ?? ProcessInfo.processInfo.activeProcessorCount
        guard threads >= 1 else { throw UsageError("--jobs must be at least 1, not \(threads)") }
        var notes: [String] = []
        var unmatched: UnmatchedIncludes?
        var (items, parts) = try gather(threads: threads, notes: &notes, unmatched: &unmatched, progress: progress)
        if let unmatched, items.isEmpty, shard == nil { throw unmatched }
        let singlePass = format == .tar && compression == .zstd && output != "-"
        if dryRun {
            return Summary(
                objects: items.count, bytes: items.reduce(0) { $0 + $1.size }, format: format, compression: compression,
                notes: notes.sorted(), unmatchedIncludes: unmatched, entries: items.map { Summary.Entry(path: $0.path, size: $0.size) })
        }
        var changed: [ArchiveSourceChange] = []
        try describeRemote(&items, changed: &changed, progress: progress)
        let totalBytes = items.reduce(0) { $0 + $1.size }

        if !singlePass { progress?.begin("hashing", totalFiles: items.count, totalBytes: totalBytes) }
        var collected = try MetadataCollector(threads: threads, hashing: !singlePass).collect(
            items, progress: singlePass ? nil : progress, notes: &notes)
        if !singlePass { progress?.finish() }
        notes.sort()
        if collected.contains(where: { $0.change != nil }) {
            changed += collected.compactMap(\.change)
            let kept = collected.indices.filter { collected[$0].change == nil }
            items = kept.map { items[$0] }
            collected = kept.map { collected[$0] }
        }

        let newest = items.map(\.modificationTime).max() ?? Timestamp(seconds: 0)
        let kind: ArchiveManifest.Kind = if case .bucket = source { .bucket } else { .backup }
        if let shard {
            return try writePart(
                shard.spec, index: shard.index, items: items, collected: collected, created: created ?? newest, kind: kind, parts: parts,
                changed: changed, notes: notes, progress: progress)
        }
        if singlePass {
            progress?.begin("archiving", totalFiles: items.count, totalBytes: items.reduce(0) { $0 + $1.size })
            let late = try SinglePassArchiver(output: output, level: level ?? 3, threads: threads).write(
                items: items, collected: collected, created: created ?? newest, kind: kind, parts: parts, progress: progress)
            progress?.finish()
            changed += late
            let left = Set(late.map(\.name))
            let archived = items.filter { $0.remote == nil || !left.contains($0.name) }
            return Summary(
                objects: archived.count, bytes: archived.reduce(0) { $0 + $1.size }, format: format, compression: compression,
                notes: notes, unmatchedIncludes: unmatched, changed: changed)
        }
        let manifest = ArchiveManifest(
            created: created ?? newest, kind: kind, parts: parts,
            objects: zip(items, collected).map { ArchiveManifest.Object(path: $0.path, metadata: $1.metadata) })
        let file = try OutputFile(path: output, compression: CompressionFilter.none)
        var archived = items.count
        var bytes = manifest.totalBytes
        do {
            let writer = try ArchiveWriter(
                sink: file, format: format, compression: compression, level: level, threads: threads, name: output)
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
            defer { buffer.deallocate() }
            try Self.writeManifest(manifest, to: writer, buffer: buffer)
            progress?.begin("archiving", totalFiles: items.count, totalBytes: manifest.totalBytes)
            // Bucket objects are read a window ahead, with the hashes of the first pass to check.
            let remote = items.indices.filter { items[$0].remote != nil }
            let pool = WorkerPool(threads: 0)
            let readAhead = ObjectReadAhead(items: remote.map { items[$0] }, collected: remote.map { collected[$0] }, pool: pool)
            for (item, collected) in zip(items, collected) {
                if item.remote != nil {
                    guard let object = try readAhead.next() else { break }
                    if var change = try copyRemote(object, to: writer, progress: progress) {
                        change.outcome = change.outcome + "; the manifest lists it, so verify and restore report it"
                        changed.append(change)
                        archived -= 1
                        bytes -= item.size
                    }
                } else {
                    try copy(
                        item, metadata: collected.metadata, checkingHash: collected.fromSidecar, to: writer, buffer: buffer,
                        progress: progress)
                }
            }
            try writer.finish()
            try file.commit()
            progress?.finish()
        } catch {
            file.abort()
            throw error
        }
        return Summary(
            objects: archived, bytes: bytes, format: format, compression: compression, notes: notes, unmatchedIncludes: unmatched,
            changed: changed)
    }

    /// Refuses what cannot be archived in shards: the parts must be zstd frames of one tar, written
    /// beside the output (files, or objects with `-o s3://...`, `gs://...`), from the bucket the index
    /// was made for.
    private func checkShardable(format: ArchiveFormat, compression: CompressionFilter, index: BucketIndex) throws {
        guard case .bucket(let bucket) = source else {
            throw UsageError("a backup set is archived whole: run dumpkit backup without --shard")
        }
        guard output != "-" else { throw UsageError("a shard writes OUT.part-I-of-N beside its output: give -o OUT.tar.zst, not -") }
        guard format == .tar, compression == .zstd else {
            throw UsageError(
                "a sharded archive is a .tar.zst (its parts are zstd frames that join into one archive), not \(format) with \(compression): "
                    + "write OUT.tar.zst, or run without --shard")
        }
        func trimmed(_ s: String) -> Substring { s.utf8.count > 1 && s.hasSuffix("/") ? s.dropLast() : Substring(s) }
        guard trimmed(index.source) == trimmed(bucket) else {
            throw UsageError(
                "the index was made for \(index.source), not \(bucket): make it from this bucket (dumpkit index --bucket \(bucket))")
        }
    }

    /// Writes a shard's part, the objects it holds and, last, its manifest (`shard`).
    private func writePart(
        _ spec: ShardSpec, index: BucketIndex, items: [ArchiveItem], collected: [MetadataCollector.Collected], created: Timestamp,
        kind: ArchiveManifest.Kind, parts: [ArchiveManifest.Part], changed: [ArchiveSourceChange], notes: [String],
        progress: ArchiveProgress?
    ) throws -> Summary {
        let level = level ?? 3
        let partPath = ShardManifest.partPath(output: output, shard: spec.index, of: spec.count)
        progress?.begin("archiving", totalFiles: items.count, totalBytes: items.reduce(0) { $0 + $1.size })
        let written = try SinglePassArchiver(
            output: partPath, level: level, threads: threads ?? ProcessInfo.processInfo.activeProcessorCount
        )
        .writePart(items: items, collected: collected, progress: progress)
        progress?.finish()
        let objects = ArchiveManifest(created: created, kind: kind, parts: parts, objects: written.objects)
        let matched = filter.include.filter { pattern in items.contains { PathFilter.glob(pattern, matches: $0.name) } }
        guard case .bucket(let bucket) = source else { preconditionFailure("checked by checkShardable") }
        let objectsCRC32C = try ArchivePart.write(
            objects, level: level, source: bucket, include: filter.include, matchedIncludes: matched,
            to: ArchivePart.objectsPath(output: output, shard: spec.index, of: spec.count))
        let changed = changed + written.changes
        let options =
            "tar zstd level \(level) include \(filter.include) exclude \(filter.exclude) created "
            + (self.created.map { "\($0.seconds)" } ?? "newest")
        var manifest = ShardManifest(
            command: "archive", shard: spec.index, shards: spec.count, index: index.identity, options: options, units: items.count,
            records: objects.objects.count, bytesIn: objects.totalBytes, partBytes: written.bytes, partCRC32C: written.crc32c,
            counts: ["changed": changed.count], objectsCRC32C: objectsCRC32C)
        manifest.partETag = written.etag
        try manifest.write(output: output)
        return Summary(
            objects: objects.objects.count, bytes: objects.totalBytes, format: .tar, compression: .zstd, notes: notes,
            unmatchedIncludes: nil, changed: changed, part: manifest)
    }

    /// Completes the metadata of the bucket objects whose listing did not give it (S3: a HEAD each, as
    /// many at once as the source reads); objects that changed or went away since they were listed are
    /// left out and reported.
    private func describeRemote(_ items: inout [ArchiveItem], changed: inout [ArchiveSourceChange], progress: ArchiveProgress?) throws {
        let pending = items.indices.filter { items[$0].remote.map { !$0.object.described } ?? false }
        guard let source = pending.first.map({ items[$0].remote!.source }) else { return }
        progress?.begin("reading metadata", totalFiles: pending.count)
        let described = try source.describe(pending.map { items[$0].remote!.object }) { progress?.fileDone() }
        progress?.finish()
        var gone = Set<Int>()
        for (index, result) in zip(pending, described) {
            switch result {
            case .success(let object):
                items[index].remote = RemoteObject(source: source, object: object)
            case .failure(let change):
                changed.append(change)
                gone.insert(index)
            }
        }
        if !gone.isEmpty { items = items.indices.filter { !gone.contains($0) }.map { items[$0] } }
    }

    /// Writes the entry of a bucket object of a two-pass archive (the manifest written before it):
    /// none when it changed before its entry began, else its bytes, ended with zeros when it changed
    /// midway. Returns the change, if any.
    private func copyRemote(_ object: ObjectReadAhead.Object, to writer: ArchiveWriter, progress: ArchiveProgress?) throws
        -> ArchiveSourceChange?
    {
        defer { progress?.fileDone() }
        if let change = object.change { return change }
        let item = object.item
        try writer.begin(
            ArchiveEntry(
                path: item.path, size: item.size, modificationTime: item.modificationTime,
                extendedAttributes: Self.extendedAttributes(object.metadata)))
        if let data = object.data {
            try data.withUnsafeBytes { try writer.write($0) }
            progress?.add(bytes: data.count)
            return nil
        }
        guard case .changed(var change, let zeros) = try ObjectReadAhead.copyRemote(object, to: writer, progress: progress) else {
            return nil
        }
        change.outcome = zeros > 0 ? "its entry ends in \(zeros) bytes of zeros" : "its entry's bytes are those read"
        return change
    }

    /// The files to archive, sorted by entry path, and the parts they belong to.
    /// Lists the objects (folders read on `threads` threads, at most 4) in archive order, with the
    /// manifest's parts and the `--include` patterns that matched none of the bucket's objects.
    private func gather(threads: Int, notes: inout [String], unmatched: inout UnmatchedIncludes?, progress: ArchiveProgress?) throws
        -> ([ArchiveItem], [ArchiveManifest.Part])
    {
        var items: [ArchiveItem] = []
        var parts: [ArchiveManifest.Part] = []
        let range = shard.map { $0.index.range(of: $0.spec) }
        func addBucket(_ directory: String, prefix: String) throws {
            if let source = try openBucket(directory) {
                let listed = try Self.list(source, prefix: prefix, filter: filter, range: range, notes: &notes, progress: progress)
                items += listed
                // A bucket keeps every object's metadata, as a blob store's sidecars do: restore into a
                // folder writes them as sidecars.
                parts.append(ArchiveManifest.Part(role: .bucket, path: prefix, blobStore: true))
                let none = filter.include.filter { pattern in !listed.contains { PathFilter.glob(pattern, matches: $0.name) } }
                if !none.isEmpty { unmatched = UnmatchedIncludes(patterns: none, bucket: source.location) }
                return
            }
            try checkOutputOutside(directory)
            var scanner = BucketScanner(root: directory, prefix: prefix, filter: filter)
            scanner.threads = min(threads, 4)
            scanner.range = range
            let scan = try scanner.scan()
            items += scan.items
            parts.append(ArchiveManifest.Part(role: .bucket, path: prefix, blobStore: scan.blobStore))
            notes += scan.skipped.map { "\($0): skipped (not a regular file; links are never followed)" }
            let none = filter.include.filter { pattern in !scan.items.contains { PathFilter.glob(pattern, matches: $0.name) } }
            if !none.isEmpty { unmatched = UnmatchedIncludes(patterns: none, bucket: directory) }
        }
        func addFile(_ path: String, role: ArchiveManifest.Part.Role) throws {
            var status = stat()
            guard stat(path, &status) == 0 else {
                throw InputError(file: path, message: "cannot open: \(String(cString: strerror(errno)))")
            }
            guard (status.st_mode & S_IFMT) == S_IFREG else { throw InputError(file: path, message: "is not a regular file") }
            let name = String(path.split(separator: "/").last ?? Substring(path))
            let folder = path.contains("/") ? String(path.dropLast(name.count)) : "."
            let item = ArchiveItem(
                folder: folder, prefix: "\(role.rawValue)/", name: name, size: Int64(status.st_size),
                modificationTime: Timestamp(seconds: Int64(status.st_mtim.tv_sec), nanoseconds: Int32(status.st_mtim.tv_nsec)))
            items.append(item)
            parts.append(ArchiveManifest.Part(role: role, path: item.path))
        }
        switch source {
        case .bucket(let directory):
            try addBucket(directory, prefix: "")
        case .backup(let dump, let rules, let bucket):
            try addFile(dump, role: .dump)
            if let rules { try addFile(rules, role: .rules) }
            if let bucket { try addBucket(bucket, prefix: "bucket/") }
        }
        // Sorting positions moves 8 bytes a step instead of an item and its three strings.
        let order = items.indices.sorted { ArchiveItem.precedes(items[$0], items[$1]) }
        let sorted = order.map { items[$0] }
        // The object name rule of every command, so that restore can put back everything archived.
        var refused: [BlobNameError] = []
        for item in sorted {
            do {
                try BlobObjectName.validate(item.name)
            } catch {
                refused.append(error)
            }
        }
        if !refused.isEmpty { throw ObjectNamesError(refused: refused) }
        return (sorted, parts)
    }

    /// The objects of a bucket that `filter` selects, from its listing (a page at a time; only the items
    /// are kept). Not objects, as in a directory: a `.dumpkit-manifest.json` at the top, a blob store's
    /// `.dumpkit/` files, and folder placeholders (empty objects whose names end in `/`, which consoles
    /// make), noted.
    private static func list(
        _ source: any ArchiveObjectSource, prefix: String, filter: PathFilter, range: (lower: BucketIndex.Bound, upper: BucketIndex.Bound)?,
        notes: inout [String], progress: ArchiveProgress?
    ) throws -> [ArchiveItem] {
        var items: [ArchiveItem] = []
        var placeholders = 0, reserved = 0
        progress?.begin("listing")
        try source.list { object in
            let name = object.name
            if name == ArchiveManifest.entryName { return }
            if name.hasPrefix(BlobObjectName.reservedSegment + "/") {
                reserved += 1
                return
            }
            if name.hasSuffix("/") && object.size == 0 {
                placeholders += 1
                return
            }
            progress?.fileDone()
            guard filter.matches(name), range.map({ BucketIndex.contains($0, name) }) ?? true else { return }
            items.append(
                ArchiveItem(
                    folder: source.location, prefix: prefix, name: name, size: object.size,
                    modificationTime: Timestamp(milliseconds: object.updated ?? 0), remote: RemoteObject(source: source, object: object)))
        }
        progress?.finish()
        if placeholders > 0 {
            notes.append(
                "\(source.location): \(placeholders == 1 ? "1 folder placeholder" : "\(placeholders) folder placeholders") skipped (empty objects whose names end in '/'; a folder holds no such file)"
            )
        }
        if reserved > 0 {
            notes.append(
                "\(source.location): \(reserved == 1 ? "1 object" : "\(reserved) objects") under \(BlobObjectName.reservedSegment)/ skipped (a blob store's own files, never archived)"
            )
        }
        return items
    }

    /// Refuses an output inside the bucket (the archive would contain itself).
    private func checkOutputOutside(_ directory: String) throws {
        guard output != "-", let bucket = realpath(directory, nil) else { return }
        defer { free(bucket) }
        let parent = output.contains("/") ? String(output[..<output.lastIndex(of: "/")!]) : "."
        guard let target = realpath(parent.isEmpty ? "/" : parent, nil) else { return }
        defer { free(target) }
        let bucketPath = String(cString: bucket)
        let targetPath = String(cString: target)
        if targetPath == bucketPath || targetPath.hasPrefix(bucketPath.hasSuffix("/") ? bucketPath : bucketPath + "/") {
            throw UsageError("the output \(output) is inside the bucket \(directory); write it somewhere else")
        }
    }

    /// Writes the manifest as the first entry, spooled through an anonymous temporary file (its size must
    /// be known for the header, and it grows with the object count).
    static func writeManifest(_ manifest: ArchiveManifest, to writer: ArchiveWriter, buffer: UnsafeMutableRawBufferPointer) throws {
        let spool = try TemporaryFile()
        try manifest.write(to: JSONWriter(sink: spool, options: .init(pretty: true)))
        try writer.begin(ArchiveEntry(path: ArchiveManifest.entryName, size: spool.size, modificationTime: manifest.created))
        while case let count = try spool.read(into: buffer), count > 0 {
            try writer.write(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
        }
    }

    /// Streams one file into the archive, checking that it still is what was listed and hashed.
    private func copy(
        _ item: ArchiveItem, metadata: BlobMetadata, checkingHash: Bool, to writer: ArchiveWriter, buffer: UnsafeMutableRawBufferPointer,
        progress: ArchiveProgress?
    ) throws {
        let descriptor = try SourceFile.open(item.file)
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, Int64(status.st_size) == item.size,
            Timestamp(seconds: Int64(status.st_mtim.tv_sec), nanoseconds: Int32(status.st_mtim.tv_nsec)) == item.modificationTime
        else {
            throw InputError(
                file: item.file, message: "changed while being archived (size or modification time differ from the first pass)")
        }
        try writer.begin(
            ArchiveEntry(
                path: item.path, size: item.size, modificationTime: item.modificationTime,
                extendedAttributes: Self.extendedAttributes(metadata)))
        var sha256 = checkingHash ? SHA256() : nil
        var remaining = item.size
        while remaining > 0 {
            let count = read(descriptor, buffer.baseAddress, Int(min(Int64(buffer.count), remaining)))
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw InputError(file: item.file, message: "cannot read: \(String(cString: strerror(errno)))") }
            guard count > 0 else {
                throw InputError(file: item.file, message: "changed while being archived (ended \(remaining) bytes early)")
            }
            let chunk = UnsafeRawBufferPointer(rebasing: buffer[..<count])
            sha256?.update(bufferPointer: chunk)
            try writer.write(chunk)
            remaining -= Int64(count)
            progress?.add(bytes: count)
        }
        if let sha256, Hex.lowercase(sha256.finalize()) != metadata.sha256 {
            throw InputError(file: item.file, message: "does not match the SHA-256 in its metadata sidecar; the blob store is inconsistent")
        }
        progress?.fileDone()
    }

    /// The metadata as `user.dumpkit.*` extended attributes, for tools that keep them (pax `SCHILY.xattr`).
    /// Hashes not known when the entry begins (empty: a large bucket object's, streamed) are left out.
    static func extendedAttributes(_ metadata: BlobMetadata) -> [ExtendedAttribute] {
        var attributes: [ExtendedAttribute] = []
        func add(_ name: String, _ value: String?) {
            if let value, !value.isEmpty || !["sha256", "md5", "crc32c"].contains(name) {
                attributes.append(ExtendedAttribute(name: "user.dumpkit.\(name)", text: value))
            }
        }
        add("contentType", metadata.contentType)
        add("sha256", metadata.sha256)
        add("md5", metadata.md5)
        add("crc32c", metadata.crc32c)
        add("cacheControl", metadata.cacheControl)
        add("contentDisposition", metadata.contentDisposition)
        add("contentEncoding", metadata.contentEncoding)
        add("contentLanguage", metadata.contentLanguage)
        // Keys that would need escaping in a pax record or an attribute name stay in the manifest only.
        for key in metadata.customMetadata.keys.sorted() where !key.isEmpty && key.utf8.allSatisfy(Self.isPlainKeyByte) {
            add("metadata.\(key)", metadata.customMetadata[key])
        }
        return attributes
    }

    private static func isPlainKeyByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."):
            true
        default: false
        }
    }
}

/// Files whose names break the object name rule (`BlobObjectName`): restore would refuse or rename
/// them, so nothing is archived.
public struct ObjectNamesError: DataError, CustomStringConvertible, Sendable {
    /// Every name refused, in archive order.
    public let refused: [BlobNameError]

    public var description: String {
        let shown = refused.prefix(20).map(\.description).joined(separator: "; ")
        let more = refused.count > 20 ? "; and \(refused.count - 20) more" : ""
        let files = refused.count == 1 ? "1 file has a name" : "\(refused.count) files have names"
        return "\(files) restore could not put back, so nothing was archived: \(shown)\(more); rename them or leave them out with --exclude"
    }
}

extension OutputFile: ArchiveSink {}
