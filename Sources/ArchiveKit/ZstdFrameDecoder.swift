import CArchive
import CZstd

/// Decompresses whole zstd frames one at a time (a seekable file's frames), with one libzstd
/// context kept for all of them. Frames with a content checksum are checked against it.
public final class ZstdFrameDecoder {
    private let context: OpaquePointer

    public init() throws(ArchiveError) {
        guard let context = ZSTD_createDCtx() else {
            throw ArchiveError(
                call: "ZSTD_createDCtx", status: ARCHIVE_FATAL, errno: 0, message: "cannot create a zstd context (out of memory)")
        }
        self.context = context
    }

    deinit { ZSTD_freeDCtx(context) }

    /// Decompresses `frame`, which must hold exactly `contentSize` bytes, into the start of `output`
    /// (at least `contentSize` bytes); throws with libzstd's reason otherwise.
    public func decompress(_ frame: UnsafeRawBufferPointer, contentSize: Int, into output: UnsafeMutableRawBufferPointer)
        throws(ArchiveError)
    {
        precondition(output.count >= contentSize)
        let status = ZSTD_decompressDCtx(context, output.baseAddress, contentSize, frame.baseAddress, frame.count)
        if ZSTD_isError(status) != 0 {
            throw ArchiveError(
                call: "ZSTD_decompressDCtx", status: ARCHIVE_FATAL, errno: 0, message: String(cString: ZSTD_getErrorName(status)))
        }
        guard status == contentSize else {
            throw ArchiveError(
                call: "ZSTD_decompressDCtx", status: ARCHIVE_FATAL, errno: 0,
                message: "it holds \(status) bytes, the seek table says \(contentSize)")
        }
    }
}
