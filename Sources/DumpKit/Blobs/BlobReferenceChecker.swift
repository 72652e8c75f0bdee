import Crypto
import JSONStream

/// Cross-checks the blob references in a dump against a store: references whose object is missing
/// or differs from what they record (size, SHA-256, MD5, download token), objects whose content
/// differs from the store's own metadata, and objects that no reference names (orphans).
///
/// Feed it records (`check`), then call `finish` for the orphans; `findings(in:...)` does both for a
/// whole dump. Each object is read and hashed once, however many references name it. Memory grows
/// with the number of distinct objects referenced (about 100 bytes each), not with the dump.
public final class BlobReferenceChecker {
    public let store: BlobStore
    public let style: BlobReferenceStyle
    /// References seen so far.
    public private(set) var referencesChecked = 0
    /// For a sharded run's merge: called with an object's name when its metadata finding is decided,
    /// at its first reference (reported right after, or explained by that reference's finding).
    var onMetadataDecided: ((String) -> Void)?
    /// For a sharded run's merge: whether to keep `existingNames`.
    var keepsNames = false
    /// The names of the referenced objects the store holds, in the order first referenced (with `keepsNames`).
    private(set) var existingNames: [String] = []
    private var objects: [DigestKey: ObjectFacts] = [:]

    /// What the store holds under one name, hashed once.
    private struct ObjectFacts {
        var exists: Bool
        var size: Int64 = 0
        var sha256 = ""
        var md5 = ""
        var contentType: String?
        var tokens: [String] = []
        /// What the store's metadata records, when it disagrees with the object's bytes (or why it
        /// cannot be read); reported once, with the first reference.
        var metadataProblem: (size: Int64, sha256: String)?
        var metadataError: String?
        var metadataReported = false
    }

    public init(store: BlobStore, style: BlobReferenceStyle) {
        self.store = store
        self.style = style
    }

    /// Checks every reference of the checker's style in a record's value; `locate` gives the input
    /// line and column of a reference at a path, when known.
    public func check(_ record: Record, locate: ([String]) -> (line: Int, column: Int)? = { _ in nil }, emit: (Finding) -> Void) throws {
        guard let value = record.value else { return }
        var path = record.path
        try walk(value, path: &path, locate: locate, emit: emit)
    }

    private func walk(_ value: JSONValue, path: inout [String], locate: ([String]) -> (line: Int, column: Int)?, emit: (Finding) -> Void)
        throws
    {
        if let reference = BlobReference(value, style: style) {
            let location = locate(path)
            try check(reference, pointer: JSONPointer.string(path)) { finding in
                var located = finding
                located.line = location?.line
                located.column = location?.column
                emit(located)
            }
            return
        }
        switch value {
        case .object(let o):
            for m in o.members {
                path.append(m.key)
                try walk(m.value, path: &path, locate: locate, emit: emit)
                path.removeLast()
            }
        case .array(let a):
            for (i, v) in a.enumerated() {
                path.append(String(i))
                try walk(v, path: &path, locate: locate, emit: emit)
                path.removeLast()
            }
        default: return
        }
    }

    private func check(_ reference: BlobReference, pointer: String, emit: (Finding) -> Void) throws {
        let key = DigestKey(sha256: Hex.lowercase(SHA256.hash(data: Array(reference.name.utf8))))
        let facts = try self.facts(reference.name, key: key)
        let quoted = String(reflecting: reference.name)
        if facts.exists || style != .path { referencesChecked += 1 }
        func error(_ rule: String, _ message: String) {
            emit(Finding(severity: .error, rule: "blobs:\(rule)", pointer: pointer, message: message))
        }
        guard facts.exists else {
            // A path reference is only a string that may name an object: no object, no reference.
            if style != .path { error("missing", "object \(quoted) is not in the store") }
            return
        }
        // Bytes that differ from the reference are one cause, one finding: named by the first fact
        // that differs, the others as detail, and the store's metadata said where it agrees.
        var differs: [(rule: String, text: String)] = []
        if let size = reference.size, size != facts.size {
            differs.append(("size", "has \(facts.size) bytes, the reference records \(size)"))
        }
        if let sha256 = reference.sha256, sha256 != facts.sha256 {
            differs.append(("sha256", "has SHA-256 \(facts.sha256), the reference records \(sha256)"))
        }
        if let md5 = reference.md5, md5 != facts.md5 { differs.append(("md5", "has MD5 \(facts.md5), the reference records \(md5)")) }
        var metadataExplained = false
        if let first = differs.first {
            var message = "object \(quoted) \(first.text)"
            if differs.count > 1 {
                message +=
                    " (its "
                    + differs.dropFirst().map { $0.rule == "md5" ? "MD5" : $0.rule == "sha256" ? "SHA-256" : "size" }.joined(
                        separator: " and ") + " differ too)"
            }
            if let meta = facts.metadataProblem, meta.sha256 == reference.sha256 {
                message += "; the store's metadata records the same as the reference: the object was changed after it was written"
                metadataExplained = true
            } else if facts.metadataProblem == nil && facts.metadataError == nil {
                message += "; the store's metadata matches the object: the reference is out of date"
            }
            error(first.rule, message)
        }
        if !facts.metadataReported, facts.metadataProblem != nil || facts.metadataError != nil {
            objects[key]?.metadataReported = true
            onMetadataDecided?(reference.name)
            if let e = facts.metadataError {
                error("metadata", e)
            } else if let meta = facts.metadataProblem, !metadataExplained {
                error(
                    "metadata",
                    "object \(quoted) holds \(facts.size) bytes with SHA-256 \(facts.sha256), but the store's metadata records \(meta.size) bytes with SHA-256 \(meta.sha256)"
                )
            }
        }
        if style.needsBucket, !facts.tokens.contains(reference.token ?? "") {
            error(
                "token",
                "the download URL's token is not among the firebaseStorageDownloadTokens of object \(quoted), so the URL will not work")
        }
        if let declared = reference.contentType, let stored = facts.contentType, declared != stored {
            emit(
                Finding(
                    severity: .warning, rule: "blobs:content-type", pointer: pointer,
                    message: "the reference says \(declared), object \(quoted) is stored as \(stored)"))
        }
    }

    /// The facts of an object, read and hashed the first time it is named.
    private func facts(_ name: String, key: DigestKey) throws -> ObjectFacts {
        if let known = objects[key] { return known }
        var facts = ObjectFacts(exists: false)
        if (try? BlobObjectName.validate(name)) != nil, try store.exists(name) {
            let bytes = try store.get(name)
            let digest = bytes.withUnsafeBytes { ContentDigest($0) }
            facts = ObjectFacts(exists: true, size: digest.size, sha256: digest.sha256, md5: digest.md5)
            do {
                if let metadata = try store.metadata(name) {
                    facts.contentType = metadata.contentType
                    facts.tokens = (metadata.customMetadata["firebaseStorageDownloadTokens"] ?? "").split(separator: ",").map(String.init)
                    if metadata.sha256 != digest.sha256 || metadata.size != digest.size {
                        facts.metadataProblem = (metadata.size, metadata.sha256)
                    }
                }
            } catch let e as BlobStoreError {
                facts.metadataError = e.message
            }
        }
        objects[key] = facts
        if facts.exists && keepsNames { existingNames.append(name) }
        return facts
    }

    /// The finding of an object no reference names.
    static func orphan(_ name: String) -> Finding {
        Finding(
            severity: .warning, rule: "blobs:orphan", pointer: "",
            message: "object \(String(reflecting: name)) is not referenced by the dump")
    }

    /// Reports the objects no checked reference named, in name order.
    public func finish(emit: (Finding) -> Void) throws {
        var orphans: [String] = []
        try store.list { name in
            let key = DigestKey(sha256: Hex.lowercase(SHA256.hash(data: Array(name.utf8))))
            if objects[key]?.exists != true { orphans.append(name) }
        }
        for name in orphans.sorted() { emit(Self.orphan(name)) }
    }

    /// Checks a whole dump (the values `match` allows; none: all) and then the orphans.
    public static func findings(
        in source: JSONByteSource, sourceName: String? = nil, store: BlobStore, style: BlobReferenceStyle,
        match: [PathPattern] = []
    ) throws -> (findings: [Finding], references: Int) {
        let checker = BlobReferenceChecker(store: store, style: style)
        let reader = CandidateReader(
            source: source, patterns: match, selection: BlobReference.candidates(style: style), sourceName: sourceName)
        reader.locatesCandidates = true
        var findings: [Finding] = []
        while let candidate = try reader.next(passThrough: nil) {
            try checker.check(candidate.record, locate: reader.takeLocation) { findings.append($0) }
        }
        try checker.finish { findings.append($0) }
        return (findings, checker.referencesChecked)
    }
}
