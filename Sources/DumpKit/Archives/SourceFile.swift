import JSONStream

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Opens the files `archive` reads (objects and their sidecars) so that a file swapped for something
/// else after it was listed cannot hold or mislead the run: links are not followed, a FIFO or device is
/// opened without waiting (`O_NONBLOCK`), and anything but a regular file is refused by name.
enum SourceFile {
    /// A read-only descriptor of the regular file at `path`; the caller closes it.
    static func open(_ path: String) throws -> Int32 {
        let descriptor = Glibc.open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw InputError(
                file: path, message: errno == ELOOP ? notRegular("a symbolic link") : "cannot open: \(String(cString: strerror(errno)))")
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            let message = String(cString: strerror(errno))
            close(descriptor)
            throw InputError(file: path, message: "cannot read: \(message)")
        }
        guard (status.st_mode & S_IFMT) == S_IFREG else {
            close(descriptor)
            throw InputError(file: path, message: notRegular(kind(status.st_mode)))
        }
        return descriptor
    }

    /// The whole content of the regular file at `path`, or `nil` when there is none.
    static func contents(_ path: String) throws -> [UInt8]? {
        if access(path, F_OK) != 0 && errno == ENOENT { return nil }
        let descriptor = try open(path)
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var block = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = block.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw InputError(file: path, message: "cannot read: \(String(cString: strerror(errno)))") }
            if count == 0 { return bytes }
            bytes += block[..<count]
        }
    }

    private static func notRegular(_ what: String) -> String {
        "is \(what) now, not a regular file (it was replaced after it was listed); nothing is read from it"
    }

    private static func kind(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFIFO: "a FIFO"
        case S_IFSOCK: "a socket"
        case S_IFCHR, S_IFBLK: "a device"
        case S_IFDIR: "a folder"
        default: "a special file"
        }
    }
}
