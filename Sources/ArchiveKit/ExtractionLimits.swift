import CArchive

/// Bounds on what one extraction may produce, against decompression bombs.
///
/// `maxBytes` caps the data of all entries together and `maxEntries` their number. `maxRatio` caps
/// data bytes per archive byte read: it is checked only once `ratioFloor` bytes of data came out,
/// so small archives of zeros pass, while a few kilobytes that expand to gigabytes stop early.
public struct ExtractionLimits: Sendable, Equatable {
    /// Most data bytes over all entries; `nil` for no limit.
    public var maxBytes: Int64?
    /// Most entries; `nil` for no limit.
    public var maxEntries: Int?
    /// Most data bytes per archive byte; `nil` for no limit.
    public var maxRatio: Double?
    /// Data bytes before the ratio is checked.
    public var ratioFloor: Int64

    /// 10 million entries (the largest buckets), a ratio of 1000, no byte limit.
    public static let standard = ExtractionLimits()

    public init(maxBytes: Int64? = nil, maxEntries: Int? = 10_000_000, maxRatio: Double? = 1000, ratioFloor: Int64 = 64 << 20) {
        self.maxBytes = maxBytes
        self.maxEntries = maxEntries
        self.maxRatio = maxRatio
        self.ratioFloor = ratioFloor
    }

    /// Throws when `entries` entries are more than allowed; `path` names the entry that went over.
    public func check(entries: Int, path: String, archive: String) throws(ArchiveError) {
        if let maxEntries, entries > maxEntries {
            throw violation(archive, "\(path): the archive has more than \(maxEntries) entries (the entry limit)")
        }
    }

    /// Throws when `dataBytes` of data out of `archiveBytes` read break the byte or ratio limit.
    public func check(dataBytes: Int64, archiveBytes: Int64, path: String, archive: String) throws(ArchiveError) {
        if let maxBytes, dataBytes > maxBytes {
            throw violation(archive, "\(path): the archive expands to more than \(maxBytes) bytes (the byte limit)")
        }
        if let maxRatio, dataBytes >= ratioFloor, Double(dataBytes) > maxRatio * Double(max(archiveBytes, 1)) {
            throw violation(
                archive,
                "\(path): \(archiveBytes) archive bytes expand to \(dataBytes) bytes, more than \(Int(maxRatio)) times "
                    + "(the ratio limit against decompression bombs)")
        }
    }

    private func violation(_ archive: String, _ message: String) -> ArchiveError {
        ArchiveError(name: archive, call: "ExtractionLimits.check", status: ARCHIVE_FATAL, errno: 0, message: message)
    }
}
