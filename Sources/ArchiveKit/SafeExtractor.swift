import CArchive

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Extracts archive entries into a destination directory so that nothing is ever written outside it.
///
/// Every file is opened relative to a descriptor of its directory (`openat`, `mkdirat`, `renameat`,
/// `symlinkat`, `linkat`), and every directory on the way is opened with `O_NOFOLLOW`, so a symbolic
/// link in the destination is never followed, whoever made it. The process's working directory is
/// never used or changed. Paths are cleaned by `EntryPath` (absolute, drive and UNC prefixes removed,
/// `..` refused); symbolic links are created only when their target stays below the link (relative, no
/// `..`); hard links only to a regular file already inside the destination; devices, fifos and sockets
/// never; setuid, setgid and sticky bits are dropped. Each file is written to a temporary name beside
/// its target (`.<name>.dumpkit-partial-<pid>-XXXXXX`, its own in every process and call, so restores
/// running at once never take each other's files) and renamed over it only when complete and approved,
/// so an interrupted run leaves every target either as it was or complete, and a second run finishes
/// the job: the first time it writes into a directory, it removes the temporary files there whose
/// process is gone.
public final class SafeExtractor {
    /// What to do when the target of an entry already exists.
    public enum OverwritePolicy: String, Sendable, CaseIterable {
        /// Keep whatever is there.
        case never
        /// Replace it unless it already has the entry's content (compared while the entry is read).
        case ifDifferent = "if-different"
        /// Replace it.
        case always
    }

    /// What happened to one entry.
    public enum Outcome: Sendable, Equatable {
        /// Created, or replaced what was there.
        case written
        /// The target already had this content (or is this directory); left as it was.
        case unchanged
        /// Something exists at the target and the policy is `never`; left as it was.
        case kept
        /// Not extracted, for the reason given; the destination is as it was for this entry.
        case refused(String)
    }

    /// The destination as given.
    public let destination: String
    public var overwrite: OverwritePolicy
    public var limits: ExtractionLimits
    /// Entries handed to `extract` so far.
    public private(set) var entryCount = 0

    private let root: Directory
    /// The directories from the destination down to the one used last, kept open for the next entry
    /// (archives list the files of a directory together).
    private var openDirectories: [(name: String, directory: Directory)] = []
    /// The directories (by components) this extractor has written into and cleaned up.
    private var cleanedDirectories = Set<[String]>()
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
    private let compareBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)

    /// Opens `destination`, creating it (and missing parents) when it does not exist; fails when it is
    /// not a directory.
    public init(destination: String, overwrite: OverwritePolicy = .ifDifferent, limits: ExtractionLimits = .standard) throws(ArchiveError) {
        self.destination = destination
        self.overwrite = overwrite
        self.limits = limits
        var descriptor = open(destination, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if descriptor < 0 && errno == ENOENT {
            try Self.makeDirectories(destination)
            descriptor = open(destination, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        }
        guard descriptor >= 0 else {
            let code = errno
            throw ArchiveError(
                name: destination, call: "open", status: ARCHIVE_FATAL, errno: code,
                message: code == ENOTDIR
                    ? "not a directory (the destination must be a directory)"
                    : "cannot open the destination: \(String(cString: strerror(code)))")
        }
        root = Directory(descriptor)
    }

    deinit {
        buffer.deallocate()
        compareBuffer.deallocate()
    }

    /// Creates `path` and its missing parents, like `mkdir -p`.
    private static func makeDirectories(_ path: String) throws(ArchiveError) {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for name in path.split(separator: "/") {
            prefix += (prefix.isEmpty || prefix.hasSuffix("/") ? "" : "/") + name
            if mkdir(prefix, 0o777) != 0 && errno != EEXIST {
                throw ArchiveError(name: path, systemCall: "mkdir", errno: errno, action: "cannot create the destination")
            }
        }
    }

    // MARK: Entries

    /// Extracts the current entry of `reader`, which must be `entry`.
    ///
    /// `observe` sees every block of a file's data as it is written; `approve` is asked, once the data is
    /// complete and before the file is renamed into place, whether to keep it (`nil`) or why not. Refused
    /// entries are an `Outcome`; a failure of the archive, the limits or the file system throws (the
    /// target is then left as it was).
    public func extract(
        _ entry: ArchiveEntry, from reader: ArchiveReader, observe: ((UnsafeRawBufferPointer) -> Void)? = nil,
        approve: (() -> String?)? = nil
    ) throws -> Outcome {
        entryCount += 1
        try limits.check(entries: entryCount, path: entry.path, archive: reader.name)
        let path: EntryPath
        do {
            path = try EntryPath(sanitizing: entry.path)
        } catch {
            return .refused(error.reason)
        }
        switch entry.kind {
        case .file:
            return try writeFile(
                at: path, permissions: entry.permissions, modificationTime: entry.modificationTime, observe: observe, approve: approve
            ) {
                [limits] buffer in
                let count = try reader.read(into: buffer)
                try limits.check(
                    dataBytes: reader.dataBytesRead, archiveBytes: reader.compressedBytesRead, path: entry.path, archive: reader.name)
                return count
            }
        case .directory:
            return try makeDirectory(at: path)
        case .symbolicLink(let target):
            return try makeSymbolicLink(at: path, target: target)
        case .hardLink(let target):
            do {
                return try makeHardLink(at: path, to: try EntryPath(sanitizing: target))
            } catch let error as UnsafePathError {
                return .refused("hard link target '\(target)': \(error.reason)")
            }
        case .special(let kind):
            return .refused("\(kind) entries are never extracted")
        }
    }

    /// Writes a regular file at `path` with the bytes of `contents` (metadata sidecars, manifests).
    public func writeFile(at path: EntryPath, contents: [UInt8], modificationTime: Timestamp? = nil) throws -> Outcome {
        var offset = 0
        return try writeFile(at: path, permissions: 0o644, modificationTime: modificationTime, observe: nil, approve: nil) { buffer in
            let count = min(buffer.count, contents.count - offset)
            contents.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + offset, byteCount: count) }
            offset += count
            return count
        }
    }

    /// Writes a regular file at `path` with the data `next` yields, through a temporary file.
    private func writeFile(
        at path: EntryPath, permissions: UInt32, modificationTime: Timestamp?, observe: ((UnsafeRawBufferPointer) -> Void)?,
        approve: (() -> String?)?, next: (UnsafeMutableRawBufferPointer) throws -> Int
    ) throws -> Outcome {
        guard let name = path.name else { return .refused("a file cannot replace the destination directory") }
        let directory: Directory
        do {
            directory = try writableDirectory(path.parentComponents)
        } catch let refusal as Refusal {
            return .refused(refusal.reason)
        }
        // The size of an existing regular file to compare the data with (if-different).
        var comparedSize: Int64?
        if let found = try directory.existing(name) {
            if found == .directory { return .refused("a directory is in the way") }
            if overwrite == .never { return .kept }
            if overwrite == .ifDifferent, case .file(let size) = found { comparedSize = size }
        }

        // While the data matches the existing file, nothing is written; at the first difference the
        // matching prefix is copied from the existing file into the temporary one.
        var comparison: Int32 = -1
        if comparedSize != nil {
            comparison = openat(directory.descriptor, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        }
        defer { if comparison >= 0 { close(comparison) } }
        var partial: PartialFile?
        var written: Int64 = 0
        do {
            while true {
                let count = try next(buffer)
                if count == 0 { break }
                let chunk = UnsafeRawBufferPointer(rebasing: buffer[..<count])
                observe?(chunk)
                if partial == nil && comparison >= 0 {
                    if try matches(comparison, chunk, at: written, path: path) {
                        written += Int64(count)
                        continue
                    }
                    partial = try PartialFile(in: directory, for: name, permissions: permissions, path: describe(path))
                    try partial!.copy(from: comparison, count: written)
                } else if partial == nil {
                    partial = try PartialFile(in: directory, for: name, permissions: permissions, path: describe(path))
                }
                try partial!.append(chunk)
                written += Int64(count)
            }
            if partial == nil, comparison >= 0, written == comparedSize {
                if let reason = approve?() { return .refused(reason) }
                return .unchanged
            }
            if partial == nil {
                partial = try PartialFile(in: directory, for: name, permissions: permissions, path: describe(path))
                if comparison >= 0 { try partial!.copy(from: comparison, count: written) }
            }
            if let reason = approve?() {
                partial!.discard()
                return .refused(reason)
            }
            try partial!.commit(modificationTime: modificationTime)
        } catch {
            partial?.discard()
            throw error
        }
        return .written
    }

    /// Whether the next `chunk.count` bytes of the file `descriptor` at `offset` equal `chunk`.
    private func matches(_ descriptor: Int32, _ chunk: UnsafeRawBufferPointer, at offset: Int64, path: EntryPath) throws -> Bool {
        var done = 0
        while done < chunk.count {
            let n = pread(descriptor, compareBuffer.baseAddress! + done, chunk.count - done, off_t(offset) + off_t(done))
            if n < 0 && errno == EINTR { continue }
            if n < 0 {
                throw ArchiveError(name: describe(path), systemCall: "pread", errno: errno, action: "cannot read the existing file")
            }
            if n == 0 { return false }
            done += n
        }
        return memcmp(compareBuffer.baseAddress!, chunk.baseAddress!, chunk.count) == 0
    }

    /// Creates the directory `path` and the missing ones above it.
    public func makeDirectory(at path: EntryPath) throws -> Outcome {
        let existed: Bool
        do {
            guard let name = path.name else { return .unchanged }
            let parent = try directory(path.parentComponents, create: true)
            existed = try parent.existing(name) == .directory
            _ = try directory(path.components[...], create: true)
        } catch let refusal as Refusal {
            return .refused(refusal.reason)
        }
        return existed ? .unchanged : .written
    }

    /// Creates a symbolic link at `path` to `target`, if the target cannot lead outside the destination.
    public func makeSymbolicLink(at path: EntryPath, target: String) throws -> Outcome {
        guard Self.staysInside(linkTarget: target) else {
            return .refused("symbolic link to '\(target)' could lead outside the destination (absolute or with '..')")
        }
        guard let name = path.name else { return .refused("a link cannot replace the destination directory") }
        let directory: Directory
        do {
            directory = try writableDirectory(path.parentComponents)
        } catch let refusal as Refusal {
            return .refused(refusal.reason)
        }
        switch try directory.existing(name) {
        case nil: break
        case .directory?: return .refused("a directory is in the way")
        case _? where overwrite == .never: return .kept
        case .other? where overwrite == .ifDifferent && directory.linkTarget(name) == target: return .unchanged
        case _?: break
        }
        let partialName = PartialFile.name(for: name)
        if symlinkat(target, directory.descriptor, partialName) != 0 {
            throw ArchiveError(name: describe(path), systemCall: "symlinkat", errno: errno, action: "cannot create the symbolic link")
        }
        try directory.rename(partialName, to: name, path: describe(path))
        return .written
    }

    /// Creates a hard link at `path` to the regular file `target`, which must already be in the destination.
    public func makeHardLink(at path: EntryPath, to target: EntryPath) throws -> Outcome {
        guard let name = path.name, let targetName = target.name else {
            return .refused("a hard link cannot name the destination directory")
        }
        let targetDirectory: Directory
        let directory: Directory
        do {
            // Kept alive by this reference even when the next walk closes it in the cache.
            targetDirectory = try self.directory(target.parentComponents, create: false)
            guard case .file? = try targetDirectory.existing(targetName) else {
                return .refused("hard link target '\(target)' is not a regular file extracted into the destination")
            }
            directory = try writableDirectory(path.parentComponents)
        } catch let refusal as Refusal {
            return .refused("hard link target: \(refusal.reason)")
        }
        switch try directory.existing(name) {
        case nil: break
        case .directory?: return .refused("a directory is in the way")
        case _? where overwrite == .never: return .kept
        case _? where overwrite == .ifDifferent && directory.sameFile(name, as: targetName, in: targetDirectory): return .unchanged
        case _?: break
        }
        let partialName = PartialFile.name(for: name)
        if linkat(targetDirectory.descriptor, targetName, directory.descriptor, partialName, 0) != 0 {
            throw ArchiveError(name: describe(path), systemCall: "linkat", errno: errno, action: "cannot create the hard link")
        }
        try directory.rename(partialName, to: name, path: describe(path))
        return .written
    }

    /// Whether a symbolic link's target can only resolve below the link: relative, without `..`
    /// (with `/` or `\` as separator) and without a drive letter.
    public static func staysInside(linkTarget target: String) -> Bool {
        let bytes = Array(target.utf8)
        guard let first = bytes.first, first != UInt8(ascii: "/"), first != UInt8(ascii: "\\") else { return false }
        if bytes.count >= 2, bytes[1] == UInt8(ascii: ":") { return false }
        return !bytes.split(whereSeparator: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "\\") }).contains {
            $0.elementsEqual("..".utf8)
        }
    }

    // MARK: Directories

    /// The open directory at `components` below the destination, each component opened without following
    /// links and created when missing (if `create`). Throws `Refusal` when a component is a link or not a
    /// directory.
    private func directory(_ components: ArraySlice<String>, create: Bool) throws -> Directory {
        var depth = 0
        while depth < openDirectories.count, depth < components.count,
            openDirectories[depth].name == components[components.startIndex + depth]
        {
            depth += 1
        }
        openDirectories.removeSubrange(depth...)
        var parent = depth == 0 ? root : openDirectories[depth - 1].directory
        for (offset, name) in components.dropFirst(depth).enumerated() {
            let shown = components.prefix(depth + offset + 1).joined(separator: "/")
            let child = try parent.openDirectory(name, create: create, shown: shown, describe: { describe(shown) })
            openDirectories.append((name, child))
            parent = child
        }
        return parent
    }

    /// The directory at `components`, created if needed; the first time this extractor writes there,
    /// temporary files of restores whose process is gone are removed from it.
    private func writableDirectory(_ components: ArraySlice<String>) throws -> Directory {
        let directory = try self.directory(components, create: true)
        if cleanedDirectories.insert(Array(components)).inserted { directory.removeAbandonedPartialFiles() }
        return directory
    }

    /// The full path of an entry's target, for errors.
    private func describe(_ path: EntryPath) -> String { describe(path.description) }

    private func describe(_ relative: String) -> String {
        destination.hasSuffix("/") ? destination + relative : destination + "/" + relative
    }
}

/// An entry that is not extracted, and why.
private struct Refusal: Error {
    let reason: String
}

/// An open directory descriptor, closed when the last reference goes.
private final class Directory {
    /// What is found at a name in the directory (links not followed).
    enum Existing: Equatable {
        case file(size: Int64)
        case directory
        /// A symbolic link, device, fifo or socket.
        case other
    }

    let descriptor: Int32

    init(_ descriptor: Int32) {
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// What exists at `name`, without following a link; `nil` when nothing does.
    func existing(_ name: String) throws -> Existing? {
        var status = stat()
        guard fstatat(descriptor, name, &status, AT_SYMLINK_NOFOLLOW) == 0 else {
            if errno == ENOENT { return nil }
            throw ArchiveError(name: name, systemCall: "fstatat", errno: errno, action: "cannot inspect")
        }
        switch status.st_mode & S_IFMT {
        case S_IFREG: return .file(size: Int64(status.st_size))
        case S_IFDIR: return .directory
        default: return .other
        }
    }

    /// Opens the subdirectory `name` without following a link, creating it when missing and `create`.
    func openDirectory(_ name: String, create: Bool, shown: String, describe: () -> String) throws -> Directory {
        var child = openat(descriptor, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        if child < 0 && errno == ENOENT && create {
            if mkdirat(descriptor, name, 0o777) != 0 && errno != EEXIST {
                throw ArchiveError(name: describe(), systemCall: "mkdirat", errno: errno, action: "cannot create the directory")
            }
            child = openat(descriptor, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        }
        if child >= 0 { return Directory(child) }
        let code = errno
        switch try existing(name) {
        case .other?:
            throw Refusal(reason: "'\(shown)' is a symbolic link or special file in the destination; links are never followed")
        case .file?:
            throw Refusal(reason: "'\(shown)' is a file in the destination, not a directory")
        case nil where !create:
            throw Refusal(reason: "'\(shown)' does not exist in the destination")
        default:
            throw ArchiveError(name: describe(), systemCall: "openat", errno: code, action: "cannot open the directory")
        }
    }

    /// The target of the symbolic link `name`, or `nil` when it is not one.
    func linkTarget(_ name: String) -> String? {
        var bytes = [UInt8](repeating: 0, count: 4096)
        let count = readlinkat(descriptor, name, &bytes, bytes.count)
        return count < 0 ? nil : String(decoding: bytes[..<count], as: UTF8.self)
    }

    /// Whether `name` here and `other` in `directory` are the same file (inode).
    func sameFile(_ name: String, as other: String, in directory: Directory) -> Bool {
        var a = stat()
        var b = stat()
        return fstatat(descriptor, name, &a, AT_SYMLINK_NOFOLLOW) == 0 && fstatat(directory.descriptor, other, &b, AT_SYMLINK_NOFOLLOW) == 0
            && a.st_dev == b.st_dev && a.st_ino == b.st_ino
    }

    /// Removes the temporary files of processes that are gone (`PartialFile.isAbandoned`): what a
    /// restore killed with `kill -9` or cut by a power failure leaves behind. Those of live processes
    /// stay; so does anything else.
    func removeAbandonedPartialFiles() {
        let copy = dup(descriptor)
        guard copy >= 0, let stream = fdopendir(copy) else {
            if copy >= 0 { close(copy) }
            return
        }
        defer { closedir(stream) }
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if PartialFile.isAbandoned(name) { _ = unlinkat(descriptor, name, 0) }
        }
    }

    /// Renames `name` to `target` within this directory, replacing what is there.
    func rename(_ name: String, to target: String, path: String) throws {
        if renameat(descriptor, name, descriptor, target) != 0 {
            let code = errno
            _ = unlinkat(descriptor, name, 0)
            throw ArchiveError(name: path, systemCall: "renameat", errno: code, action: "cannot move the file into place")
        }
    }
}

/// A file being written beside its target under a temporary name, renamed over the target by `commit`.
private final class PartialFile {
    private let directory: Directory
    private let name: String
    private let target: String
    private let path: String
    private var descriptor: Int32

    /// A temporary name for `target` of this process: `.<target>.dumpkit-partial-<pid>-XXXXXX` (six
    /// random letters and digits), or `.dumpkit-partial-<hash>-<pid>-XXXXXX` for long names.
    static func name(for target: String) -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789".utf8)
        let tag = String(decoding: (0..<6).map { _ in alphabet.randomElement()! }, as: UTF8.self)
        let plain = ".\(target).dumpkit-partial-\(getpid())-\(tag)"
        if plain.utf8.count <= 255 { return plain }
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in target.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3 }
        return ".dumpkit-partial-\(String(hash, radix: 16))-\(getpid())-\(tag)"
    }

    /// Whether `name` is a temporary file of a process that no longer exists (a name from `name(for:)`
    /// whose process id is gone), or of a build before names carried one (`.<target>.dumpkit-partial`,
    /// `.dumpkit-partial-<hash>`).
    static func isAbandoned(_ name: String) -> Bool {
        guard name.hasPrefix(".") else { return false }
        if name.hasSuffix(".dumpkit-partial") { return true }
        let parts = name.split(separator: "-", omittingEmptySubsequences: false)
        if name.hasPrefix(".dumpkit-partial-"), parts.count == 3 { return true }
        guard parts.count >= 4, parts[parts.count - 1].utf8.count == 6, let pid = pid_t(parts[parts.count - 2]), pid > 0 else {
            return false
        }
        let head = parts.dropLast(2).joined(separator: "-")
        guard head.hasSuffix(".dumpkit-partial") || (head.hasPrefix(".dumpkit-partial-") && parts.count == 5) else { return false }
        return kill(pid, 0) != 0 && errno == ESRCH
    }

    /// Creates the temporary file with `permissions` & 0o777, under a name no other file has.
    init(in directory: Directory, for target: String, permissions: UInt32, path: String) throws {
        self.directory = directory
        self.target = target
        self.path = path
        let flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC
        var candidate = Self.name(for: target)
        descriptor = openat(directory.descriptor, candidate, flags, mode_t(permissions & 0o777))
        while descriptor < 0 && errno == EEXIST {
            candidate = Self.name(for: target)
            descriptor = openat(directory.descriptor, candidate, flags, mode_t(permissions & 0o777))
        }
        name = candidate
        if descriptor < 0 { throw ArchiveError(name: path, systemCall: "openat", errno: errno, action: "cannot create the file") }
    }

    deinit { discard() }

    /// Appends `bytes`.
    func append(_ bytes: UnsafeRawBufferPointer) throws {
        var done = 0
        while done < bytes.count {
            let n = write(descriptor, bytes.baseAddress! + done, bytes.count - done)
            if n < 0 && errno == EINTR { continue }
            if n < 0 { throw ArchiveError(name: path, systemCall: "write", errno: errno, action: "cannot write") }
            done += n
        }
    }

    /// Appends the first `count` bytes of the file `source`.
    func copy(from source: Int32, count: Int64) throws {
        var offset: Int64 = 0
        let block = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)
        defer { block.deallocate() }
        while offset < count {
            let n = pread(source, block.baseAddress!, Int(min(Int64(block.count), count - offset)), off_t(offset))
            if n < 0 && errno == EINTR { continue }
            if n <= 0 {
                throw ArchiveError(name: path, systemCall: "pread", errno: n < 0 ? errno : EIO, action: "cannot read the existing file")
            }
            try append(UnsafeRawBufferPointer(rebasing: block[..<n]))
            offset += Int64(n)
        }
    }

    /// Sets the modification time, closes the file and renames it over the target.
    func commit(modificationTime: Timestamp?) throws {
        if let time = modificationTime {
            let times = [
                timespec(tv_sec: 0, tv_nsec: dk_UTIME_OMIT),
                timespec(tv_sec: time_t(time.seconds), tv_nsec: Int(time.nanoseconds)),
            ]
            if futimens(descriptor, times) != 0 {
                throw ArchiveError(name: path, systemCall: "futimens", errno: errno, action: "cannot set the modification time")
            }
        }
        let closed = close(descriptor)
        descriptor = -1
        if closed != 0 {
            let code = errno
            _ = unlinkat(directory.descriptor, name, 0)
            throw ArchiveError(name: path, systemCall: "close", errno: code, action: "cannot write")
        }
        try directory.rename(name, to: target, path: path)
    }

    /// Closes and removes the temporary file, if it is still there.
    func discard() {
        guard descriptor >= 0 else { return }
        close(descriptor)
        descriptor = -1
        _ = unlinkat(directory.descriptor, name, 0)
    }
}
