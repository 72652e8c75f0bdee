import Foundation
import JSONStream
import TestSupport
import XCTest

@testable import DumpKit

/// `migrate` against the tree oracle on random dumps and random plans: moves into existing and new
/// objects, renames, drops, deletes, collect/spread, chains of plans and their reverses.
///
/// Each case is one seed; a failure names it. `DUMPKIT_PROPERTY_CASES` sets how many seeds run (CI
/// runs the default), `DUMPKIT_PROPERTY_SEED` replays one.
final class MigratePropertyTests: XCTestCase {
    func testMigrateMatchesTheTreeOracle() throws {
        let env = ProcessInfo.processInfo.environment
        let seeds: [UInt64]
        if let one = env["DUMPKIT_PROPERTY_SEED"].flatMap(UInt64.init) {
            seeds = [one]
        } else {
            seeds = Array(0..<UInt64(env["DUMPKIT_PROPERTY_CASES"].flatMap(Int.init) ?? 1000))
        }
        let dir = try TemporaryDirectory()
        var compared = (moves: 0, inPlace: 0, reverses: 0, conflicts: 0)
        for seed in seeds {
            var random = SplitMix64(seed: seed)
            let dump = RandomDump.make(&random)
            let plans = RandomPlan.chain(&random)
            let message =
                "seed \(seed) (replay: DUMPKIT_PROPERTY_SEED=\(seed)); dump \(try compact(dump)); plans:\n\(plans.joined(separator: "\n---\n"))"
            // Every other seed migrates on three worker threads: the same bytes either way.
            let jobs = seed % 2 == 0 ? 1 : 3
            let forward = try check(dump, plans, reverse: false, jobs: jobs, dir: dir, message)
            if forward.hadMoves { compared.moves += 1 } else { compared.inPlace += 1 }
            compared.conflicts += forward.conflicts
            // The reverse chain, when every step can be reversed, on what the forward run wrote.
            let parsed = try plans.map { try PlanFixtures.plan($0) }
            if (try? parsed.map { try $0.reversed() }) != nil {
                _ = try check(forward.output, plans, reverse: true, jobs: jobs, dir: dir, message + "\n(reversed, on the forward output)")
                compared.reverses += 1
            }
        }
        // The generator must reach every kind of case, or the test proves little.
        if seeds.count >= 100 {
            XCTAssertGreaterThan(compared.moves, seeds.count / 4, "\(compared)")
            XCTAssertGreaterThan(compared.inPlace, seeds.count / 20, "\(compared)")
            XCTAssertGreaterThan(compared.reverses, seeds.count / 4, "\(compared)")
            XCTAssertGreaterThan(compared.conflicts, 0, "\(compared)")
        }
    }

    /// Runs `migrate` (the real job, on files) and the oracle; returns the streamed output.
    private func check(_ dump: JSONValue, _ planTexts: [String], reverse: Bool, jobs: Int, dir: TemporaryDirectory, _ message: String)
        throws
        -> (output: JSONValue, hadMoves: Bool, conflicts: Int)
    {
        let input = dir.path("in.json")
        let text = try compact(dump)
        try text.write(toFile: input, atomically: false, encoding: .utf8)
        var paths: [String] = []
        for (i, t) in planTexts.enumerated() {
            paths.append(dir.path("plan\(i).yaml"))
            try t.write(toFile: paths[i], atomically: false, encoding: .utf8)
        }
        var plans = try planTexts.map { try PlanFixtures.plan($0) }
        if reverse { plans = try plans.reversed().map { try $0.reversed() } }
        let hadMoves = !MigrateJob.moveTargets(plans).isEmpty
        let expected = try Self.oracle(dump, plans)

        var job = MigrateJob(input: input, output: dir.path("out.json"), planPaths: paths)
        job.onError = .keep
        job.reverse = reverse
        job.jobs = jobs
        job.rejectsPath = dir.path("rejects.ndjson")
        try? FileManager.default.removeItem(atPath: job.rejectsPath!)
        do {
            _ = try job.run()
        } catch let e as MigrationMismatch {
            XCTAssertEqual(expected.records, 0, "\(e)\n\(message)")
            return (dump, hadMoves, 0)
        }
        let outText = String(decoding: try contents(job.output), as: UTF8.self)
        let output = try PlanFixtures.json(outText)
        XCTAssertEqual(try PlanFixtures.canonical(output), try PlanFixtures.canonical(expected.tree), message)
        if !hadMoves {
            // Nothing moves: every key stays where it was.
            XCTAssertEqual(outText, try compact(expected.inPlace) + "\n", "key order\n" + message)
        }
        var conflicts: [String] = []
        if FileManager.default.fileExists(atPath: job.rejectsPath!) {
            let lines = String(decoding: try contents(job.rejectsPath!), as: UTF8.self).split(separator: "\n")
            for line in lines {
                let reject = try PlanFixtures.json(String(line))
                if reject[segment: "operation"] == .string("move"), case .string(let pointer)? = reject[segment: "pointer"] {
                    conflicts.append(pointer)
                }
            }
        }
        XCTAssertEqual(conflicts.sorted(), expected.conflicts.sorted(), "conflicts\n" + message)
        return (output, hadMoves, conflicts.count)
    }

    /// What migrate must write: records are removed from where they were read; in-place outputs go
    /// back, then moved ones in path order, each into the deepest object on its way (a conflict when
    /// its path holds a value, lies below a value that is not an object, or lies at or below a
    /// record moved before it). `inPlace` is the result written in place, for plans without moves.
    static func oracle(_ tree: JSONValue, _ plans: [MigrationPlan]) throws -> (
        tree: JSONValue, inPlace: JSONValue, conflicts: [String], records: Int
    ) {
        let runner = PlanRunner(plans: plans, onError: .keep)
        var result = tree
        var inPlace = tree
        var moved: [(source: [String], record: Record, order: Int)] = []
        var kept: [Record] = []
        let records = PlanFixtures.records(in: tree, patterns: runner.patterns)
        for record in records {
            let outputs = try runner.apply(record).records
            result.removeField(FieldPath(segments: record.path))
            if let out = outputs.first {
                if out.path == record.path {
                    kept.append(out)
                    try inPlace.setField(FieldPath(segments: out.path), out.value!)
                } else {
                    moved.append((record.path, out, moved.count))
                }
            } else {
                inPlace.removeField(FieldPath(segments: record.path))
            }
        }
        for r in kept { try result.setField(FieldPath(segments: r.path), r.value!) }
        moved.sort { a, b in
            let ka = PathKey.of(a.record.path), kb = PathKey.of(b.record.path)
            return ka != kb ? ka.lexicographicallyPrecedes(kb) : a.order < b.order
        }
        var conflicts: [String] = []
        var placed: [[String]] = []
        for m in moved {
            let path = m.record.path
            if placed.contains(where: { $0.count <= path.count && Array(path.prefix($0.count)) == $0 }) {
                conflicts.append(JSONPointer.string(m.source))
                continue
            }
            // The deepest value on the way must be an object, and the path must be free.
            var blocked = false
            for depth in 0...path.count {
                guard let v = result.field(FieldPath(segments: Array(path.prefix(depth)))) else { break }
                if depth == path.count || v.objectValue == nil { blocked = true }
            }
            if blocked {
                conflicts.append(JSONPointer.string(m.source))
                continue
            }
            try result.setField(FieldPath(segments: path), m.record.value!)
            placed.append(path)
        }
        return (result, inPlace, conflicts, records.count)
    }

    private func compact(_ value: JSONValue) throws -> String {
        let sink = MemoryByteSink()
        let w = JSONWriter(sink: sink)
        try w.value(value)
        try w.flush()
        return sink.string
    }
}

/// Random dumps over small key sets (so that paths meet): objects in random key order, integer-like
/// keys, empty objects, scalars where objects are expected.
enum RandomDump {
    static let top = ["a", "b", "c", "0", "7", "m"]
    static let second = ["x", "y", "10", "2", "-Kp", "sub"]
    static let fields = ["f", "g", "n", "h"]

    static func make(_ random: inout SplitMix64) -> JSONValue {
        var root = JSONObject()
        for key in top.shuffled(using: &random) where Int.random(in: 0..<10, using: &random) < 7 {
            root[key] = level(2, &random)
        }
        return .object(root)
    }

    private static func level(_ depth: Int, _ random: inout SplitMix64) -> JSONValue {
        let roll = Int.random(in: 0..<20, using: &random)
        if roll == 0 { return .object([:]) }
        if roll == 1 { return .number(JSONNumber(Int.random(in: 0..<100, using: &random))) }
        var o = JSONObject()
        let keys = depth == 2 ? second : fields
        for key in keys.shuffled(using: &random) where Int.random(in: 0..<10, using: &random) < 5 {
            if depth == 2 {
                o[key] = level(3, &random)
            } else if Int.random(in: 0..<6, using: &random) == 0 {
                o[key] = .object(["h": .string("deep"), "n": .number(JSONNumber(Int.random(in: 0..<9, using: &random)))])
            } else {
                o[key] =
                    Bool.random(using: &random)
                    ? .string("s\(Int.random(in: 0..<9, using: &random))") : .number(JSONNumber(Int.random(in: 0..<9, using: &random)))
            }
        }
        return .object(o)
    }
}

/// Random chains of one or two plans of one to three steps.
enum RandomPlan {
    /// A step's pattern and the move targets that keep all its captures (reversible) or not.
    private static let shapes: [(pattern: String, targets: [String])] = [
        ("/{t}/{k}", ["/{k}/{t}", "/m/{t}/{k}", "/{t}/{k}/sub", "/b/{k}/{t}"]),
        ("/a/{k}", ["/b/{k}", "/c/{k}/moved", "/{k}", "/m/{k}", "/a/{k}/sub", "/7/x/{k}"]),
        ("/b/{k}", ["/a/{k}", "/c/{k}", "/0/{k}/f"]),
        ("/{t}/x", ["/{t}/y", "/z/{t}", "/{t}/x/f"]),
        ("/c/{k}/f", ["/f/{k}", "/c/{k}/g", "/a/{k}"]),
        ("/m/{t}/{k}", ["/{t}/{k}", "/{k}/{t}/sub"]),
    ]

    static func chain(_ random: inout SplitMix64) -> [String] {
        let count = Int.random(in: 0..<4, using: &random) == 0 ? 2 : 1
        return (0..<count).map { plan($0, &random) }
    }

    private static func plan(_ index: Int, _ random: inout SplitMix64) -> String {
        var text = "name: p\(index)\nfrom: v\(index + 1)\nto: v\(index + 2)\nsteps:\n"
        for _ in 0..<Int.random(in: 1...3, using: &random) {
            let shape = shapes.randomElement(using: &random)!
            var ops: [String] = []
            if Bool.random(using: &random) { ops.append("rename: { f: g }") }
            switch Int.random(in: 0..<8, using: &random) {
            case 0: ops.append("drop: [n]")
            case 1: ops.append("collect: { fields: [f, g], into: both }")
            case 2: ops.append("spread: { field: both, into: [f, g] }")
            default: break
            }
            if Int.random(in: 0..<10, using: &random) < 7 { ops.append("move: " + shape.targets.randomElement(using: &random)!) }
            if Int.random(in: 0..<12, using: &random) == 0 {
                text += "  - match: \(shape.pattern)\n    where: { n: 3 }\n    ops: [delete]\n"
                continue
            }
            if ops.isEmpty { ops.append("rename: { h: f }") }
            text += "  - match: \(shape.pattern)\n    ops:\n" + ops.map { "      - \($0)\n" }.joined()
        }
        return text
    }
}
