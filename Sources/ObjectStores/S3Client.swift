import AsyncHTTPClient
import CloudHTTP
import Crypto
import DumpKit
import Foundation
import NIOCore
import NIOHTTP1

/// An S3 client written from the S3 API reference for what DumpKit needs: HeadObject, GetObject
/// (ranged), PutObject (conditional), CopyObject onto itself (metadata updates), ListObjectsV2 page by
/// page, and multipart uploads. Every request is signed (`SignatureV4`) and retried (`RetryPolicy`);
/// failures become `ObjectStoreError`s naming the store, the endpoint and the service's error.
public final class S3Client: Sendable {
    public let url: ObjectStoreURL
    public let configuration: AWSConfiguration
    public let checksum: ChecksumMode
    public let retryPolicy: RetryPolicy
    private let credentials: AWSCredentialSource

    /// S3's most parts (its smallest part, all but the last, is 5 MiB: DumpKit's are 8 MiB and up).
    public static let maximumParts = 10_000

    public init(
        url: ObjectStoreURL, configuration: AWSConfiguration, checksum: ChecksumMode = .crc32c, retryPolicy: RetryPolicy = .standard
    ) {
        self.url = url
        self.configuration = configuration
        self.checksum = checksum
        self.retryPolicy = retryPolicy
        credentials = AWSCredentialSource(configuration.credentials, refresh: configuration.refresh)
    }

    /// The endpoint as errors name it.
    public var endpoint: String { configuration.endpoint ?? "https://s3.\(configuration.region).amazonaws.com" }

    /// The part size for an object of `size` bytes: max(8 MiB, ceil(size / 10,000)).
    public static func partSize(for size: Int64) -> Int {
        max(8 << 20, Int((size + Int64(maximumParts) - 1) / Int64(maximumParts)))
    }

    // MARK: Objects

    /// The object's size, hashes and metadata, or `nil` when there is none.
    public func head(key: String) async throws -> StoredObject? {
        let r: Response
        do {
            r = try await send(.HEAD, key: key, accept: [404])
        } catch let e as ObjectStoreError where e.status != nil {
            // A HEAD answer has no body, so no error code: a one-byte GET gets the service's own.
            _ = try await send(.GET, key: key, headers: [("Range", "bytes=0-0")])
            throw e
        }
        guard r.status != 404 else { return nil }
        return storedObject(key: key, headers: r.headers)
    }

    /// GetObject of `range` (all when `nil`), with `If-Match` on `version` (an ETag) when given: a
    /// changed object answers 412. The response's ETag and the whole size (`Content-Range`'s total,
    /// or `Content-Length` of a whole read) come with the bytes.
    public func read(key: String, range: Range<Int64>?, version: String?) async throws -> ObjectRead {
        var headers: [(String, String)] = []
        if let range { headers.append(("Range", "bytes=\(range.lowerBound)-\(range.upperBound - 1)")) }
        if let version { headers.append(("If-Match", "\"\(version)\"")) }
        let r = try await send(.GET, key: key, headers: headers, bodyLimit: range.map { Int($0.count) } ?? Int(Int32.max))
        return ObjectRead(
            body: r.body, version: r.headers.first(name: "etag").map(Self.unquoted),
            size: Self.wholeSize(contentRange: r.headers.first(name: "content-range"))
                ?? (range == nil ? r.headers.first(name: "content-length").flatMap { Int64($0) } : nil))
    }

    /// The whole size a `Content-Range: bytes 0-99/1234` header gives (`nil` for `*`).
    static func wholeSize(contentRange: String?) -> Int64? {
        contentRange.flatMap { $0.split(separator: "/").last }.flatMap { Int64($0.trimmingCharacters(in: .whitespaces)) }
    }

    /// PutObject of `body` with `object`'s metadata; `createOnly` sends `If-None-Match: *`, so an
    /// existing object is never replaced (`.exists`). The payload is signed: its SHA-256 is in the
    /// signature. When `object` records the hashes of a body of its size, that SHA-256 is sent (not
    /// computed again), with its CRC-32C or MD5 in the `checksum` mode's header, so the store refuses
    /// bytes other than those the object records (AWS checks all of them, SeaweedFS the checksum).
    public func put(key: String, body: ByteBuffer, object: StoredObject, createOnly: Bool) async throws -> CreateOutcome {
        var headers = try metadataHeaders(object, key: key)
        if createOnly { headers.append(("If-None-Match", "*")) }
        var recordedSHA256: String?
        if Int64(body.readableBytes) == object.size {
            recordedSHA256 = object.sha256.flatMap { sha256 in
                sha256.utf8.count == 64 && sha256.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) } ? sha256 : nil
            }
            switch checksum {
            case .crc32c: if let crc32c = object.crc32c { headers.append(("x-amz-checksum-crc32c", crc32c)) }
            case .md5: if let md5 = object.md5 { headers.append(("Content-MD5", md5)) }
            case .off: break
            }
        }
        let r = try await send(
            .PUT, key: key, headers: headers, body: .signed(body, sha256: recordedSHA256), accept: createOnly ? [412] : [])
        return r.status == 412 ? .exists : .created
    }

    /// Replaces the metadata of the object (CopyObject onto itself, `x-amz-metadata-directive: REPLACE`),
    /// only while its ETag is still `etag`.
    public func replaceMetadata(key: String, object: StoredObject, etag: String) async throws {
        var headers = try metadataHeaders(object, key: key)
        headers.append(("x-amz-copy-source", "/" + SignatureV4.uriEncode(url.bucket + "/" + key, slash: false)))
        headers.append(("x-amz-metadata-directive", "REPLACE"))
        headers.append(("x-amz-copy-source-if-match", "\"\(etag)\""))
        _ = try await send(.PUT, key: key, headers: headers)
    }

    /// One page of ListObjectsV2: the objects whose keys start with `prefix`, in UTF-8 byte order,
    /// after the page `token` names, and the next page's token. `maxKeys` (at most 1,000) sets the page size.
    public func listPage(prefix: String, token: String?, maxKeys: Int = 1000) async throws -> ListPage {
        var query = [("list-type", "2"), ("prefix", prefix), ("max-keys", String(maxKeys))]
        if let token { query.append(("continuation-token", token)) }
        let r = try await send(.GET, key: nil, query: query, bodyLimit: 64 << 20)
        guard let xml = XMLElementTree.parse(Data(r.body.readableBytesView)), xml.name == "ListBucketResult" else {
            throw ObjectStoreError(
                store: url.description, endpoint: endpoint, message: "ListObjectsV2 answered something that is not a ListBucketResult")
        }
        let objects = xml.all("Contents").compactMap { item -> StoredObject? in
            guard let key = item["Key"]?.text, let size = item["Size"].flatMap({ Int64($0.text) }) else { return nil }
            var o = StoredObject(key: key, size: size)
            o.etag = item["ETag"].map { Self.unquoted($0.text) }
            o.md5 = o.etag.flatMap(Self.md5(fromETag:))
            o.updated = item["LastModified"].flatMap { Self.milliseconds(iso8601: $0.text) }
            return o
        }
        let next = xml["IsTruncated"]?.text == "true" ? xml["NextContinuationToken"]?.text : nil
        if xml["IsTruncated"]?.text == "true", next == nil {
            throw ObjectStoreError(
                store: url.description, endpoint: endpoint, message: "a truncated listing page has no NextContinuationToken")
        }
        return ListPage(objects: objects, next: next)
    }

    // MARK: Multipart uploads

    /// The part size of an upload whose size is not known at its start: 8 MiB, doubled every 1,000
    /// parts, so 10,000 parts hold about 8 TB while a small output's parts stay small.
    static func growingPartSize(_ number: Int) -> Int {
        (8 << 20) << min((number - 1) / 1000, 9)
    }

    /// CreateMultipartUpload with `object`'s metadata; the upload's parts become the object only in
    /// its `complete` (CompleteMultipartUpload, with `If-None-Match: *` when `createOnly`).
    public func beginUpload(key: String, object: StoredObject, createOnly: Bool) async throws -> (any ObjectUpload)? {
        var headers = try metadataHeaders(object, key: key)
        if checksum == .crc32c { headers.append(("x-amz-checksum-algorithm", "CRC32C")) }
        let created = try await send(.POST, key: key, query: [("uploads", "")], headers: headers, bodyLimit: 1 << 20)
        guard let uploadID = XMLElementTree.parse(Data(created.body.readableBytesView))?["UploadId"]?.text else {
            throw ObjectStoreError(
                store: url.description, endpoint: endpoint, object: key, message: "CreateMultipartUpload answered no UploadId")
        }
        return MultipartUpload(client: self, key: key, uploadID: uploadID, createOnly: createOnly)
    }

    /// One multipart upload: parts in any order, completed with their ETags (and CRC-32Cs).
    struct MultipartUpload: ObjectUpload {
        let client: S3Client
        let key: String
        let uploadID: String
        let createOnly: Bool

        func send(part number: Int, at offset: Int64, _ body: ByteBuffer) async throws -> UploadedPart {
            try await client.uploadPart(key: key, uploadID: uploadID, number: number, body: body)
        }

        func complete(_ parts: [UploadedPart], last: ByteBuffer, size: Int64) async throws -> CreateOutcome {
            precondition(last.readableBytes == 0, "S3 takes the last part before the completion")
            var xml = "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
            for part in parts.sorted(by: { $0.number < $1.number }) {
                xml += "<Part><PartNumber>\(part.number)</PartNumber><ETag>\(xmlEscaped("\"\(part.etag ?? "")\""))</ETag>"
                if let crc = part.crc32c { xml += "<ChecksumCRC32C>\(crc)</ChecksumCRC32C>" }
                xml += "</Part>"
            }
            xml += "</CompleteMultipartUpload>"
            let completed = try await client.send(
                .POST, key: key, query: [("uploadId", uploadID)], headers: createOnly ? [("If-None-Match", "*")] : [],
                body: .signed(ByteBuffer(string: xml)), accept: createOnly ? [412] : [], bodyLimit: 1 << 20)
            if completed.status == 412 {
                await abort()
                return .exists
            }
            // CompleteMultipartUpload may answer 200 with an <Error> body.
            if let answer = XMLElementTree.parse(Data(completed.body.readableBytesView)), answer.name == "Error" {
                throw ObjectStoreError(
                    store: client.url.description, endpoint: client.endpoint, object: key, status: 200, code: answer["Code"]?.text,
                    message: answer["Message"]?.text ?? "CompleteMultipartUpload failed")
            }
            return .created
        }

        func abort() async {
            try? await client.abort(key: key, uploadID: uploadID)
        }
    }

    /// Uploads one part, its payload unsigned and guarded by the `checksum` mode's header; returns its
    /// number, ETag and CRC-32C (for the completion, in `crc32c` mode).
    func uploadPart(key: String, uploadID: String, number: Int, body: ByteBuffer) async throws -> UploadedPart {
        var headers: [(String, String)] = []
        var crc: String?
        switch checksum {
        case .crc32c:
            var c = CRC32C()
            body.withUnsafeReadableBytes { c.update($0) }
            crc = c.base64
            headers.append(("x-amz-checksum-crc32c", c.base64))
        case .md5:
            headers.append(("Content-MD5", Data(body.withUnsafeReadableBytes { Insecure.MD5.hash(data: $0) }).base64EncodedString()))
        case .off:
            break
        }
        let r = try await send(
            .PUT, key: key, query: [("partNumber", String(number)), ("uploadId", uploadID)], headers: headers, body: .unsigned(body))
        guard let etag = r.headers.first(name: "etag") else {
            throw ObjectStoreError(
                store: url.description, endpoint: endpoint, object: key, message: "UploadPart \(number) answered no ETag")
        }
        return UploadedPart(number: number, etag: Self.unquoted(etag), crc32c: crc)
    }

    /// S3's smallest part, all but the last of an upload.
    public static let minimumPartSize: Int64 = 5 << 20
    /// S3's largest part, also of a copied range.
    public static let maximumPartSize: Int64 = 5 << 30

    /// UploadPartCopy: part `number` of the upload is `range` of the object `sourceKey` in this bucket,
    /// copied by the store, only while its ETag is still `etag`; returns the part's ETag (and the
    /// CRC-32C the store computed, for an upload with CRC-32C checksums).
    func copyPart(key: String, uploadID: String, number: Int, sourceKey: String, range: Range<Int64>, etag: String?) async throws
        -> UploadedPart
    {
        var headers = [
            ("x-amz-copy-source", "/" + SignatureV4.uriEncode(url.bucket + "/" + sourceKey, slash: false)),
            ("x-amz-copy-source-range", "bytes=\(range.lowerBound)-\(range.upperBound - 1)"),
        ]
        if let etag { headers.append(("x-amz-copy-source-if-match", "\"\(etag)\"")) }
        let r = try await send(
            .PUT, key: key, query: [("partNumber", String(number)), ("uploadId", uploadID)], headers: headers, bodyLimit: 1 << 20)
        // UploadPartCopy may answer 200 with an <Error> body.
        let answer = XMLElementTree.parse(Data(r.body.readableBytesView))
        guard let answer, answer.name != "Error", let etag = answer["ETag"]?.text else {
            throw ObjectStoreError(
                store: url.description, endpoint: endpoint, object: key, status: r.status, code: answer?["Code"]?.text,
                message: answer?["Message"]?.text ?? "UploadPartCopy \(number) of \(sourceKey) answered no ETag")
        }
        return UploadedPart(number: number, etag: Self.unquoted(etag), crc32c: answer["ChecksumCRC32C"]?.text)
    }

    /// AbortMultipartUpload: the store drops the parts.
    public func abort(key: String, uploadID: String) async throws {
        _ = try await send(.DELETE, key: key, query: [("uploadId", uploadID)], accept: [404])
    }

    /// The multipart uploads in progress under `prefix` (their keys and ids), for tests and clean-ups.
    public func uploadsInProgress(prefix: String) async throws -> [(key: String, uploadID: String)] {
        let r = try await send(.GET, key: nil, query: [("uploads", ""), ("prefix", prefix)], bodyLimit: 64 << 20)
        guard let xml = XMLElementTree.parse(Data(r.body.readableBytesView)) else { return [] }
        return xml.all("Upload").compactMap { u in u["Key"].flatMap { k in u["UploadId"].map { (k.text, $0.text) } } }
    }

    // MARK: Requests

    enum Body {
        case empty
        /// Sent with its SHA-256 in `x-amz-content-sha256` (covered by the signature): `sha256` when
        /// known (hex), else computed.
        case signed(ByteBuffer, sha256: String? = nil)
        /// Sent as `UNSIGNED-PAYLOAD`.
        case unsigned(ByteBuffer)
    }

    struct Response {
        var status: Int
        var headers: HTTPHeaders
        var body: ByteBuffer
    }

    /// Sends a signed request to the bucket (or to `key` in it), retried by the policy; a status other
    /// than 2xx and `accept` throws an `ObjectStoreError`.
    func send(
        _ method: HTTPMethod, key: String?, query: [(String, String)] = [], headers: [(String, String)] = [],
        body: Body = .empty, accept: Set<Int> = [], bodyLimit: Int = 1 << 20
    ) async throws -> Response {
        let (base, host, path) = address(key: key)
        let payloadHash: String
        var buffer: ByteBuffer?
        switch body {
        case .empty:
            payloadHash = Hex.lowercase(SHA256.hash(data: Data()))
        case .signed(let b, let sha256):
            payloadHash = sha256 ?? b.withUnsafeReadableBytes { Hex.lowercase(SHA256.hash(data: $0)) }
            buffer = b
        case .unsigned(let b):
            payloadHash = SignatureV4.unsignedPayload
            buffer = b
        }
        let queryString = query.map { SignatureV4.uriEncode($0.0, slash: true) + "=" + SignatureV4.uriEncode($0.1, slash: true) }.joined(
            separator: "&")
        let requestURL = base + SignatureV4.uriEncode(path, slash: false) + (query.isEmpty ? "" : "?" + queryString)
        let described = "\(method.rawValue) \(key ?? url.bucket)"
        do {
            return try await retryPolicy.run { _ in
                var request = HTTPClientRequest(url: requestURL)
                request.method = method
                let signer = SignatureV4(credentials: try await credentials.current(), region: configuration.region)
                let signed = signer.sign(
                    method: method.rawValue, path: path, query: query, headers: [("host", host)] + headers, payloadHash: payloadHash)
                request.headers.add(name: "Host", value: host)
                for (name, value) in headers + signed { request.headers.add(name: name, value: value) }
                if let buffer {
                    request.body = .bytes(buffer)
                }
                let response = try await SharedHTTPClient.client.execute(request, timeout: .seconds(300))
                let status = Int(response.status.code)
                if (200..<300).contains(status) || accept.contains(status) {
                    let data = try await response.body.collect(upTo: method == .HEAD ? 0 : max(bodyLimit, 1))
                    return Response(status: status, headers: response.headers, body: data)
                }
                let data = (try? await response.body.collect(upTo: 1 << 20)) ?? ByteBuffer()
                let xml = XMLElementTree.parse(Data(data.readableBytesView))
                throw HTTPServiceError(
                    status: status, code: xml?["Code"]?.text ?? Self.code(forStatus: status),
                    message: xml?["Message"]?.text ?? response.status.reasonPhrase, request: described)
            }
        } catch let e as HTTPServiceError {
            throw ObjectStoreError(
                store: url.description, endpoint: endpoint, object: key, status: e.status, code: e.code, message: e.message)
        } catch let e as ObjectStoreError {
            throw e
        } catch {
            throw ObjectStoreError(store: url.description, endpoint: endpoint, object: key, message: "\(described) failed: \(error)")
        }
    }

    /// Where a request for `key` (the bucket itself when `nil`) goes: the URL before the path, the
    /// `Host` header and the unencoded path. Custom endpoints are addressed path-style
    /// (`http://host:port/BUCKET/KEY`); AWS virtual-host style (`https://BUCKET.s3.REGION.amazonaws.com/KEY`),
    /// except buckets with dots, whose names the wildcard certificate does not cover (path-style there).
    func address(key: String?) -> (base: String, host: String, path: String) {
        let bucketPath = "/" + url.bucket + (key.map { "/" + $0 } ?? "/")
        if let endpoint = configuration.endpoint {
            return (endpoint, String(endpoint.drop { $0 != "/" }.dropFirst(2).prefix { $0 != "/" }), bucketPath)
        }
        if url.bucket.contains(".") {
            let host = "s3.\(configuration.region).amazonaws.com"
            return ("https://" + host, host, bucketPath)
        }
        let host = "\(url.bucket).s3.\(configuration.region).amazonaws.com"
        return ("https://" + host, host, "/" + (key ?? ""))
    }

    /// S3's error code for a body-less error response (HEAD).
    static func code(forStatus status: Int) -> String? {
        switch status {
        case 403: return "Forbidden"
        case 404: return "NotFound"
        case 412: return "PreconditionFailed"
        default: return nil
        }
    }

    // MARK: Metadata

    /// The headers that carry `object`'s metadata; custom values must be ASCII (S3 sends them as headers).
    func metadataHeaders(_ object: StoredObject, key: String) throws -> [(String, String)] {
        var headers: [(String, String)] = []
        func add(_ name: String, _ value: String?) { if let value { headers.append((name, value)) } }
        add("Content-Type", object.contentType ?? "application/octet-stream")
        add("Cache-Control", object.cacheControl)
        add("Content-Disposition", object.contentDisposition)
        add("Content-Encoding", object.contentEncoding)
        add("Content-Language", object.contentLanguage)
        var custom = object.customMetadata
        custom[MetadataKeys.sha256] = object.sha256
        custom[MetadataKeys.md5] = object.md5
        custom[MetadataKeys.crc32c] = object.crc32c
        for (name, value) in custom.sorted(by: { $0.key < $1.key }) {
            guard value.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }),
                name.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: ":") })
            else {
                throw ObjectStoreError(
                    store: url.description, endpoint: endpoint, object: key,
                    message: "custom metadata \(String(reflecting: name)) is not printable ASCII, which S3 metadata headers cannot carry")
            }
            headers.append(("x-amz-meta-" + name, value))
        }
        return headers
    }

    /// The object a HeadObject or GetObject response describes.
    func storedObject(key: String, headers: HTTPHeaders) -> StoredObject {
        var o = StoredObject(key: key, size: headers.first(name: "content-length").flatMap { Int64($0) } ?? 0)
        o.etag = headers.first(name: "etag").map(Self.unquoted)
        o.contentType = headers.first(name: "content-type")
        o.cacheControl = headers.first(name: "cache-control")
        o.contentDisposition = headers.first(name: "content-disposition")
        o.contentEncoding = headers.first(name: "content-encoding")
        o.contentLanguage = headers.first(name: "content-language")
        o.updated = headers.first(name: "last-modified").flatMap(Self.milliseconds(httpDate:))
        for header in headers where header.name.lowercased().hasPrefix("x-amz-meta-") {
            o.customMetadata[MetadataKeys.restoringCase(String(header.name.lowercased().dropFirst(11)))] = header.value
        }
        MetadataKeys.takeHashes(&o)
        if o.md5 == nil { o.md5 = o.etag.flatMap(Self.md5(fromETag:)) }
        return o
    }

    static func unquoted(_ s: String) -> String {
        s.hasPrefix("\"") && s.hasSuffix("\"") && s.count >= 2 ? String(s.dropFirst().dropLast()) : s
    }

    /// The base64 MD5 a single-part ETag (32 hex digits) is; `nil` for multipart ETags (`...-N`).
    static func md5(fromETag etag: String) -> String? {
        let hex = Array(etag.utf8)
        guard hex.count == 32 else { return nil }
        var bytes: [UInt8] = []
        for i in stride(from: 0, to: 32, by: 2) {
            guard let b = UInt8(String(decoding: hex[i..<i + 2], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(b)
        }
        return Data(bytes).base64EncodedString()
    }

    static func milliseconds(iso8601 s: String) -> Int64? {
        date(iso8601: s).map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) }
    }

    /// An ISO 8601 time, with or without fractional seconds.
    static func date(iso8601 s: String) -> Date? {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return f.date(from: s) ?? ISO8601DateFormatter().date(from: s)
    }

    static func milliseconds(httpDate s: String) -> Int64? {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "GMT")
        f.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return f.date(from: s).map { Int64($0.timeIntervalSince1970 * 1000) }
    }
}
