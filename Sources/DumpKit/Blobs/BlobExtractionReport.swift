import Foundation
import JSONStream
import Synchronization

/// What an extraction found and did: counts and bytes per type, objects written, duplicates, and
/// the strings it left alone, with sample JSON Pointers. Safe to update from worker threads.
///
/// Samples keep the first `sampleLimit` pointers in pointer order (not in the order workers happen
/// to finish), so the same input always gives the same report.
public final class BlobExtractionReport: Sendable {
    /// A count and a number of bytes.
    public struct Tally: Hashable, Sendable {
        public var count = 0
        public var bytes: Int64 = 0
    }

    /// A data URI whose declared type its bytes contradicted.
    public struct Mismatch: Hashable, Sendable, Comparable {
        public var pointer: String
        public var declared: String
        public var detected: String
        public static func < (a: Mismatch, b: Mismatch) -> Bool { a.pointer < b.pointer }
    }

    /// A snapshot of the report.
    public struct Totals: Sendable {
        /// Strings replaced by references (bytes: decoded).
        public var extracted = Tally()
        /// Their length in the dump, in bytes of text.
        public var encodedBytes: Int64 = 0
        /// Per content type (bytes: decoded).
        public var types: [String: Tally] = [:]
        /// Distinct objects named (bytes: their size).
        public var objects = Tally()
        /// Objects written to the store (new, or only their metadata).
        public var stored = Tally()
        /// Objects that replaced other bytes under their name (`--replace`), and the first names.
        public var replaced = Tally()
        public var replacedNames: [String] = []
        /// Objects the store holds with other bytes, not replaced (the run fails), and the first names.
        public var conflicts = 0
        public var conflictNames: [String] = []
        /// Objects already in the store with the same content and metadata.
        public var unchanged = Tally()
        /// Strings whose content an earlier string in this run already had.
        public var duplicates = Tally()
        public var skipped: [EmbeddedFile.Skip: Int] = [:]
        public var skippedSamples: [EmbeddedFile.Skip: [String]] = [:]
        public var mismatches = 0
        public var mismatchSamples: [Mismatch] = []
    }

    /// An object a run named first, what the store did with it and where its first string was:
    /// what the merge of a sharded extraction needs to count objects once over all shards.
    public struct NamedObject: Sendable, Equatable {
        public var name: String
        public var sha256: String
        public var size: Int64
        public var outcome: BlobPutOutcome?
        public var pointer: String
    }

    public let sampleLimit: Int
    /// Whether `namedObjects` are kept (a shard's run).
    public let keepsObjects: Bool
    private let state: Mutex<(totals: Totals, contents: Set<DigestKey>, named: [NamedObject])>

    public init(sampleLimit: Int = 100, keepsObjects: Bool = false) {
        self.sampleLimit = sampleLimit
        self.keepsObjects = keepsObjects
        state = Mutex((totals: Totals(), contents: [], named: []))
    }

    /// A report of the given totals (a merged one).
    init(totals: Totals, sampleLimit: Int) {
        self.sampleLimit = sampleLimit
        keepsObjects = false
        state = Mutex((totals: totals, contents: [], named: []))
    }

    /// The objects named first in this run, in no particular order (with `keepsObjects`).
    public var namedObjects: [NamedObject] { state.withLock { $0.named } }

    /// The counts so far.
    public var snapshot: Totals { state.withLock { $0.totals } }

    /// Counts one extracted string stored as `name`. `newObject` says whether it is the first use of
    /// the name in this run, `outcome` what the store did (nil in a dry run, for a name already used
    /// or a conflict).
    func extracted(
        _ file: EmbeddedFile, digest: ContentDigest, name: String, pointer: String, newObject: Bool, outcome: BlobPutOutcome?
    ) {
        let size = digest.size
        let key = DigestKey(sha256: digest.sha256)
        state.withLock { s in
            if newObject && keepsObjects {
                s.named.append(NamedObject(name: name, sha256: digest.sha256, size: size, outcome: outcome, pointer: pointer))
            }
            s.totals.extracted.count += 1
            s.totals.extracted.bytes += size
            s.totals.encodedBytes += Int64(file.encodedBytes)
            s.totals.types[file.contentType, default: Tally()].count += 1
            s.totals.types[file.contentType, default: Tally()].bytes += size
            if !s.contents.insert(key).inserted {
                s.totals.duplicates.count += 1
                s.totals.duplicates.bytes += size
            }
            if newObject {
                s.totals.objects.count += 1
                s.totals.objects.bytes += size
            }
            switch outcome {
            case .stored?:
                s.totals.stored.count += 1
                s.totals.stored.bytes += size
            case .unchanged?:
                s.totals.unchanged.count += 1
                s.totals.unchanged.bytes += size
            case .replaced?:
                s.totals.replaced.count += 1
                s.totals.replaced.bytes += size
                Self.keep(name, in: &s.totals.replacedNames, limit: sampleLimit)
            case nil: break
            }
        }
    }

    /// Counts an object the store holds with other bytes, which was not replaced.
    func conflict(name: String) {
        state.withLock { s in
            s.totals.conflicts += 1
            Self.keep(name, in: &s.totals.conflictNames, limit: sampleLimit)
        }
    }

    /// Counts a string left alone.
    func skipped(_ reason: EmbeddedFile.Skip, pointer: String) {
        state.withLock { s in
            s.totals.skipped[reason, default: 0] += 1
            Self.keep(pointer, in: &s.totals.skippedSamples[reason, default: []], limit: sampleLimit)
        }
    }

    /// Counts a data URI whose declared type its bytes contradicted (it is still extracted).
    func mismatch(pointer: String, declared: String, detected: String) {
        state.withLock { s in
            s.totals.mismatches += 1
            Self.keep(Mismatch(pointer: pointer, declared: declared, detected: detected), in: &s.totals.mismatchSamples, limit: sampleLimit)
        }
    }

    /// Inserts `item` in sorted order, keeping the `limit` smallest.
    static func keep<T: Comparable>(_ item: T, in list: inout [T], limit: Int) {
        guard limit > 0, list.count < limit || item < list[list.count - 1] else { return }
        var lo = 0, hi = list.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if list[mid] < item { lo = mid + 1 } else { hi = mid }
        }
        list.insert(item, at: lo)
        if list.count > limit { list.removeLast() }
    }

    /// The report as JSON (`--report FILE`).
    public var jsonValue: JSONValue {
        let t = snapshot
        func tally(_ x: Tally) -> JSONValue { .object(["count": .number(JSONNumber(x.count)), "bytes": .number(JSONNumber(x.bytes))]) }
        var skipped = JSONObject()
        for reason in EmbeddedFile.Skip.allCases {
            skipped[reason.rawValue] = .object([
                "count": .number(JSONNumber(t.skipped[reason] ?? 0)),
                "pointers": .array((t.skippedSamples[reason] ?? []).map { .string($0) }),
            ])
        }
        return .object([
            "extracted": .object([
                "count": .number(JSONNumber(t.extracted.count)),
                "bytes": .number(JSONNumber(t.extracted.bytes)),
                "encodedBytes": .number(JSONNumber(t.encodedBytes)),
            ]),
            "types": .object(JSONObject(t.types.keys.sorted().map { .init(key: $0, value: tally(t.types[$0]!)) })),
            "objects": .object([
                "distinct": tally(t.objects), "stored": tally(t.stored), "unchanged": tally(t.unchanged),
                "replaced": .object([
                    "count": .number(JSONNumber(t.replaced.count)), "bytes": .number(JSONNumber(t.replaced.bytes)),
                    "names": .array(t.replacedNames.map { .string($0) }),
                ]),
                "conflicts": .object(["count": .number(JSONNumber(t.conflicts)), "names": .array(t.conflictNames.map { .string($0) })]),
            ]),
            "duplicates": tally(t.duplicates),
            "skipped": .object(skipped),
            "mimeMismatches": .object([
                "count": .number(JSONNumber(t.mismatches)),
                "samples": .array(
                    t.mismatchSamples.map {
                        .object(["pointer": .string($0.pointer), "declared": .string($0.declared), "detected": .string($0.detected)])
                    }),
            ]),
        ])
    }

    /// A few lines for people.
    public var text: String {
        let t = snapshot
        let mb = { (b: Int64) in ProgressMeter.format(bytes: b) }
        var lines = [
            "extracted \(t.extracted.count) strings (\(mb(t.encodedBytes)) of text, \(mb(t.extracted.bytes)) of files) into \(t.objects.count) objects"
        ]
        if !t.types.isEmpty {
            lines.append(
                "  types: "
                    + t.types.keys.sorted().map { "\($0) \(t.types[$0]!.count) (\(mb(t.types[$0]!.bytes)))" }.joined(separator: ", "))
        }
        lines.append("  duplicates: \(t.duplicates.count) strings (\(mb(t.duplicates.bytes)))")
        if t.stored.count + t.unchanged.count + t.replaced.count > 0 {
            lines.append("  store: \(t.stored.count) written, \(t.unchanged.count) already there")
        }
        if t.replaced.count > 0 {
            let shown = t.replacedNames.prefix(5).map { String(reflecting: $0) }.joined(separator: ", ")
            lines.append(
                "  replaced (other bytes were there, --replace): \(t.replaced.count): \(shown)\(t.replaced.count > 5 ? ", ..." : "")")
        }
        for reason in EmbeddedFile.Skip.allCases where (t.skipped[reason] ?? 0) > 0 {
            let first = t.skippedSamples[reason]?.first.map { ", e.g. \($0)" } ?? ""
            lines.append("  left alone (\(reason.rawValue)): \(t.skipped[reason]!)\(first)")
        }
        if t.mismatches > 0, let m = t.mismatchSamples.first {
            lines.append("  declared type contradicted by the bytes: \(t.mismatches), e.g. \(m.pointer) (\(m.declared) is \(m.detected))")
        }
        return lines.joined(separator: "\n")
    }
}

/// The first 128 bits of a SHA-256, as a compact set member.
struct DigestKey: Hashable, Sendable {
    let high: UInt64
    let low: UInt64

    /// From lowercase hex.
    init(sha256 hex: String) {
        var h: UInt64 = 0, l: UInt64 = 0
        for (i, c) in hex.utf8.prefix(32).enumerated() {
            let v = UInt64(c <= UInt8(ascii: "9") ? c &- UInt8(ascii: "0") : (c | 0x20) &- UInt8(ascii: "a") &+ 10) & 0xF
            if i < 16 { h = h << 4 | v } else { l = l << 4 | v }
        }
        high = h
        low = l
    }
}
