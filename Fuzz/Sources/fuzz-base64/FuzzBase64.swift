import DumpKit
import Foundation
import FuzzSupport

// Strict base64 (the decoder of extract-blobs, with its AVX-512 path for 64-character blocks) on any
// bytes, at three alignments:
// - it accepts exactly the canonical base64 texts: those Foundation decodes and whose re-encoding is
//   the text;
// - what it decodes is Foundation's decoding; `isValid` and `decodedCount` agree with `decode`;
// - `Base64.encode(_:after:)` (inline-blobs' encoder) encodes any bytes as Foundation does.

@main
enum FuzzBase64 {
    static func main() {
        runFuzzer { data in
            let text = Array(data)
            precondition(Base64.encode(data, after: "p") == "p" + Data(text).base64EncodedString(), "Base64.encode differs from Foundation")
            let reference = Data(base64Encoded: Data(text)).flatMap { decoded in
                decoded.base64EncodedData() == Data(text) ? [UInt8](decoded) : nil
            }
            for shift in [0, 1, 7] {
                // The same text at another address, so the vector loads see other alignments.
                let padded = [UInt8](repeating: 0x41, count: shift) + text
                padded.withUnsafeBytes { all in
                    let view = UnsafeRawBufferPointer(rebasing: all[shift...])
                    let decoded = StrictBase64.decode(view)
                    precondition(
                        decoded == reference,
                        "decode gave \(decoded.map { "\($0.count) bytes" } ?? "nil"), Foundation \(reference.map { "\($0.count) bytes" } ?? "nil")"
                    )
                    precondition(StrictBase64.isValid(view) == (decoded != nil), "isValid disagrees with decode")
                    if let decoded { precondition(StrictBase64.decodedCount(view) == decoded.count, "decodedCount disagrees with decode") }
                }
            }
        }
    }
}
