/// One entry of an archive as DumpKit sees it: a path, a kind, its data size, permissions, a time and
/// extended attributes.
///
/// This is a value copy of libarchive's `archive_entry`; `ArchiveWriter` turns it into one and
/// `ArchiveReader` makes it from one. Owner and group are not part of it: DumpKit writes 0/0 without
/// names and never restores owners.
public struct ArchiveEntry: Sendable, Equatable {
    /// What the entry is.
    public enum Kind: Sendable, Equatable {
        case file
        case directory
        /// A symbolic link and the path it points to, as stored.
        case symbolicLink(target: String)
        /// A hard link to an earlier entry, named by that entry's stored path.
        case hardLink(target: String)
        /// A character or block device, fifo or socket (named, e.g. "fifo"): never extracted.
        case special(String)
    }

    /// The path as stored in the archive (UTF-8), not yet checked or cleaned (see `EntryPath`).
    public var path: String
    public var kind: Kind
    /// Bytes of data that follow the header (0 for anything but files and hard links with data).
    public var size: Int64
    /// The permission bits as stored, setuid, setgid and sticky included (`0o7777` at most).
    public var permissions: UInt32
    /// The modification time, when the archive records one.
    public var modificationTime: Timestamp?
    /// Extended attributes in stored order (pax `SCHILY.xattr.*` / `LIBARCHIVE.xattr.*`).
    public var extendedAttributes: [ExtendedAttribute]

    /// Creates an entry; the defaults suit a regular file written by DumpKit.
    public init(
        path: String, kind: Kind = .file, size: Int64 = 0, permissions: UInt32 = 0o644,
        modificationTime: Timestamp? = nil, extendedAttributes: [ExtendedAttribute] = []
    ) {
        self.path = path
        self.kind = kind
        self.size = size
        self.permissions = permissions
        self.modificationTime = modificationTime
        self.extendedAttributes = extendedAttributes
    }

    /// The value of the extended attribute `name`, if the entry has one.
    public func extendedAttribute(_ name: String) -> [UInt8]? {
        extendedAttributes.first { $0.name == name }?.value
    }
}

/// A point in time with nanoseconds, as file systems and pax headers keep it.
public struct Timestamp: Sendable, Hashable, Comparable {
    /// Whole seconds since the epoch (negative before 1970).
    public var seconds: Int64
    /// Nanoseconds within the second, 0..<1_000_000_000.
    public var nanoseconds: Int32

    public init(seconds: Int64, nanoseconds: Int32 = 0) {
        self.seconds = seconds
        self.nanoseconds = nanoseconds
    }

    /// The time rounded down to milliseconds since the epoch.
    public var milliseconds: Int64 { seconds * 1000 + Int64(nanoseconds / 1_000_000) }

    /// The time of `milliseconds` since the epoch.
    public init(milliseconds: Int64) {
        let (q, r) = milliseconds.quotientAndRemainder(dividingBy: 1000)
        self.init(seconds: r < 0 ? q - 1 : q, nanoseconds: Int32((r < 0 ? r + 1000 : r) * 1_000_000))
    }

    public static func < (a: Timestamp, b: Timestamp) -> Bool {
        (a.seconds, a.nanoseconds) < (b.seconds, b.nanoseconds)
    }
}

/// One extended attribute: a name such as `user.dumpkit.contentType` and its bytes.
public struct ExtendedAttribute: Sendable, Hashable {
    public var name: String
    public var value: [UInt8]

    public init(name: String, value: [UInt8]) {
        self.name = name
        self.value = value
    }

    /// An attribute whose value is the UTF-8 of `text`.
    public init(name: String, text: String) {
        self.init(name: name, value: Array(text.utf8))
    }
}
