import DumpKit
import Foundation
import JSONStream

/// The keys of a listed location (a saved `shallow=true` answer), sorted in the database's order and
/// kept on disk beside the answer, read back by index: an export's memory does not grow with the
/// number of children of a location.
///
/// The keys are sorted by an `ExternalSorter` (bounded memory, spilling to the export's folder) on
/// their `PathKey`, whose bytes sort as `DatabaseKeyOrder` does (32-bit integer keys first,
/// numerically, then the other keys by their bytes); `LISTING.keys` then holds the keys' UTF-8 bytes one after another and
/// `LISTING.index` where each one ends (`UInt64`, little-endian), so key `i` is two reads away.
final class ListedKeys {
    let count: Int
    /// Whether the database reads the location back as an array (`ArrayKeyCount`).
    let readsAsArray: Bool
    private let path: String

    /// Sorts the keys of the saved answer `listing` (an object) into `listing.keys` and `listing.index`,
    /// holding at most about `sortBudget` bytes of them in memory.
    init(listing: String, temporaryDirectory: String, sortBudget: Int = 16 << 20) throws {
        path = listing
        let sorter = ExternalSorter(budget: sortBudget, temporaryDirectory: temporaryDirectory)
        let reader = JSONReader(source: try InputFile(path: listing), sourceName: listing)
        try reader.next()  // the object, which the caller saw
        var arrayKeys = ArrayKeyCount()
        while try reader.next() == .name {
            let key = reader.stringValue
            try reader.skipValue()
            arrayKeys.add(key)
            try sorter.add(key: PathKey.of([key]), payload: [])
        }
        let sorted = try sorter.sorted()
        let keys = try Self.create(listing + ".keys"), index = try Self.create(listing + ".index")
        defer {
            close(keys.fd)
            close(index.fd)
        }
        var end: UInt64 = 0
        var keyBuffer: [UInt8] = [], indexBuffer: [UInt8] = []
        while try sorted.next() {
            let key = Array(PathKey.path(sorted.key)[0].utf8)
            keyBuffer += key
            end += UInt64(key.count)
            withUnsafeBytes(of: end.littleEndian) { indexBuffer += $0 }
            if keyBuffer.count >= 1 << 20 || indexBuffer.count >= 1 << 20 {
                try keys.append(&keyBuffer)
                try index.append(&indexBuffer)
            }
        }
        try keys.append(&keyBuffer)
        try index.append(&indexBuffer)
        count = arrayKeys.count
        readsAsArray = arrayKeys.readsAsArray
    }

    /// The key at `i` (`0..<count`), in the database's order. The files are opened for each call
    /// (a page's first and last key, a split's middle one), so an export that lists many locations
    /// holds no descriptors for them.
    func key(_ i: Int) throws -> String {
        precondition(i >= 0 && i < count, "listed key index out of range")
        let index = try openFile(".index"), keys = try openFile(".keys")
        defer {
            close(index)
            close(keys)
        }
        let start = i == 0 ? 0 : try end(of: i - 1, index)
        var bytes = [UInt8](repeating: 0, count: try end(of: i, index) - start)
        try bytes.withUnsafeMutableBytes { try read(keys, $0, at: start, what: ".keys") }
        return String(decoding: bytes, as: UTF8.self)
    }

    private func openFile(_ what: String) throws -> Int32 {
        let fd = open(path + what, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw OutputError(file: path + what, message: "cannot read the sorted keys of a listing: \(String(cString: strerror(errno)))")
        }
        return fd
    }

    /// Where key `i` ends in the keys file.
    private func end(of i: Int, _ index: Int32) throws -> Int {
        var end: UInt64 = 0
        try withUnsafeMutableBytes(of: &end) { try read(index, $0, at: i * 8, what: ".index") }
        return Int(UInt64(littleEndian: end))
    }

    private func read(_ fd: Int32, _ buffer: UnsafeMutableRawBufferPointer, at offset: Int, what: String) throws {
        var done = 0
        while done < buffer.count {
            let n = pread(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset + done))
            guard n > 0 else { throw OutputError(file: path + what, message: "cannot read the sorted keys of a listing") }
            done += n
        }
    }

    /// A file opened for writing, written in whole buffers.
    private struct Writer {
        let fd: Int32
        let path: String
        func append(_ buffer: inout [UInt8]) throws {
            var done = 0
            while done < buffer.count {
                let n = buffer.withUnsafeBytes { write(fd, $0.baseAddress! + done, $0.count - done) }
                guard n > 0 else {
                    throw OutputError(file: path, message: "cannot write the sorted keys of a listing: \(String(cString: strerror(errno)))")
                }
                done += n
            }
            buffer.removeAll(keepingCapacity: true)
        }
    }

    private static func create(_ path: String) throws -> Writer {
        let fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw OutputError(file: path, message: "cannot write the sorted keys of a listing: \(String(cString: strerror(errno)))")
        }
        return Writer(fd: fd, path: path)
    }
}
