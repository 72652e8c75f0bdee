#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// New files and folders with unique names (`mkstemp`/`mkdtemp`): the one place their templates
/// are built. On failure the functions return `nil` with `errno` set.
package enum UniqueFile {
    /// `$TMPDIR`, or `/tmp`.
    package static var temporaryDirectory: String { getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp" }

    /// Creates a file (mode 0600) named `prefix` plus six random characters; its descriptor and path.
    package static func create(prefix: String) -> (fd: Int32, path: String)? {
        var template = Array((prefix + "XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { return nil }
        return (fd, template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
    }

    /// A file with no name in `directory` (default: `temporaryDirectory`), gone with its last
    /// descriptor whatever happens to the process.
    package static func anonymous(in directory: String? = nil) -> Int32? {
        guard let (fd, path) = create(prefix: (directory ?? temporaryDirectory) + "/dumpkit-") else { return nil }
        unlink(path)
        return fd
    }

    /// Creates a folder (mode 0700) named `prefix` plus six random characters; its path.
    package static func createDirectory(prefix: String) -> String? {
        var template = Array((prefix + "XXXXXX").utf8CString)
        guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else { return nil }
        return template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }
}
