import NIOCore

/// An object written in parts that becomes the object only when `complete` succeeds: an S3
/// multipart upload, or a Cloud Storage resumable session. `ObjectStoreClient.create` sends an
/// object of known size through one; `ObjectOutput` a command's output, whose size is known only at
/// its end.
public protocol ObjectUpload: Sendable {
    /// Sends part `number` (from 1): the bytes at `offset`, as long as the client's `partSize` says
    /// (all but the last part). Parts go at most `partsInFlight` at a time, as the client says.
    func send(part number: Int, at offset: Int64, _ body: ByteBuffer) async throws -> UploadedPart
    /// Makes the object of `parts` and then `last` (empty unless the client's `lastPartCompletes`),
    /// `size` bytes in all; a create-only upload that finds an object there leaves it (`.exists`).
    func complete(_ parts: [UploadedPart], last: ByteBuffer, size: Int64) async throws -> CreateOutcome
    /// Drops the upload and its parts (best effort: a failure is not reported); nothing appears.
    func abort() async
}

/// What the store answered for a part, kept for the completion (S3's ETag and CRC-32C).
public struct UploadedPart: Sendable {
    public var number: Int
    public var etag: String? = nil
    public var crc32c: String? = nil
}
