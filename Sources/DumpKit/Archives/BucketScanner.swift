import ArchiveKit
import Foundation
import JSONStream

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// One file to put into an archive: where it is on disk and under which entry path it goes.
///
/// The folder and prefix are shared by all items of a part, so an item costs little more than its name.
struct ArchiveItem: Sendable {
    /// The folder the name is relative to (the bucket, or the folder of a dump file).
    var folder: String
    /// Prepended to the name to make the entry path (`""`, `"bucket/"`, `"dump/"`).
    var prefix: String
    /// The object name within its part (the bucket-relative name, or the file name of a dump).
    var name: String
    var size: Int64
    var modificationTime: Timestamp
    /// Whether the object is in a blob store, whose metadata sidecar may describe it.
    var inBlobStore = false
    /// The object of a bucket that is not a directory (`s3://`, `gs://`) this item is; `nil` for a file.
    var remote: RemoteObject?

    /// The entry path in the archive (`v1/a.jpg`, `bucket/v1/a.jpg`, `dump/backup.json.gz`).
    var path: String { prefix.isEmpty ? name : prefix + name }
    /// The file on disk (a bucket's object: its location and name, for messages).
    var file: String { folder.hasSuffix("/") ? folder + name : folder + "/" + name }
    /// The blob store's metadata sidecar for the object, when it is in one.
    var sidecar: String? { inBlobStore ? "\(folder)/\(DirectoryBlobStore.metadataPath(of: name))" : nil }

    /// Archive order: by the bytes of the entry path. Distinct prefixes never start one another, so
    /// they decide on their own.
    static func precedes(_ a: ArchiveItem, _ b: ArchiveItem) -> Bool {
        a.prefix == b.prefix ? bytesPrecede(a.name, b.name) : bytesPrecede(a.prefix, b.prefix)
    }

    /// Whether the UTF-8 bytes of `a` sort before those of `b` (`memcmp` where both are contiguous).
    static func bytesPrecede(_ a: String, _ b: String) -> Bool {
        let compared = a.utf8.withContiguousStorageIfAvailable { x in
            b.utf8.withContiguousStorageIfAvailable { y in
                let common = min(x.count, y.count)
                let order = common == 0 ? 0 : memcmp(x.baseAddress!, y.baseAddress!, common)
                return order != 0 ? order < 0 : x.count < y.count
            }
        }
        if let compared, let compared { return compared }
        return a.utf8.lexicographicallyPrecedes(b.utf8)
    }
}

/// An object of an `ArchiveObjectSource`, as an item carries it.
final class RemoteObject: Sendable {
    let source: any ArchiveObjectSource
    let object: ArchiveSourceObject

    init(source: any ArchiveObjectSource, object: ArchiveSourceObject) {
        self.source = source
        self.object = object
    }
}

/// Lists the objects of a bucket directory: every regular file below it, in no particular order.
///
/// A DumpKit blob store keeps its metadata under `.dumpkit/` (sidecars, `DirectoryBlobStore.metadataPath(of:)`);
/// that folder is not an object, and neither is a manifest left at the top by an extraction. Symbolic
/// links and special files are skipped and reported: they are not objects and are never followed.
/// Buckets are mostly folders of one or two files (`v1/todolist/<id>/image.jpg`), so listing them is
/// mostly system calls; `threads` threads read folders side by side (`archive` uses its `--threads`,
/// at most 4), which keeps the archive's single-threaded start short.
struct BucketScanner {
    /// The bucket directory.
    let root: String
    /// Prepended to every object name to make its entry path (`""` or `"bucket/"`).
    let prefix: String
    let filter: PathFilter
    /// How many threads read folders.
    var threads = 4
    /// Only the names a shard archives (`BucketIndex.range`): folders wholly outside are not read,
    /// files outside not inspected.
    var range: (lower: BucketIndex.Bound, upper: BucketIndex.Bound)?

    /// What a scan found.
    struct Result {
        var items: [ArchiveItem]
        /// Whether the bucket is a DumpKit blob store (it has `.dumpkit/meta`).
        var blobStore: Bool
        /// Paths that are not objects (links, devices), sorted, for a note.
        var skipped: [String]
    }

    /// The metadata folder of a blob store, relative to its root.
    static let metadataFolder = ".dumpkit/meta"

    /// Walks the bucket; fails when it is not a readable directory or a name is not UTF-8.
    func scan() throws -> Result {
        var status = stat()
        guard stat(root, &status) == 0 else { throw InputError(file: root, message: "cannot open: \(String(cString: strerror(errno)))") }
        guard (status.st_mode & S_IFMT) == S_IFDIR else {
            throw InputError(file: root, message: "not a directory (a bucket must be a directory)")
        }
        let blobStore = stat(join(root, Self.metadataFolder), &status) == 0 && (status.st_mode & S_IFMT) == S_IFDIR
        let walk = Walk()
        let found = (0..<max(1, threads)).map { _ in Found() }
        DispatchQueue.concurrentPerform(iterations: found.count) { index in
            let mine = found[index]
            // Each folder is opened only when its turn comes, so wide trees do not hold a descriptor per folder.
            while let relative = walk.next() {
                do {
                    walk.done(adding: try read(relative, into: mine, blobStore: blobStore))
                } catch {
                    walk.fail(error)
                }
            }
        }
        if let failure = walk.failure { throw failure }
        return Result(items: found.flatMap(\.items), blobStore: blobStore, skipped: found.flatMap(\.skipped).sorted())
    }

    /// Reads one folder (relative to the root, "" for the root): its files go into `found`; returns its subfolders.
    private func read(_ relative: String, into found: Found, blobStore: Bool) throws -> [String] {
        let flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | (relative.isEmpty ? 0 : O_NOFOLLOW)
        let descriptor = open(join(root, relative), flags)
        guard descriptor >= 0, let stream = fdopendir(descriptor) else {
            let code = errno
            if descriptor >= 0 { close(descriptor) }
            throw InputError(file: join(root, relative), message: "cannot read the directory: \(String(cString: strerror(code)))")
        }
        defer { closedir(stream) }
        var folders: [String] = []
        var status = stat()
        while true {
            errno = 0
            guard let entry = readdir(stream) else {
                if errno != 0 {
                    throw InputError(file: join(root, relative), message: "cannot read the directory: \(String(cString: strerror(errno)))")
                }
                return folders
            }
            let rawName = withUnsafeBytes(of: entry.pointee.d_name) { bytes in Array(bytes.prefix(while: { $0 != 0 })) }
            if rawName == [0x2E] || rawName == [0x2E, 0x2E] { continue }
            guard let name = String(validating: rawName, as: UTF8.self) else {
                throw InputError(
                    file: join(root, relative),
                    message:
                        "an object name is not valid UTF-8: \(rawName.map { $0 < 0x80 ? String(UnicodeScalar($0)) : "\\x" + String($0, radix: 16) }.joined())"
                )
            }
            let objectName = relative.isEmpty ? name : relative + "/" + name
            if relative.isEmpty && (name == ".dumpkit" || name == ArchiveManifest.entryName) { continue }
            if let range, !Self.mayHold(range, entry.pointee.d_type, objectName) { continue }
            guard fstatat(dirfd(stream), name, &status, AT_SYMLINK_NOFOLLOW) == 0 else {
                throw InputError(file: join(root, objectName), message: "cannot inspect: \(String(cString: strerror(errno)))")
            }
            switch status.st_mode & S_IFMT {
            case S_IFDIR:
                if let range, !Self.mayHold(range, UInt8(DT_DIR), objectName) { continue }
                folders.append(objectName)
            case S_IFREG:
                guard filter.matches(objectName), range.map({ BucketIndex.contains($0, objectName) }) ?? true else { continue }
                found.items.append(
                    ArchiveItem(
                        folder: root, prefix: prefix, name: objectName, size: Int64(status.st_size),
                        modificationTime: Timestamp(seconds: Int64(status.st_mtim.tv_sec), nanoseconds: Int32(status.st_mtim.tv_nsec)),
                        inBlobStore: blobStore))
            default:
                found.skipped.append(join(root, objectName))
            }
        }
    }

    /// Whether the entry `name` of type `type` (`readdir`'s `d_type`) may be or hold an object in
    /// `range`: a file whose name is in it, a folder some of whose names (all beginning `name/`)
    /// may be; anything else (a link, a type not known without `stat`) is inspected.
    private static func mayHold(_ range: (lower: BucketIndex.Bound, upper: BucketIndex.Bound), _ type: UInt8, _ name: String) -> Bool {
        switch Int(type) {
        case Int(DT_REG):
            return BucketIndex.contains(range, name)
        case Int(DT_DIR):
            let below = name + "/"
            if case .name(let upper) = range.upper, !ArchiveItem.bytesPrecede(below, upper) { return false }
            if case .name(let lower) = range.lower, !lower.utf8.starts(with: below.utf8), ArchiveItem.bytesPrecede(below, lower) {
                return false
            }
            return range.lower != .end && range.upper != .start
        default:
            return true
        }
    }

    private func join(_ directory: String, _ name: String) -> String {
        name.isEmpty ? directory : directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }
}

/// What one thread of a scan found.
private final class Found: @unchecked Sendable {
    var items: [ArchiveItem] = []
    var skipped: [String] = []
}

/// The folders a scan's threads share: those still to read, how many are being read, the first error.
private final class Walk: @unchecked Sendable {
    private let condition = NSCondition()
    private var pending = [""]
    private var reading = 0
    private(set) var failure: Error?

    /// The next folder to read; `nil` once every folder is read (or one failed).
    func next() -> String? {
        condition.withLock {
            while pending.isEmpty && reading > 0 && failure == nil { condition.wait() }
            guard failure == nil, let folder = pending.popLast() else { return nil }
            reading += 1
            return folder
        }
    }

    /// A folder is read; `folders` are its subfolders.
    func done(adding folders: [String]) {
        condition.withLock {
            pending += folders
            reading -= 1
            condition.broadcast()
        }
    }

    /// A folder could not be read: the scan stops with the first such error.
    func fail(_ error: Error) {
        condition.withLock {
            if failure == nil { failure = error }
            reading -= 1
            condition.broadcast()
        }
    }
}
