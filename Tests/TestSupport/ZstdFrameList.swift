/// The frames of a zstd stream, read from their headers (RFC 8878), to check how a writer laid them out.
public struct ZstdFrameList {
    /// One frame.
    public struct Frame: Equatable {
        public enum Kind: Equatable {
            /// A zstd frame whose blocks are all raw.
            case raw
            /// A zstd frame with at least one compressed or RLE block.
            case compressed
            case skippable
        }

        public var kind: Kind
        public var offset: Int
        public var size: Int
        /// The frame's declared content size, when it has one.
        public var contentSize: Int?
        /// The sizes of its blocks (content bytes for raw blocks).
        public var blockSizes: [Int]
    }

    public struct Malformed: Error, CustomStringConvertible {
        public let description: String
    }

    public let frames: [Frame]

    /// Walks `bytes` frame by frame; fails on anything that is not a well-formed frame.
    public init(_ bytes: [UInt8]) throws {
        var frames: [Frame] = []
        var at = 0
        func number(_ offset: Int, _ count: Int) throws -> Int {
            guard offset + count <= bytes.count else { throw Malformed(description: "cut off at \(offset)") }
            return (0..<count).reduce(0) { $0 | Int(bytes[offset + $1]) << (8 * $1) }
        }
        while at < bytes.count {
            let magic = try number(at, 4)
            if magic & 0xFFFF_FFF0 == 0x184D_2A50 {
                let size = 8 + (try number(at + 4, 4))
                frames.append(Frame(kind: .skippable, offset: at, size: size, contentSize: nil, blockSizes: []))
                at += size
                continue
            }
            guard magic == 0xFD2F_B528 else { throw Malformed(description: "no frame magic at \(at)") }
            let descriptor = try number(at + 4, 1)
            let singleSegment = descriptor & 0x20 != 0
            let contentSizeBytes = [singleSegment ? 1 : 0, 2, 4, 8][descriptor >> 6]
            let dictionaryBytes = [0, 1, 2, 4][descriptor & 3]
            var cursor = at + 5 + (singleSegment ? 0 : 1) + dictionaryBytes
            var contentSize: Int?
            if contentSizeBytes > 0 {
                contentSize = try number(cursor, contentSizeBytes) + (contentSizeBytes == 2 ? 256 : 0)
                cursor += contentSizeBytes
            }
            var blockSizes: [Int] = []
            var allRaw = true
            while true {
                let header = try number(cursor, 3)
                let type = (header >> 1) & 3
                let size = header >> 3
                guard type != 3 else { throw Malformed(description: "reserved block type at \(cursor)") }
                allRaw = allRaw && type == 0
                blockSizes.append(size)
                cursor += 3 + (type == 1 ? 1 : size)
                if header & 1 == 1 { break }
            }
            if descriptor & 4 != 0 { cursor += 4 }
            guard cursor <= bytes.count else { throw Malformed(description: "frame at \(at) cut off") }
            frames.append(
                Frame(kind: allRaw ? .raw : .compressed, offset: at, size: cursor - at, contentSize: contentSize, blockSizes: blockSizes))
            at = cursor
        }
        self.frames = frames
    }
}
