import Crypto
import DumpKit
import Foundation

/// AWS Signature Version 4 for S3 requests (docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv-create-signed-request.html):
/// a canonical request of the method, the URI-encoded path, the sorted query, the signed headers and
/// the payload's SHA-256 (or `UNSIGNED-PAYLOAD`), hashed into a string to sign, signed with a key
/// derived from the secret, the date, the region and the service.
public struct SignatureV4: Sendable {
    public let credentials: AWSCredentials
    public let region: String
    public let service: String

    public init(credentials: AWSCredentials, region: String, service: String = "s3") {
        self.credentials = credentials
        self.region = region
        self.service = service
    }

    /// The `x-amz-content-sha256` value of a body sent without its hash (streamed parts, whose
    /// integrity an `x-amz-checksum-*` or `Content-MD5` header guards instead).
    public static let unsignedPayload = "UNSIGNED-PAYLOAD"

    /// The headers to add to a request: `x-amz-date`, `x-amz-content-sha256`, `x-amz-security-token`
    /// (with a session token) and `Authorization`. `headers` are those the request sends (names in any
    /// case, `host` among them); every one of them is signed.
    public func sign(
        method: String, path: String, query: [(String, String)], headers: [(String, String)],
        payloadHash: String, date: Date = Date()
    ) -> [(String, String)] {
        let (amzDate, day) = Self.timestamps(date)
        var all = headers.map { ($0.0.lowercased(), $0.1.trimmingCharacters(in: .whitespaces)) }
        var added = [("x-amz-date", amzDate), ("x-amz-content-sha256", payloadHash)]
        if let token = credentials.sessionToken { added.append(("x-amz-security-token", token)) }
        all += added
        all.sort { $0.0 < $1.0 }
        let signedHeaders = all.map(\.0).joined(separator: ";")
        let encodedQuery: [(name: String, value: String)] = query.map {
            (Self.uriEncode($0.0, slash: true), Self.uriEncode($0.1, slash: true))
        }
        let sortedQuery = encodedQuery.sorted { a, b in a.name != b.name ? a.name < b.name : a.value < b.value }
        let canonicalQuery: String = sortedQuery.map { $0.name + "=" + $0.value }.joined(separator: "&")
        let canonicalHeaders: String = all.map { $0.0 + ":" + $0.1 + "\n" }.joined()
        let canonicalRequest: String = [
            method, Self.uriEncode(path, slash: false), canonicalQuery, canonicalHeaders, signedHeaders, payloadHash,
        ]
        .joined(separator: "\n")
        let scope = "\(day)/\(region)/\(service)/aws4_request"
        let stringToSign = "AWS4-HMAC-SHA256\n\(amzDate)\n\(scope)\n" + Hex.lowercase(SHA256.hash(data: Data(canonicalRequest.utf8)))
        var key = SymmetricKey(data: Data("AWS4\(credentials.secretAccessKey)".utf8))
        for part in [day, region, service, "aws4_request"] {
            key = SymmetricKey(data: Data(HMAC<SHA256>.authenticationCode(for: Data(part.utf8), using: key)))
        }
        let signature = Hex.lowercase(HMAC<SHA256>.authenticationCode(for: Data(stringToSign.utf8), using: key))
        added.append(
            (
                "Authorization",
                "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyID)/\(scope), SignedHeaders=\(signedHeaders), Signature=\(signature)"
            ))
        return added
    }

    /// `20261126T093000Z` and `20261126` in UTC.
    static func timestamps(_ date: Date) -> (String, String) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        let day = String(format: "%04d%02d%02d", c.year!, c.month!, c.day!)
        return (day + String(format: "T%02d%02d%02dZ", c.hour!, c.minute!, c.second!), day)
    }

    /// S3's URI encoding: every byte but `A-Z a-z 0-9 - . _ ~` as `%XX` (upper-case hex), and `/` too
    /// unless it separates a path's segments.
    public static func uriEncode(_ s: String, slash: Bool) -> String {
        var out = ""
        out.reserveCapacity(s.utf8.count)
        let digits = Array("0123456789ABCDEF")
        for byte in s.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.append(Character(UnicodeScalar(byte)))
            case UInt8(ascii: "/") where !slash:
                out.append("/")
            default:
                out.append("%")
                out.append(digits[Int(byte >> 4)])
                out.append(digits[Int(byte & 0xF)])
            }
        }
        return out
    }

}
