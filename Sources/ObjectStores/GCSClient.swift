import AsyncHTTPClient
import CloudHTTP
import DumpKit
import Foundation
import NIOCore
import NIOHTTP1

/// A Google Cloud Storage client over its JSON API (cloud.google.com/storage/docs/json_api), which,
/// unlike the S3-interoperable XML API, keeps custom metadata keys with their case
/// (`firebaseStorageDownloadTokens`): object resources (GET, PATCH), uploads (`uploadType=multipart`
/// with a metadata part for small objects, resumable sessions for large ones), listings with
/// `pageToken`, and media with `alt=media` and `Range`. Requests carry a bearer token from a
/// `GoogleAccessTokenProvider`, or none against an emulator (`STORAGE_EMULATOR_HOST`).
public final class GCSClient: Sendable {
    public let url: ObjectStoreURL
    /// `https://storage.googleapis.com`, or the emulator's address.
    public let endpoint: String
    public let tokens: GoogleAccessTokenProvider?
    public let retryPolicy: RetryPolicy

    /// The chunk of a resumable upload (a multiple of 256 KiB, as the API requires).
    public static let resumableChunk = 8 << 20

    public init(url: ObjectStoreURL, endpoint: String, tokens: GoogleAccessTokenProvider?, retryPolicy: RetryPolicy = .standard) {
        self.url = url
        self.endpoint = endpoint.hasSuffix("/") ? String(endpoint.dropLast()) : endpoint
        self.tokens = tokens
        self.retryPolicy = retryPolicy
    }

    /// The client the environment asks for: `STORAGE_EMULATOR_HOST` (`http://host:port` or `host:port`;
    /// no auth), else Google with a token from `--access-token`, `GOOGLE_OAUTH_ACCESS_TOKEN` or
    /// `GOOGLE_APPLICATION_CREDENTIALS`.
    public static func fromEnvironment(
        url: ObjectStoreURL, accessToken: String?, endpoint: String? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> GCSClient {
        if let emulator = endpoint ?? environment["STORAGE_EMULATOR_HOST"].flatMap({ $0.isEmpty ? nil : $0 }) {
            let base = emulator.hasPrefix("http://") || emulator.hasPrefix("https://") ? emulator : "http://" + emulator
            return GCSClient(url: url, endpoint: base, tokens: accessToken.map { GoogleAccessTokenProvider(fixedToken: $0) })
        }
        guard
            let tokens = try GoogleAccessTokenProvider.fromEnvironment(
                accessToken: accessToken, scopes: [GoogleAccessTokenProvider.storageScope], environment: environment)
        else {
            throw ObjectStoreError(
                store: url.description, endpoint: "https://storage.googleapis.com",
                message:
                    "no credentials: set GOOGLE_APPLICATION_CREDENTIALS to a service-account key, or pass --access-token (GOOGLE_OAUTH_ACCESS_TOKEN), or STORAGE_EMULATOR_HOST for an emulator"
            )
        }
        return GCSClient(url: url, endpoint: "https://storage.googleapis.com", tokens: tokens)
    }

    private var bucketPath: String { "/storage/v1/b/" + Self.encode(url.bucket) }

    /// The object resource's URL.
    private func objectURL(_ key: String) -> String {
        let path: String = bucketPath + "/o/" + Self.encode(key)
        return endpoint + path
    }

    /// The object resource, or `nil` when there is none.
    public func head(key: String) async throws -> StoredObject? {
        let r = try await send(.GET, objectURL(key), object: key, accept: [404])
        guard r.status != 404 else { return nil }
        return try storedObject(json: r.body, key: key)
    }

    /// The object's stored bytes (`alt=media`, `Accept-Encoding: gzip` so that an object stored gzip-encoded
    /// is not decompressed on the way), all or `range`, of the generation `version` names when given
    /// (a replaced or deleted object answers 404). The response's `X-Goog-Generation` and the whole
    /// size come with the bytes.
    public func read(key: String, range: Range<Int64>?, version: String?) async throws -> ObjectRead {
        var headers: [(String, String)] = [("Accept-Encoding", "gzip")]
        if let range { headers.append(("Range", "bytes=\(range.lowerBound)-\(range.upperBound - 1)")) }
        var target = objectURL(key) + "?alt=media"
        if let version { target += "&generation=" + Self.encode(version) }
        let r = try await send(.GET, target, headers: headers, object: key, bodyLimit: range.map { Int($0.count) } ?? Int(Int32.max))
        let whole =
            S3Client.wholeSize(contentRange: r.headers.first(name: "content-range"))
            ?? r.headers.first(name: "x-goog-stored-content-length").flatMap { Int64($0) }
            ?? (range == nil ? r.headers.first(name: "content-length").flatMap { Int64($0) } : nil)
        return ObjectRead(body: r.body, version: r.headers.first(name: "x-goog-generation"), size: whole)
    }

    /// Uploads `body` with `object`'s metadata in one `uploadType=multipart` request;
    /// `createOnly` sends `ifGenerationMatch=0`, so an existing object is never replaced (`.exists`).
    public func put(key: String, body: ByteBuffer, object: StoredObject, createOnly: Bool) async throws -> CreateOutcome {
        let boundary = "dumpkit-" + UUID().uuidString
        var payload = ByteBuffer()
        payload.writeString("--\(boundary)\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n")
        payload.writeBytes(try resource(object, key: key))
        payload.writeString("\r\n--\(boundary)\r\nContent-Type: \(object.contentType ?? "application/octet-stream")\r\n\r\n")
        payload.writeImmutableBuffer(body)
        payload.writeString("\r\n--\(boundary)--\r\n")
        var target = endpoint + "/upload" + bucketPath + "/o?uploadType=multipart"
        if createOnly { target += "&ifGenerationMatch=0" }
        let r = try await send(
            .POST, target, headers: [("Content-Type", "multipart/related; boundary=\(boundary)")], body: payload,
            object: key, accept: createOnly ? [412] : [])
        return r.status == 412 ? .exists : .created
    }

    /// Starts a resumable session for `object` (its size stated only by the last chunk). A create-only
    /// upload first looks whether the object exists, so that no large upload is made in vain
    /// (`ifGenerationMatch=0` still decides at the end): `nil` when it does.
    public func beginUpload(key: String, object: StoredObject, createOnly: Bool) async throws -> (any ObjectUpload)? {
        if createOnly, try await head(key: key) != nil { return nil }
        var target = endpoint + "/upload" + bucketPath + "/o?uploadType=resumable"
        if createOnly { target += "&ifGenerationMatch=0" }
        let started = try await send(
            .POST, target, headers: [("Content-Type", "application/json; charset=UTF-8")],
            body: ByteBuffer(bytes: try resource(object, key: key)), object: key, accept: createOnly ? [412] : [])
        if started.status == 412 { return nil }
        guard let session = started.headers.first(name: "location") else {
            throw ObjectStoreError(
                store: url.description, endpoint: endpoint, object: key, message: "the resumable upload answered no Location")
        }
        return ResumableUpload(client: self, key: key, session: session)
    }

    /// One resumable session: chunks in order, one at a time (`Content-Range: bytes A-B/*`); the chunk
    /// that states the total size makes the object. Where the session took less of a chunk than was
    /// sent (its `Range` answer), the rest is sent again.
    struct ResumableUpload: ObjectUpload {
        let client: GCSClient
        let key: String
        let session: String

        func send(part number: Int, at offset: Int64, _ body: ByteBuffer) async throws -> UploadedPart {
            _ = try await put(body, at: offset, size: nil)
            return UploadedPart(number: number)
        }

        func complete(_ parts: [UploadedPart], last: ByteBuffer, size: Int64) async throws -> CreateOutcome {
            try await put(last, at: size - Int64(last.readableBytes), size: size)
        }

        func abort() async {
            // The documented cancel: DELETE on the session URI (answered 499).
            _ = try? await client.send(.DELETE, session, object: key, accept: Set(400..<600))
        }

        /// PUTs `body` at `offset`, again from where the session stands until it holds all of it; with
        /// `size`, the last chunk, whose answer is the object.
        private func put(_ body: ByteBuffer, at offset: Int64, size: Int64?) async throws -> CreateOutcome {
            var sent = 0
            repeat {
                let rest = body.getSlice(at: body.readerIndex + sent, length: body.readableBytes - sent)!
                let start = offset + Int64(sent)
                let total = size.map(String.init) ?? "*"
                let range =
                    rest.readableBytes == 0 ? "bytes */\(total)" : "bytes \(start)-\(start + Int64(rest.readableBytes) - 1)/\(total)"
                let r = try await client.send(
                    .PUT, session, headers: [("Content-Range", range)], body: rest, object: key, accept: [308, 412])
                if r.status == 412 { return .exists }
                guard r.status == 308 else {
                    guard size != nil else {
                        throw ObjectStoreError(
                            store: client.url.description, endpoint: client.endpoint, object: key,
                            message: "the resumable session ended at a chunk that was not the last")
                    }
                    return .created
                }
                // "Range: bytes=0-N" is what the session holds; go on after it.
                let held = r.headers.first(name: "range").flatMap { Int64($0.split(separator: "-").last ?? "") }.map { $0 + 1 } ?? 0
                guard held > start else {
                    throw ObjectStoreError(
                        store: client.url.description, endpoint: client.endpoint, object: key,
                        message: "the resumable session took no bytes at \(start)")
                }
                sent = Int(held - offset)
            } while sent < body.readableBytes || size != nil
            return .created
        }
    }

    /// Sets the object's content metadata and custom metadata to `object`'s (PATCH of the resource:
    /// fields `object` lacks and custom keys of `existing` it lacks are set to null, which removes them),
    /// only while the object is still the generation `existing` describes.
    public func patch(key: String, object: StoredObject, existing: StoredObject) async throws {
        var json: [String: Any] = [:]
        json["contentType"] = object.contentType ?? existing.contentType
        json["cacheControl"] = object.cacheControl ?? NSNull()
        json["contentDisposition"] = object.contentDisposition ?? NSNull()
        json["contentEncoding"] = object.contentEncoding ?? NSNull()
        json["contentLanguage"] = object.contentLanguage ?? NSNull()
        var metadata: [String: Any] = object.customMetadata
        metadata[MetadataKeys.sha256] = object.sha256 ?? existing.sha256
        for k in existing.customMetadata.keys where metadata[k] == nil { metadata[k] = NSNull() }
        json["metadata"] = metadata
        let body = try JSONSerialization.data(withJSONObject: json, options: .sortedKeys)
        let condition = existing.generation.map { "?ifGenerationMatch=" + $0 } ?? ""
        _ = try await send(
            .PATCH, objectURL(key) + condition, headers: [("Content-Type", "application/json; charset=UTF-8")],
            body: ByteBuffer(bytes: body), object: key)
    }

    /// Cloud Storage's most source objects of one compose.
    public static let maximumComposeSources = 32

    /// Composes `sources` (names, with the generation each must still be when given), in order, into
    /// `key` with `object`'s content type, in the store: the new object appears whole. Returns it.
    public func compose(_ sources: [(key: String, generation: String?)], into key: String, object: StoredObject) async throws
        -> StoredObject
    {
        precondition(sources.count <= Self.maximumComposeSources, "compose takes at most 32 sources")
        let list: [[String: Any]] = sources.map { source in
            var item: [String: Any] = ["name": source.key]
            if let generation = source.generation { item["objectPreconditions"] = ["ifGenerationMatch": generation] }
            return item
        }
        let json: [String: Any] = [
            "sourceObjects": list, "destination": ["contentType": object.contentType ?? "application/octet-stream"],
        ]
        let body = try JSONSerialization.data(withJSONObject: json, options: .sortedKeys)
        let r = try await send(
            .POST, objectURL(key) + "/compose", headers: [("Content-Type", "application/json; charset=UTF-8")],
            body: ByteBuffer(bytes: body), object: key)
        return try storedObject(json: r.body, key: key)
    }

    /// Deletes the object, only the generation given when given; one already gone is not an error.
    public func delete(key: String, generation: String?) async throws {
        _ = try await send(.DELETE, objectURL(key) + (generation.map { "?ifGenerationMatch=" + $0 } ?? ""), object: key, accept: [404])
    }

    /// One page of the objects whose names start with `prefix` (lexicographic order) after the page
    /// `token` names, and the next page's token.
    public func listPage(prefix: String, token: String?, maxResults: Int = 1000) async throws -> ListPage {
        var target = endpoint + bucketPath + "/o?prefix=" + Self.encode(prefix) + "&maxResults=\(maxResults)"
        if let token { target += "&pageToken=" + Self.encode(token) }
        let r = try await send(.GET, target, object: nil, bodyLimit: 64 << 20)
        guard let json = try? JSONSerialization.jsonObject(with: Data(r.body.readableBytesView)) as? [String: Any] else {
            throw ObjectStoreError(store: url.description, endpoint: endpoint, message: "the object listing is not a JSON object")
        }
        let items = json["items"] as? [[String: Any]] ?? []
        return ListPage(objects: items.compactMap { Self.storedObject($0) }, next: json["nextPageToken"] as? String)
    }

    // MARK: Requests

    struct Response {
        var status: Int
        var headers: HTTPHeaders
        var body: ByteBuffer
    }

    func send(
        _ method: HTTPMethod, _ target: String, headers: [(String, String)] = [], body: ByteBuffer? = nil, object: String?,
        accept: Set<Int> = [], bodyLimit: Int = 16 << 20
    ) async throws -> Response {
        let described = "\(method.rawValue) \(object ?? url.bucket)"
        do {
            return try await retryPolicy.run { _ in
                var request = HTTPClientRequest(url: target)
                request.method = method
                for (name, value) in headers { request.headers.add(name: name, value: value) }
                if let tokens { request.headers.add(name: "Authorization", value: "Bearer " + (try await tokens.accessToken())) }
                if let body {
                    request.body = .bytes(body)
                } else if method == .POST || method == .PUT {
                    request.headers.add(name: "Content-Length", value: "0")
                }
                let response = try await SharedHTTPClient.client.execute(request, timeout: .seconds(300))
                let status = Int(response.status.code)
                if (200..<300).contains(status) || accept.contains(status) {
                    return Response(
                        status: status, headers: response.headers, body: try await response.body.collect(upTo: max(bodyLimit, 1)))
                }
                let data = (try? await response.body.collect(upTo: 1 << 20)) ?? ByteBuffer()
                let error =
                    (try? JSONSerialization.jsonObject(with: Data(data.readableBytesView)) as? [String: Any])?["error"] as? [String: Any]
                if status == 401, let tokens { await tokens.invalidate() }
                let text = String(decoding: data.readableBytesView.prefix(200), as: UTF8.self).trimmingCharacters(
                    in: .whitespacesAndNewlines)
                throw HTTPServiceError(
                    status: status,
                    code: (error?["status"] as? String) ?? (error?["errors"] as? [[String: Any]])?.first?["reason"] as? String,
                    message: error?["message"] as? String ?? (text.isEmpty ? response.status.reasonPhrase : text), request: described)
            }
        } catch let e as HTTPServiceError {
            throw ObjectStoreError(
                store: url.description, endpoint: endpoint, object: object, status: e.status, code: e.code, message: e.message)
        } catch let e as ObjectStoreError {
            throw e
        } catch {
            throw ObjectStoreError(store: url.description, endpoint: endpoint, object: object, message: "\(described) failed: \(error)")
        }
    }

    /// Path-segment encoding of an object name (`/` too, as the API wants).
    static func encode(_ s: String) -> String { SignatureV4.uriEncode(s, slash: true) }

    // MARK: Metadata

    /// The object resource JSON for an upload or a patch.
    func resource(_ o: StoredObject, key: String) throws -> [UInt8] {
        var json: [String: Any] = ["name": key]
        json["contentType"] = o.contentType
        json["cacheControl"] = o.cacheControl
        json["contentDisposition"] = o.contentDisposition
        json["contentEncoding"] = o.contentEncoding
        json["contentLanguage"] = o.contentLanguage
        var custom = o.customMetadata
        custom[MetadataKeys.sha256] = o.sha256
        json["metadata"] = custom
        if let md5 = o.md5 { json["md5Hash"] = md5 }
        if let crc = o.crc32c { json["crc32c"] = crc }
        return Array(try JSONSerialization.data(withJSONObject: json, options: .sortedKeys))
    }

    func storedObject(json body: ByteBuffer, key: String) throws -> StoredObject {
        guard let json = try? JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any],
            let o = Self.storedObject(json)
        else {
            throw ObjectStoreError(
                store: url.description, endpoint: endpoint, object: key, message: "the object resource is not the JSON expected")
        }
        return o
    }

    static func storedObject(_ json: [String: Any]) -> StoredObject? {
        guard let name = json["name"] as? String else { return nil }
        let size = (json["size"] as? String).flatMap { Int64($0) } ?? (json["size"] as? NSNumber)?.int64Value ?? 0
        var o = StoredObject(key: name, size: size)
        o.etag = json["etag"] as? String
        o.generation = json["generation"] as? String
        o.md5 = json["md5Hash"] as? String
        o.crc32c = json["crc32c"] as? String
        o.contentType = json["contentType"] as? String
        o.cacheControl = json["cacheControl"] as? String
        o.contentDisposition = json["contentDisposition"] as? String
        o.contentEncoding = json["contentEncoding"] as? String
        o.contentLanguage = json["contentLanguage"] as? String
        o.customMetadata = (json["metadata"] as? [String: Any])?.compactMapValues { $0 as? String } ?? [:]
        if let updated = json["updated"] as? String { o.updated = S3Client.milliseconds(iso8601: updated) }
        MetadataKeys.takeHashes(&o)
        return o
    }
}
