/// The container format of an archive: tar (POSIX pax) or zip.
public enum ArchiveFormat: String, Sendable, CaseIterable {
    case tar, zip

    /// The format and compression a file name asks for (case-insensitive): `.zip` is zip, `.tar` plain tar,
    /// `.tar.zst`/`.tzst`, `.tar.gz`/`.tgz`, `.tar.xz`/`.txz` and `.tar.bz2`/`.tbz2` compressed tar;
    /// `nil` for any other name.
    public static func forPath(_ path: String) -> (format: ArchiveFormat, compression: CompressionFilter)? {
        let fileName = (path.split(separator: "/", omittingEmptySubsequences: false).last ?? "").lowercased()
        if fileName.hasSuffix(".zip") { return (.zip, .none) }
        if fileName.hasSuffix(".tar") { return (.tar, .none) }
        for filter in CompressionFilter.allCases {
            guard let ext = filter.fileExtension else { continue }
            if fileName.hasSuffix(".tar.\(ext)") || fileName.hasSuffix(".t\(ext)") { return (.tar, filter) }
        }
        return nil
    }
}
