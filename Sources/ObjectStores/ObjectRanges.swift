import CloudHTTP
import DumpKit
import JSONStream
import NIOCore

/// One object of a bucket read at any offset (`PositionalInput`): the index pass and the shards of a
/// dump in a bucket read their byte ranges with ranged GETs. Reads go in blocks of `blockSize`,
/// `blocksAhead` fetched ahead of the one being read once reads go front to back (both readers go
/// through their ranges that way), and only of the version first seen (ETag or generation): an object replaced meanwhile
/// fails the read instead of mixing two versions. Memory: the blocks ahead and the one before.
package final class ObjectRanges: PositionalByteSource {
    static let blockSize: Int64 = 8 << 20
    static let blocksAhead = 4

    private let client: any ObjectStoreClient
    private let key: String
    private let version: String?
    package let size: Int64
    /// The version read, as the store names it (`ETag …` or `generation …`): what an index records.
    package let versionName: String?
    /// Blocks fetched or under way, by block number.
    private var blocks: [Int64: Task<ByteBuffer, any Error>] = [:]
    /// The block of the last read, except reads in the block before it.
    private var previous: Int64 = -2

    /// The object `location` names when it is an `s3://` or `gs://` URL, else `nil`.
    package static func open(_ location: String, options: ObjectStoreOptions) throws -> ObjectRanges? {
        guard let (client, key) = try options.object(at: location) else { return nil }
        let object = try client.existing(key: key)
        return ObjectRanges(
            client: client, key: key, version: object.generation ?? object.etag, size: object.size,
            versionName: object.generation.map { "generation \($0)" } ?? object.etag.map { "ETag \($0)" })
    }

    init(client: any ObjectStoreClient, key: String, version: String?, size: Int64, versionName: String?) {
        self.client = client
        self.key = key
        self.version = version
        self.size = size
        self.versionName = versionName
    }

    deinit { for task in blocks.values { task.cancel() } }

    package func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard offset < size, buffer.count > 0 else { return 0 }
        let number = offset / Self.blockSize
        // Blocks ahead only for a reader going front to back: a look at the first bytes, or the jump
        // to a shard's range, fetches just the block it needs. A read in the block before (the index
        // pass's checksums of the bytes its reader just passed) changes nothing.
        let sequential = number == previous || number == previous + 1
        if number != previous - 1 { previous = number }
        let last = sequential ? min(number + Int64(Self.blocksAhead), (size - 1) / Self.blockSize) : number
        for ahead in number...last where blocks[ahead] == nil {
            let range = ahead * Self.blockSize..<min((ahead + 1) * Self.blockSize, size)
            let client = client, key = key, version = version
            blocks[ahead] = Task { try await client.read(key: key, range: range, version: version).body }
        }
        // The block before the furthest stays, for those reads just behind it.
        for old in blocks.keys where old < previous - 1 {
            blocks.removeValue(forKey: old)?.cancel()
        }
        let task = blocks[number]!
        let block = try runBlocking { try await task.value }
        let start = Int(offset - number * Self.blockSize)
        guard block.readableBytes == Int(min(Self.blockSize, size - number * Self.blockSize)) else {
            throw ObjectStoreError(
                store: client.url.description, endpoint: client.endpoint, object: key,
                message: "asked for block \(number) of \(size) bytes, got \(block.readableBytes): the object changed while it was read")
        }
        let count = min(buffer.count, block.readableBytes - start)
        block.withUnsafeReadableBytes {
            UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count]).copyMemory(
                from: UnsafeRawBufferPointer(rebasing: $0[start..<start + count]))
        }
        return count
    }
}
