import CPlatform
import Crypto
import Foundation
import JSONStream
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A blob store in a directory that mirrors a bucket: object `v1/todolist/-Kabc/image1.jpg` is the
/// file of that relative path, and its metadata is the JSON file `metadataPath(of:)`
/// (`.dumpkit/meta/<2 hex>/<SHA-256 of the name>.json`, `BlobMetadata.jsonValue`).
///
/// Every file is written without a name (`O_TMPFILE`) in its folder and named when complete, or,
/// where the file system has no such files, under a temporary name in `.dumpkit/tmp/run-XXXXXX/`
/// (one folder per open store, locked with `flock` while it is open) and renamed into place; the
/// object comes before its metadata, so a reader never sees part of a file. A name's object and
/// metadata are written under a lock on one byte of `.dumpkit/lock` (of 256, by the name's hash),
/// so writers of one name, in any process, take turns; an existing object counts as the same only
/// when its bytes hash the same. Opening a store for writing removes the folders of runs that were
/// killed (their lock is free). Paths are opened without following symbolic links, so no name can
/// lead outside the directory.
public final class DirectoryBlobStore: BlobStore, @unchecked Sendable {
    /// The store's directory as given.
    public let directory: String
    /// Temporary files left by interrupted runs that opening this store removed.
    public private(set) var staleTemporaryFilesRemoved = 0
    private let rootFD: Int32
    /// `.dumpkit`, open when writing (its `lock` file holds the per-name locks).
    private let controlFD: Int32?
    private let metaFD: Int32?
    private let runFD: Int32?
    private let tmpFD: Int32?
    private let runName: String?
    private let lock = NSLock()
    private var counter = 0
    /// The open metadata folders (`meta/00` to `meta/ff`), -1 until first used.
    private var metaFolders = [Int32](repeating: -1, count: 256)
    /// Folders found existing when writing, open until `close`, by the bytes of their path (at most
    /// `folderCacheLimit`): the folders many objects share, such as `articles` in
    /// `articles/<id>/photo.jpg`. Bytes, not `String`s: two spellings of `café` are equal strings but
    /// two folders.
    private var openFolderCache: [[UInt8]: Int32] = [:]
    private static let folderCacheLimit = 64
    /// Cleared when the file system turns out to have no unnamed files.
    private let unnamedFiles = Atomic<Bool>(true)
    /// Cleared when the system has no `openat2` (or a sandbox refuses it).
    private let openBeneath = Atomic<Bool>(true)
    private var closed = false

    /// The folder, inside the store, that holds metadata and temporary files.
    public static let controlDirectory = BlobObjectName.reservedSegment

    /// Opens the store in `directory`. For writing, the directory is created if needed and files left
    /// by interrupted runs are cleaned up; for reading, it must exist and nothing is written.
    public init(directory: String, writable: Bool) throws {
        self.directory = directory
        let fail = { (what: String) -> BlobStoreError in
            BlobStoreError(store: directory, message: "\(what): \(String(cString: strerror(errno)))")
        }
        if writable {
            try Self.makeDirectories(directory)
        }
        var st = stat()
        guard stat(directory, &st) == 0 else { throw fail("cannot open") }
        guard (st.st_mode & S_IFMT) == S_IFDIR else { throw BlobStoreError(store: directory, message: "is not a directory") }
        let root = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard root >= 0 else { throw fail("cannot open") }
        rootFD = root
        guard writable else {
            let meta = openat(root, Self.controlDirectory + "/meta", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            metaFD = meta >= 0 ? meta : nil
            controlFD = nil
            runFD = nil
            tmpFD = nil
            runName = nil
            return
        }
        var opened: [Int32] = []
        do {
            let control = try Self.openOrMakeDirectory(root, Self.controlDirectory, store: directory)
            opened.append(control)
            let meta = try Self.openOrMakeDirectory(control, "meta", store: directory)
            opened.append(meta)
            let tmp = try Self.openOrMakeDirectory(control, "tmp", store: directory)
            opened.append(tmp)
            // One run at a time creates its folder and cleans up, under the store's lock file.
            let lockFD = openat(control, "lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o666)
            guard lockFD >= 0 else { throw fail("cannot create \(Self.controlDirectory)/lock") }
            defer { Glibc.close(lockFD) }
            guard flock(lockFD, LOCK_EX) == 0 else { throw fail("cannot lock \(Self.controlDirectory)/lock") }
            let removed = Self.removeStaleRuns(tmp)
            guard let path = UniqueFile.createDirectory(prefix: "\(directory)/\(Self.controlDirectory)/tmp/run-") else {
                throw fail("cannot create a temporary folder")
            }
            let name = String(path.split(separator: "/").last!)
            let run = openat(tmp, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard run >= 0 else { throw fail("cannot open a temporary folder") }
            opened.append(run)
            guard flock(run, LOCK_EX | LOCK_NB) == 0 else { throw fail("cannot lock a temporary folder") }
            staleTemporaryFilesRemoved = removed
            controlFD = control
            metaFD = meta
            tmpFD = tmp
            runFD = run
            runName = name
        } catch {
            for fd in opened { Glibc.close(fd) }
            Glibc.close(root)
            throw error
        }
    }

    deinit { close() }

    public var description: String { "directory \(directory)" }

    /// Removes this run's temporary folder and releases the store; called by `deinit` too.
    public func close() {
        lock.lock()
        defer { lock.unlock() }
        guard !closed else { return }
        closed = true
        if let runFD, let tmpFD, let runName {
            Self.removeContents(runFD)
            unlinkat(tmpFD, runName, AT_REMOVEDIR)
            Glibc.close(runFD)
            Glibc.close(tmpFD)
        }
        for fd in metaFolders where fd >= 0 { Glibc.close(fd) }
        for fd in openFolderCache.values { Glibc.close(fd) }
        if let metaFD { Glibc.close(metaFD) }
        if let controlFD { Glibc.close(controlFD) }
        Glibc.close(rootFD)
    }

    // MARK: - BlobStore

    public func put(_ content: UnsafeRawBufferPointer, metadata: BlobMetadata, replacing: Bool) throws -> BlobPutOutcome {
        guard let runFD, let metaFD, let controlFD else { throw BlobStoreError(store: directory, message: "opened for reading only") }
        let name = metadata.name
        try BlobObjectName.validate(name)
        let lockFD = try lockName(name, controlFD: controlFD)
        defer { Glibc.close(lockFD) }  // releases the lock
        let (folders, leaf) = Self.split(name)
        let target = try objectFolder(folders, name: name)
        let objectParent = target.fd
        defer { if target.owned { Glibc.close(objectParent) } }
        // A folder made just now holds nothing.
        let existing = target.made ? (done: false, outcome: .stored) : try settle(metadata, in: objectParent, leaf, replacing: replacing)
        if existing.done { return existing.outcome }
        let outcome = existing.outcome
        try writeAndRename(content, into: objectParent, as: leaf, runFD: runFD, name: name)
        try writeMetadata(metadata, metaFD: metaFD, runFD: runFD)
        return outcome
    }

    public func put(
        streaming metadata: BlobMetadata, replacing: Bool, fill: (_ write: (UnsafeRawBufferPointer) throws -> Void) throws -> Void
    ) throws -> BlobPutOutcome {
        let pending = try begin(metadata.name)
        defer { pending.abort() }
        try fill { try pending.write($0) }
        return try pending.commit(
            metadata: { digest in
                try BlobContentMismatch.check(digest, against: metadata, store: self.directory)
                return metadata
            }, replacing: replacing)
    }

    /// Starts writing the object `name` in pieces (`PendingObject.write`), for one too large to hold
    /// whole: the pieces go into a file without a name as they come, and `commit` names it.
    public func begin(_ name: String) throws -> PendingObject {
        guard let runFD else { throw BlobStoreError(store: directory, message: "opened for reading only") }
        try BlobObjectName.validate(name)
        let (folders, leaf) = Self.split(name)
        let target = try objectFolder(folders, name: name)
        do {
            return PendingObject(
                store: self, name: name, parent: target, leaf: leaf, file: try createTemporary(in: target.fd, runFD: runFD, name: name))
        } catch {
            if target.owned { Glibc.close(target.fd) }
            throw error
        }
    }

    /// An object being written in pieces (`begin`): never held whole, hashed as it is written, and
    /// visible under its name only once `commit` names the complete file, as `put` would have
    /// written it (the same bytes kept, other bytes refused unless replacing). Call `commit` or
    /// `abort` once.
    public final class PendingObject {
        private let store: DirectoryBlobStore
        public let name: String
        private let parent: (fd: Int32, owned: Bool, made: Bool)
        private let leaf: String
        private let file: TemporaryObject
        private var digest = ObjectDigest()
        private var ended = false
        private var named = false

        fileprivate init(
            store: DirectoryBlobStore, name: String, parent: (fd: Int32, owned: Bool, made: Bool), leaf: String, file: TemporaryObject
        ) {
            self.store = store
            self.name = name
            self.parent = parent
            self.leaf = leaf
            self.file = file
        }

        deinit { if !ended { abort() } }

        /// Bytes written so far.
        public var size: Int64 { digest.size }

        /// Appends the next bytes of the object.
        public func write(_ bytes: UnsafeRawBufferPointer) throws {
            guard DirectoryBlobStore.writeAll(file.fd, bytes) else { throw store.ioError(name, "cannot write") }
            digest.update(bytes)
        }

        /// Names the complete file `name`, with the metadata `metadata` makes of its hashes (or, when
        /// it throws, drops it); the outcome as `put` reports it (`BlobExistsError` when other bytes
        /// are there and not `replacing`).
        public func commit(metadata: (ContentDigest) throws -> BlobMetadata, replacing: Bool) throws -> BlobPutOutcome {
            precondition(!ended, "a pending object is committed or aborted once")
            defer { abort() }
            guard let runFD = store.runFD, let metaFD = store.metaFD, let controlFD = store.controlFD else {
                throw BlobStoreError(store: store.directory, message: "opened for reading only")
            }
            let content = ContentDigest(digest)
            var m = try metadata(content)
            m.name = name
            let lockFD = try store.lockName(name, controlFD: controlFD)
            defer { Glibc.close(lockFD) }
            // The folder may have been made by `begin`, but the lock is taken only now: look in any case.
            let (done, outcome) = try store.settle(m, in: parent.fd, leaf, replacing: replacing)
            if done { return outcome }
            named = true  // `name` closes the file, named or not
            try store.name(file, as: leaf, in: parent.fd, runFD: runFD, name: name)
            try store.writeMetadata(m, metaFD: metaFD, runFD: runFD)
            return outcome
        }

        /// Drops what was written (nothing appears under the name).
        public func abort() {
            guard !ended else { return }
            ended = true
            if !named, let runFD = store.runFD { store.discard(file, runFD: runFD) }
            if parent.owned { Glibc.close(parent.fd) }
        }
    }

    /// What a write of `metadata` (the name's lock held) finds under `leaf` in `parent`: the same bytes
    /// (hashed, whatever the metadata says) are kept, with the metadata written if it differs (`done`);
    /// other bytes are `BlobExistsError` unless `replacing` (then `.replaced`); none, `.stored`. An
    /// object of another size is other bytes: replacing it needs no hash (the refusal names it).
    private func settle(_ metadata: BlobMetadata, in parent: Int32, _ leaf: String, replacing: Bool) throws -> (
        done: Bool, outcome: BlobPutOutcome
    ) {
        let name = metadata.name
        guard let existing = try hashContent(parent, leaf, name: name, unlessSizeIsNot: replacing ? metadata.size : nil) else {
            return (false, .stored)
        }
        if existing.size == metadata.size && existing.sha256 == metadata.sha256 {
            if (try? sidecar(name)) == metadata { return (true, .unchanged) }
            try writeMetadata(metadata, metaFD: metaFD!, runFD: runFD!)
            return (true, .stored)
        }
        guard replacing else {
            throw BlobExistsError(store: directory, name: name, existingSHA256: existing.sha256, newSHA256: metadata.sha256)
        }
        return (false, .replaced)
    }

    /// Flushes the whole file system the store is on (`syncfs`): one call that waits for every object,
    /// metadata file and folder written, cheaper than a sync per file (see docs/BLOBS.md).
    public func sync() throws {
        guard dk_sync_file_system(rootFD) == 0 else {
            throw BlobStoreError(store: directory, message: "cannot flush to disk: \(String(cString: strerror(errno)))")
        }
    }

    /// Waits for and takes the lock of `name`: one byte of `.dumpkit/lock`, chosen by the name's hash,
    /// locked on a descriptor of its own (so threads and store instances exclude each other too).
    /// Closing the descriptor releases it.
    private func lockName(_ name: String, controlFD: Int32) throws -> Int32 {
        let fd = openat(controlFD, "lock", O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { throw ioError(name, "cannot open \(Self.controlDirectory)/lock") }
        let stripe = SHA256.hash(data: Array(name.utf8)).withUnsafeBytes { Int64($0[0]) }
        guard dk_lock_byte(fd, stripe, 1) == 0 else {
            let e = ioError(name, "cannot lock \(Self.controlDirectory)/lock")
            Glibc.close(fd)
            throw e
        }
        return fd
    }

    /// Writes the metadata file of `metadata.name` (after its object) and removes an old-layout one.
    private func writeMetadata(_ metadata: BlobMetadata, metaFD: Int32, runFD: Int32) throws {
        let name = metadata.name
        let json = Self.encode(metadata)
        let (folder, file) = Self.metadataLocation(name)
        let metaParent = try metadataFolder(folder, in: metaFD, name: name)
        do {
            try json.withUnsafeBytes { try writeAndRename($0, into: metaParent, as: file, runFD: runFD, name: name) }
        } catch let e as BlobStoreError {
            // The object is whole; say that its metadata file is what failed.
            throw BlobStoreError(store: directory, name: name, message: "metadata file \(Self.metadataPath(of: name)): \(e.message)")
        }
    }

    public func get(_ name: String) throws -> [UInt8] {
        try BlobObjectName.validate(name)
        let (folders, leaf) = Self.split(name)
        guard let parent = try openFolders(rootFD, folders, create: false, name: name) else { throw missing(name) }
        defer { Glibc.close(parent) }
        guard let bytes = try readFile(parent, leaf, name: name) else { throw missing(name) }
        return bytes
    }

    /// The sidecar metadata; for a file without one (a bucket copied in by other means), metadata
    /// computed from its content as it is read (1 MiB at a time), with the type its first bytes show.
    public func metadata(_ name: String) throws -> BlobMetadata? {
        try BlobObjectName.validate(name)
        guard try exists(name) else { return nil }
        if let m = try sidecar(name) { return m }
        guard let file = try file(name) else { return nil }
        var digest = ObjectDigest()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let n = try file.read(at: digest.size, into: buffer)
            if n == 0 { break }
            digest.update(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
        }
        let (sha256, md5, crc32c) = digest.finalize()
        return BlobMetadata(
            name: name, size: digest.size, contentType: MediaType.detect(digest.head)?.mimeType, sha256: sha256, md5: md5, crc32c: crc32c)
    }

    /// The object's file, open for reads at any offset (a large object is read a part at a time), or
    /// nil when there is none.
    public func file(_ name: String) throws -> File? {
        try BlobObjectName.validate(name)
        let (folders, leaf) = Self.split(name)
        guard let parent = try openFolders(rootFD, folders, create: false, name: name) else { return nil }
        defer { Glibc.close(parent) }
        let fd = openat(parent, leaf, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw ioError(name, "cannot open")
        }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else {
            Glibc.close(fd)
            return nil
        }
        return File(fd: fd, size: Int64(st.st_size), name: name, store: directory)
    }

    /// An object's file: its size when opened, and reads at any offset (`pread`, from any thread).
    public final class File: Sendable {
        public let size: Int64
        private let fd: Int32
        private let name: String
        private let store: String

        init(fd: Int32, size: Int64, name: String, store: String) {
            self.fd = fd
            self.size = size
            self.name = name
            self.store = store
        }

        deinit { Glibc.close(fd) }

        /// Fills up to `buffer.count` bytes from `offset`; 0 at the end.
        public func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
            while true {
                let n = pread(fd, buffer.baseAddress!, buffer.count, off_t(offset))
                if n >= 0 { return n }
                if errno != EINTR {
                    throw BlobStoreError(store: store, name: name, message: "cannot read: \(String(cString: strerror(errno)))")
                }
            }
        }
    }

    public func exists(_ name: String) throws -> Bool {
        try BlobObjectName.validate(name)
        return size(of: name) != nil
    }

    /// The objects' names in UTF-8 byte order (a bucket listing's order), depth first, with one folder
    /// open per level: a folder's entries are read and sorted (a subfolder as its name and `/`, so
    /// `a-b` comes before `a/x`), and subfolders are entered as they are met. So the descriptors held
    /// are the depth of the tree (a folder of 25,000 subfolders once ran out of descriptors and lost
    /// objects) and memory is the entries of the folders on the current path, never the whole listing.
    /// A folder that cannot be opened or an entry that cannot be looked at stops the listing with an error.
    public func list(_ body: (String) throws -> Void) throws {
        let names = try names()
        while let name = try names.next() { try body(name) }
    }

    /// The names `list` gives, one at a time: a listing that can be read a page at a time.
    public func names() throws -> Names { try names(memoryLimit: 100_000) }

    /// `names()`, sorting folders of more than `memoryLimit` entries on disk.
    func names(memoryLimit: Int) throws -> Names { try Names(store: self, memoryLimit: memoryLimit) }

    /// A walk of the store's folders in name order (`list`).
    public final class Names {
        private struct Level {
            let fd: Int32
            let prefix: String
            /// The folder's entries in byte order, each a name with `/` after a subfolder.
            var entries: Entries
        }

        /// A folder's entries: sorted in memory, or, past `memoryLimit` of them (one flat folder of
        /// millions of objects), by an `ExternalSorter` that spills to disk beyond its budget.
        private enum Entries {
            case memory([String], next: Int)
            case sorted(ExternalSorter.Reader)

            mutating func next() throws -> String? {
                switch self {
                case .memory(let entries, let next):
                    guard next < entries.count else { return nil }
                    self = .memory(entries, next: next + 1)
                    return entries[next]
                case .sorted(let reader):
                    return try reader.next() ? String(decoding: reader.key, as: UTF8.self) : nil
                }
            }
        }

        private let directory: String
        private var levels: [Level] = []
        /// The most entries of one folder sorted in memory.
        private let memoryLimit: Int

        init(store: DirectoryBlobStore, memoryLimit: Int) throws {
            directory = store.directory
            self.memoryLimit = memoryLimit
            try enter(dup(store.rootFD), "")
        }

        deinit { for level in levels { Glibc.close(level.fd) } }

        /// The next object's name, or nil after the last.
        public func next() throws -> String? {
            while !levels.isEmpty {
                guard let entry = try levels[levels.count - 1].entries.next() else {
                    Glibc.close(levels.removeLast().fd)
                    continue
                }
                let top = levels[levels.count - 1]
                guard entry.hasSuffix("/") else { return top.prefix + entry }
                let child = String(entry.dropLast())
                try enter(openat(top.fd, child, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), top.prefix + entry)
            }
            return nil
        }

        /// Reads and sorts the entries of the folder open on `fd` (closed with its level).
        private func enter(_ fd: Int32, _ prefix: String) throws {
            guard fd >= 0 else {
                throw BlobStoreError(
                    store: directory, message: "cannot list \(prefix.isEmpty ? "." : prefix): \(String(cString: strerror(errno)))")
            }
            levels.append(Level(fd: fd, prefix: prefix, entries: .memory([], next: 0)))
            guard let dir = fdopendir(dup(fd)) else {
                throw BlobStoreError(
                    store: directory, message: "cannot list \(prefix.isEmpty ? "." : prefix): \(String(cString: strerror(errno)))")
            }
            defer { closedir(dir) }
            rewinddir(dir)  // a duplicated descriptor shares its position with earlier listings
            var entries: [String] = []
            var sorter: ExternalSorter?
            while let entry = readdir(dir) {
                let child = withUnsafePointer(to: &entry.pointee.d_name) {
                    String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self))
                }
                if child == "." || child == ".." || (prefix.isEmpty && child == DirectoryBlobStore.controlDirectory) { continue }
                var st = stat()
                guard fstatat(fd, child, &st, AT_SYMLINK_NOFOLLOW) == 0 else {
                    if errno == ENOENT { continue }  // removed since the folder was read
                    throw BlobStoreError(store: directory, message: "cannot look at \(prefix + child): \(String(cString: strerror(errno)))")
                }
                switch st.st_mode & S_IFMT {
                case S_IFREG: entries.append(child)
                case S_IFDIR: entries.append(child + "/")
                default: continue
                }
                if entries.count >= memoryLimit {
                    if sorter == nil { sorter = ExternalSorter() }
                    for e in entries { try sorter!.add(key: Array(e.utf8), payload: []) }
                    entries.removeAll(keepingCapacity: true)
                }
            }
            if let sorter {
                for e in entries { try sorter.add(key: Array(e.utf8), payload: []) }
                levels[levels.count - 1].entries = .sorted(try sorter.sorted())
            } else {
                entries.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
                levels[levels.count - 1].entries = .memory(entries, next: 0)
            }
        }
    }

    // MARK: - Files

    private func missing(_ name: String) -> BlobStoreError {
        BlobStoreError(store: directory, name: name, message: "no such object")
    }

    private func ioError(_ name: String, _ what: String) -> BlobStoreError {
        BlobStoreError(store: directory, name: name, message: "\(what): \(String(cString: strerror(errno)))")
    }

    /// The folders and the file name of `name`, cut at every `/` byte (as `BlobObjectName.validate`
    /// reads it; a `/` followed by a combining mark is one `Character`, but still a separator).
    private static func split(_ name: String) -> (folders: [Substring], leaf: String) {
        let parts = name.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        return (parts.dropLast().map { Substring($0) }, String(Substring(parts.last!)))
    }

    /// The folder an object is written into, made with its parents if needed: `made` when this call
    /// made it (so it holds nothing), `owned` when the descriptor is the caller's to close (else it
    /// stays open in `openFolderCache` or is the root). Its parent comes from the cache when an
    /// earlier object opened it, so a new folder usually costs one `mkdirat` and one `openat`.
    private func objectFolder(_ folders: [Substring], name: String) throws -> (fd: Int32, owned: Bool, made: Bool) {
        guard let last = folders.last else { return (rootFD, false, false) }
        let path = Array(folders.joined(separator: "/").utf8)
        if let fd = cachedFolder(path) { return (fd, false, false) }
        let parentPath = Array(folders.dropLast().joined(separator: "/").utf8)
        var parent = folders.count == 1 ? rootFD : cachedFolder(parentPath)
        var ownsParent = false
        if parent == nil {
            let opened = try openFolders(rootFD, Array(folders.dropLast()), create: true, name: name)!
            ownsParent = !cacheFolder(parentPath, opened)
            parent = opened
        }
        let parentFD = parent!
        defer { if ownsParent { Glibc.close(parentFD) } }
        let component = String(last)
        var made = true
        if mkdirat(parentFD, component, 0o777) != 0 {
            guard errno == EEXIST else { throw ioError(name, "cannot create folder \(String(reflecting: component))") }
            made = false
        }
        let fd = openat(parentFD, component, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOTDIR || errno == ELOOP {
                throw BlobStoreError(
                    store: directory, name: name, message: "\(String(reflecting: component)) is a file or a symbolic link, not a folder")
            }
            throw ioError(name, "cannot open folder \(String(reflecting: component))")
        }
        // A folder made for this object is seldom used again; one found existing likely is.
        if !made && cacheFolder(path, fd) { return (fd, false, false) }
        return (fd, true, made)
    }

    /// The open descriptor of the folder `path` (its bytes), if an earlier write kept it.
    private func cachedFolder(_ path: [UInt8]) -> Int32? {
        lock.withLock { closed ? nil : openFolderCache[path] }
    }

    /// Keeps `fd` open as the folder `path` until `close`; `false` (the caller keeps it) when the
    /// cache is full or already has the path, or the store is closed.
    private func cacheFolder(_ path: [UInt8], _ fd: Int32) -> Bool {
        lock.withLock {
            guard !closed, openFolderCache.count < Self.folderCacheLimit, openFolderCache[path] == nil else { return false }
            openFolderCache[path] = fd
            return true
        }
    }

    /// Opens the folders below `base` one at a time, never following a symbolic link; `nil` when one
    /// is missing and `create` is false. The descriptor returned is the caller's to close.
    private func openFolders(_ base: Int32, _ folders: [Substring], create: Bool, name: String) throws -> Int32? {
        guard !folders.isEmpty else {
            let fd = dup(base)
            guard fd >= 0 else { throw ioError(name, "cannot open the store") }
            return fd
        }
        // Fast path: the whole path at once, refusing links; any failure takes the careful way below.
        if openBeneath.load(ordering: .relaxed) {
            let direct = dk_open_beneath(base, folders.joined(separator: "/"), O_RDONLY | O_DIRECTORY)
            if direct >= 0 { return direct }
            if errno == ENOSYS || errno == EPERM { openBeneath.store(false, ordering: .relaxed) }
        }
        var fd = base
        var made = false  // below a folder just made, nothing exists yet
        defer { if fd != base { Glibc.close(fd) } }
        for folder in folders {
            let component = String(folder)
            var next: Int32 = -1
            if !made {
                next = openat(fd, component, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            }
            if made || (next < 0 && errno == ENOENT && create) {
                if mkdirat(fd, component, 0o777) != 0 && errno != EEXIST {
                    throw ioError(name, "cannot create folder \(String(reflecting: component))")
                }
                made = true
                next = openat(fd, component, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            }
            if next < 0 {
                let code = errno
                if code == ENOENT && !create { return nil }
                if code == ENOTDIR || code == ELOOP {
                    throw BlobStoreError(
                        store: directory, name: name, message: "\(String(reflecting: component)) is a file or a symbolic link, not a folder"
                    )
                }
                throw ioError(name, "cannot open folder \(String(reflecting: component))")
            }
            if fd != base { Glibc.close(fd) }
            fd = next
        }
        let result = fd
        fd = base  // handed to the caller
        return result
    }

    /// The size of the regular file for `name`, or `nil` when there is none.
    private func size(of name: String) -> Int64? {
        let (folders, leaf) = Self.split(name)
        guard let parent = try? openFolders(rootFD, folders, create: false, name: name) else { return nil }
        defer { Glibc.close(parent) }
        var st = stat()
        guard fstatat(parent, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int64(st.st_size)
    }

    /// The sidecar metadata of `name`, or `nil` when it has none.
    private func sidecar(_ name: String) throws -> BlobMetadata? {
        guard let metaFD else { return nil }
        let (folder, file) = Self.metadataLocation(name)
        let path = Self.metadataPath(of: name)
        var bytes: [UInt8]?
        let parent = openat(metaFD, folder, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        if parent >= 0 {
            defer { Glibc.close(parent) }
            bytes = try readFile(parent, file, name: name)
        } else if errno != ENOENT {
            throw ioError(name, "cannot open folder \(Self.controlDirectory)/meta/\(folder)")
        }
        guard let bytes else { return nil }
        let metadata: BlobMetadata
        do {
            let reader = JSONReader(bytes: bytes, options: .init(bufferSize: 4096))
            metadata = try BlobMetadata(json: reader.readValue())
        } catch {
            throw BlobStoreError(store: directory, name: name, message: "unreadable metadata file \(path): \(error)")
        }
        guard metadata.name == name else {
            throw BlobStoreError(
                store: directory, name: name, message: "metadata file \(path) describes \(String(reflecting: metadata.name))")
        }
        return metadata
    }

    /// The metadata file of an object, relative to the store: `.dumpkit/meta/<2 hex>/<hex>.json`
    /// with the SHA-256 of its name, so that any name fits and no folder is made per object.
    public static func metadataPath(of name: String) -> String {
        let (folder, file) = metadataLocation(name)
        return "\(controlDirectory)/meta/\(folder)/\(file)"
    }

    /// The folder below `.dumpkit/meta` and the file name of an object's metadata.
    private static func metadataLocation(_ name: String) -> (folder: String, file: String) {
        let hex = Hex.lowercase(SHA256.hash(data: Array(name.utf8)))
        return (String(hex.prefix(2)), hex + ".json")
    }

    /// The open metadata folder `folder` (two hex digits), made if needed; kept open until `close`.
    private func metadataFolder(_ folder: String, in metaFD: Int32, name: String) throws -> Int32 {
        let index = Int(folder, radix: 16)!
        return try lock.withLock {
            if metaFolders[index] >= 0 { return metaFolders[index] }
            if mkdirat(metaFD, folder, 0o777) != 0 && errno != EEXIST {
                throw ioError(name, "cannot create folder \(Self.controlDirectory)/meta/\(folder)")
            }
            let fd = openat(metaFD, folder, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard fd >= 0 else { throw ioError(name, "cannot open folder \(Self.controlDirectory)/meta/\(folder)") }
            metaFolders[index] = fd
            return fd
        }
    }

    /// The size and SHA-256 (hex) of the regular file `leaf`, read in blocks of up to 1 MiB, or `nil`
    /// when there is none (missing, a folder, a link, a FIFO: opened without blocking). With
    /// `expected`, a file of another size is not read (its SHA-256 is then empty).
    private func hashContent(_ parent: Int32, _ leaf: String, name: String, unlessSizeIsNot expected: Int64?) throws -> (
        size: Int64, sha256: String
    )? {
        let fd = openat(parent, leaf, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT || errno == ELOOP { return nil }
            throw ioError(name, "cannot open the existing object")
        }
        defer { Glibc.close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw ioError(name, "cannot read the existing object") }
        guard (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        if let expected, Int64(st.st_size) != expected { return (Int64(st.st_size), "") }
        var hash = SHA256()
        var size: Int64 = 0
        var block = [UInt8](repeating: 0, count: max(1, min(Int(st.st_size), 1 << 20)))
        while true {
            let n = block.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress!, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { throw ioError(name, "cannot read the existing object") }
            if n == 0 { break }
            block.withUnsafeBytes { hash.update(bufferPointer: UnsafeRawBufferPointer(rebasing: $0.prefix(n))) }
            size += Int64(n)
        }
        return (size, Hex.lowercase(hash.finalize()))
    }

    /// The whole content of a regular file, or `nil` when it does not exist.
    private func readFile(_ parent: Int32, _ leaf: String, name: String) throws -> [UInt8]? {
        let fd = openat(parent, leaf, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw ioError(name, "cannot open")
        }
        defer { Glibc.close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw ioError(name, "cannot read") }
        guard (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(st.st_size))
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + done, $0.count - done) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { throw ioError(name, "cannot read") }
            if n == 0 { break }
            done += n
        }
        if done < bytes.count { bytes.removeLast(bytes.count - done) }
        return bytes
    }

    /// Writes `content` as `leaf` in `parent` so that the name only ever holds a complete file: into
    /// a file without a name (`O_TMPFILE`) that is named when complete, or, where the file system has
    /// none, a temporary file in this run's folder. An existing file is replaced by a rename.
    private func writeAndRename(_ content: UnsafeRawBufferPointer, into parent: Int32, as leaf: String, runFD: Int32, name: String) throws {
        let file = try createTemporary(in: parent, runFD: runFD, name: name)
        guard Self.writeAll(file.fd, content) else {
            let e = ioError(name, "cannot write")
            discard(file, runFD: runFD)
            throw e
        }
        try self.name(file, as: leaf, in: parent, runFD: runFD, name: name)
    }

    /// A file being written for an object or metadata file: without a name (`temp` nil), or under
    /// `temp` in the run's folder.
    fileprivate struct TemporaryObject {
        let fd: Int32
        let temp: String?
    }

    /// A new empty file on the file system of `parent`: without a name where the file system has
    /// unnamed files, else a temporary file in this run's folder.
    private func createTemporary(in parent: Int32, runFD: Int32, name: String) throws -> TemporaryObject {
        if unnamedFiles.load(ordering: .relaxed) {
            let fd = dk_open_unnamed(parent, 0o666)
            if fd >= 0 { return TemporaryObject(fd: fd, temp: nil) }
            guard errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL else { throw ioError(name, "cannot create a temporary file") }
            unnamedFiles.store(false, ordering: .relaxed)
        }
        let temp = nextTemporaryName()
        let fd = openat(runFD, temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
        guard fd >= 0 else { throw ioError(name, "cannot create a temporary file") }
        return TemporaryObject(fd: fd, temp: temp)
    }

    /// Closes and removes a temporary file that is not to be named.
    private func discard(_ file: TemporaryObject, runFD: Int32) {
        Glibc.close(file.fd)
        if let temp = file.temp { unlinkat(runFD, temp, 0) }
    }

    /// Gives the complete `file` the name `leaf` in `parent` (replacing a file there) and closes it.
    /// An unnamed file that cannot be named (no /proc, an old kernel without the capability) is
    /// copied into a named temporary file, and unnamed files are not used again.
    private func name(_ file: TemporaryObject, as leaf: String, in parent: Int32, runFD: Int32, name: String) throws {
        if let temp = file.temp {
            // A write the file system had delayed can fail only at close.
            guard Glibc.close(file.fd) == 0 else {
                let e = ioError(name, "cannot write")
                unlinkat(runFD, temp, 0)
                throw e
            }
            try rename(temp, runFD: runFD, over: leaf, in: parent, name: name)
            return
        }
        defer { Glibc.close(file.fd) }
        if dk_link_unnamed(file.fd, parent, leaf) == 0 { return }
        let linkError = errno
        let temp = nextTemporaryName()
        if linkError == EEXIST {
            guard dk_link_unnamed(file.fd, runFD, temp) == 0 else { throw ioError(name, "cannot move into place") }
            try rename(temp, runFD: runFD, over: leaf, in: parent, name: name)
            return
        }
        unnamedFiles.store(false, ordering: .relaxed)
        let copy = openat(runFD, temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
        guard copy >= 0 else { throw ioError(name, "cannot create a temporary file") }
        var offset: Int64 = 0
        var block = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let n = block.withUnsafeMutableBytes { pread(file.fd, $0.baseAddress!, $0.count, off_t(offset)) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0, block.withUnsafeBytes({ Self.writeAll(copy, UnsafeRawBufferPointer(rebasing: $0.prefix(n))) }) else {
                let e = ioError(name, "cannot write")
                Glibc.close(copy)
                unlinkat(runFD, temp, 0)
                throw e
            }
            if n == 0 { break }
            offset += Int64(n)
        }
        try self.name(TemporaryObject(fd: copy, temp: temp), as: leaf, in: parent, runFD: runFD, name: name)
    }

    /// Writes every file under a temporary name in the run's folder from now on, as on a file system
    /// without unnamed files (for tests of that path).
    func useNamedTemporaryFiles() {
        unnamedFiles.store(false, ordering: .relaxed)
    }

    /// A name for a temporary file in this run's folder, unique within the run.
    private func nextTemporaryName() -> String {
        lock.withLock {
            counter += 1
            return "put-\(counter)"
        }
    }

    /// Renames a complete temporary file of this run's folder to `leaf` in `parent`, or removes it.
    private func rename(_ temp: String, runFD: Int32, over leaf: String, in parent: Int32, name: String) throws {
        guard renameat(runFD, temp, parent, leaf) == 0 else {
            let e = ioError(name, "cannot move into place")
            unlinkat(runFD, temp, 0)
            throw e
        }
    }

    /// Writes all of `content` to `fd`; `false` with `errno` set on failure.
    private static func writeAll(_ fd: Int32, _ content: UnsafeRawBufferPointer) -> Bool {
        var done = 0
        while done < content.count {
            let n = Glibc.write(fd, content.baseAddress! + done, content.count - done)
            if n < 0 && errno == EINTR { continue }
            if n < 0 { return false }
            done += n
        }
        return true
    }

    /// Metadata as one line of compact JSON.
    private static func encode(_ metadata: BlobMetadata) -> [UInt8] {
        let sink = MemoryByteSink()
        let writer = JSONWriter(sink: sink)
        try! writer.value(metadata.jsonValue)
        try! writer.raw("\n")
        try! writer.flush()
        return sink.bytes
    }

    // MARK: - Set-up and clean-up

    /// `mkdir -p`.
    private static func makeDirectories(_ path: String) throws {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for part in path.split(separator: "/") {
            prefix += part
            if mkdir(prefix, 0o777) != 0 && errno != EEXIST {
                throw BlobStoreError(store: path, message: "cannot create \(prefix): \(String(cString: strerror(errno)))")
            }
            prefix += "/"
        }
    }

    private static func openOrMakeDirectory(_ parent: Int32, _ name: String, store: String) throws -> Int32 {
        if mkdirat(parent, name, 0o777) != 0 && errno != EEXIST {
            throw BlobStoreError(store: store, message: "cannot create \(name): \(String(cString: strerror(errno)))")
        }
        let fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw BlobStoreError(store: store, message: "cannot open \(name): \(String(cString: strerror(errno)))") }
        return fd
    }

    /// Removes the folders of runs whose lock is free (their process is gone); returns how many files
    /// they held.
    private static func removeStaleRuns(_ tmp: Int32) -> Int {
        var removed = 0
        for name in entries(tmp) where name.hasPrefix("run-") {
            let fd = openat(tmp, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard fd >= 0 else { continue }
            if flock(fd, LOCK_EX | LOCK_NB) == 0 {
                removed += removeContents(fd)
                unlinkat(tmp, name, AT_REMOVEDIR)
            }
            Glibc.close(fd)
        }
        return removed
    }

    /// Unlinks the files in a folder; returns how many there were.
    @discardableResult
    private static func removeContents(_ fd: Int32) -> Int {
        let names = entries(fd)
        for name in names { unlinkat(fd, name, 0) }
        return names.count
    }

    /// The names in a folder, without `.` and `..`.
    private static func entries(_ fd: Int32) -> [String] {
        let copy = dup(fd)
        guard copy >= 0, let dir = fdopendir(copy) else { return [] }
        defer { closedir(dir) }
        rewinddir(dir)
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: &entry.pointee.d_name) {
                String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self))
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }
}

extension DirectoryBlobStore {
    /// Removes the control folder (`.dumpkit/` with its lock, `meta/` and `tmp/`) of a store that
    /// holds nothing: no metadata and no run's folder, checked under the store's lock. With
    /// `directory: true`, also the store's directory when it is then empty. For a run that opened a
    /// store it found without a control folder, and failed before writing into it (the store must
    /// be closed first). A run that opens the same store at that moment fails with an error instead
    /// of writing into removed folders.
    public static func removeUnused(_ store: String, directory: Bool) {
        let control = store + "/" + controlDirectory
        let lockFD = open(control + "/lock", O_RDWR | O_CLOEXEC | O_NOFOLLOW)
        guard lockFD >= 0 else { return }
        defer { Glibc.close(lockFD) }
        guard flock(lockFD, LOCK_EX) == 0 else { return }
        for folder in ["meta", "tmp"] {
            let fd = open(control + "/" + folder, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard fd >= 0 else { return }
            let empty = entries(fd).isEmpty
            Glibc.close(fd)
            guard empty else { return }
        }
        guard rmdir(control + "/meta") == 0, rmdir(control + "/tmp") == 0, unlink(control + "/lock") == 0, rmdir(control) == 0 else {
            return
        }
        if directory { rmdir(store) }
    }
}
