import Foundation

/// An append-only file of the units of a run that are finished (committed chunks of an import,
/// fetched ranges of an export), so that a run killed midway and started again with the same
/// arguments does only what is missing.
///
/// The first line names the run (its target, options and input); a journal whose first line differs
/// belongs to another run and is started anew. Each further line is one finished unit, written with
/// one `write(2)` after the unit is done, so a `kill -9` loses at most the unit in progress (and a
/// torn last line is ignored).
public final class RunJournal {
    public let path: String
    /// The units found when the journal was opened, and those added since.
    public private(set) var finished: Set<String> = []
    private let handle: FileHandle

    /// Opens the journal at `path` for the run `identity`, keeping its units when it is that run's.
    public init(path: String, identity: String) throws {
        self.path = path
        let header = identity.replacingOccurrences(of: "\n", with: " ")
        var keep = false
        if let data = FileManager.default.contents(atPath: path) {
            let text = String(decoding: data, as: UTF8.self)
            var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            // A last line without its newline was cut by a kill: ignore it.
            if !text.hasSuffix("\n") { lines.removeLast() }
            if lines.first.map(String.init) == header {
                keep = true
                for line in lines.dropFirst() where !line.isEmpty { finished.insert(String(line)) }
            }
        }
        if !keep {
            guard FileManager.default.createFile(atPath: path, contents: Data((header + "\n").utf8)) else {
                throw JournalError(path: path, message: "cannot write the journal (is the folder writable?)")
            }
        }
        guard let handle = FileHandle(forUpdatingAtPath: path) else {
            throw JournalError(path: path, message: "cannot open the journal")
        }
        self.handle = handle
        if keep {
            // Drop a torn last line so the next record starts on a line of its own.
            let text = String(decoding: FileManager.default.contents(atPath: path) ?? Data(), as: UTF8.self)
            let end =
                text.hasSuffix("\n")
                ? text.utf8.count : (text.lastIndex(of: "\n").map { text.utf8.distance(from: text.startIndex, to: $0) + 1 } ?? 0)
            try handle.truncate(atOffset: UInt64(end))
        }
        try handle.seekToEnd()
    }

    deinit { try? handle.close() }

    /// The first line of the journal at `path` (the run it belongs to), or `nil` when there is none.
    public static func header(at path: String) -> String? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        let text = String(decoding: data, as: UTF8.self)
        guard let end = text.firstIndex(of: "\n") else { return nil }
        return String(text[..<end])
    }

    /// Whether `unit` was finished (in this run or an earlier one).
    public func contains(_ unit: String) -> Bool { finished.contains(unit) }

    /// Records `unit` as finished.
    public func record(_ unit: String) throws {
        precondition(!unit.contains("\n"), "journal units are single lines")
        try handle.write(contentsOf: Data((unit + "\n").utf8))
        finished.insert(unit)
    }

    /// Removes the journal once the run is complete.
    public func remove() {
        try? handle.close()
        try? FileManager.default.removeItem(atPath: path)
    }

    /// A 64-bit FNV-1a hash in hex, to name a journal after its run.
    public static func hash(_ text: String) -> String {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in text.utf8 {
            h ^= UInt64(b)
            h = h &* 0x100_0000_01b3
        }
        return String(h, radix: 16)
    }
}

/// A journal that cannot be read or written.
public struct JournalError: Error, CustomStringConvertible, Sendable {
    public let path: String
    public let message: String
    public var description: String { "\(path): \(message)" }
}
