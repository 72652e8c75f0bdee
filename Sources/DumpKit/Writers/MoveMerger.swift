import JSONStream

/// Places moved records into the tree `DumpWriter` wrote without them, keeping every object where it
/// stands: a record goes into the deepest object on its way that the tree has, after that object's
/// members, and objects it needs that the tree lacks are made there.
///
/// Three steps, each streaming with bounded memory:
/// 1. *Anchors*: one pass over the tree notes every value at a path some move target could pass
///    through or land on (the paths `targets` can match, or a prefix of them), with its number in
///    the order values end (a member ends before its object) and whether it is an object.
/// 2. *Join*: anchors and moved records, both sorted by path, are read side by side. Each record
///    finds the deepest anchor above it; records landing on an anchor or on one another, or below a
///    value that is not an object, are conflicts. Each placed record is keyed by its anchor's
///    number and its path.
/// 3. *Write*: a second pass over the tree copies it to the output and, when an anchor object ends,
///    writes the records keyed by its number, grouped by path (`PathPlacer`), before closing it.
///
/// Only containers at a proper prefix of a target are descended; everything else is skipped (step
/// 1) or copied (step 3) as one value, so a plan that moves records to a new top-level key reads
/// the tree's top level only.
final class MoveMerger {
    private let tree: TemporaryFile
    private let spool: MoveSpool
    private let targets: [PathPattern]
    private let temporaryDirectory: String?
    /// The anchor number that stands for "no tree": records then make the root object.
    private static let noRoot = UInt64.max

    init(tree: TemporaryFile, spool: MoveSpool, targets: [PathPattern], temporaryDirectory: String?) {
        self.tree = tree
        self.spool = spool
        self.targets = targets
        self.temporaryDirectory = temporaryDirectory
    }

    /// Writes the tree with the moved records to `writer`; `onConflict` gets each record that cannot
    /// be placed (it throws to stop, or returns to leave the record out).
    func run(into writer: JSONWriter, onConflict: (MoveConflict) throws -> Void) throws {
        try spool.finishWriting()
        if spool.count == 0 { return try walk(writer: writer, beforeClosing: { _, _ in }, anchor: { _, _, _ in }) }
        if spool.inOrder, try rootLacks(Set(spool.members.map(\.key))) {
            // Every record goes into the root, under keys it does not have: the spooled values are
            // those members, ready to copy.
            if tree.size == 0 {
                try writer.beginObject()
                try writeMembers(to: writer)
                return try writer.endObject()
            }
            return try walk(
                writer: writer, beforeClosing: { _, depth in if depth == 0 { try self.writeMembers(to: writer) } }, anchor: { _, _, _ in })
        }
        let anchors = ExternalSorter(temporaryDirectory: temporaryDirectory)
        try walk(writer: nil, beforeClosing: { _, _ in }) { path, number, isObject in
            var payload: [UInt8] = []
            withUnsafeBytes(of: number.littleEndian) { payload.append(contentsOf: $0) }
            payload.append(isObject ? 1 : 0)
            try anchors.add(key: PathKey.of(path), payload: payload)
        }
        let placements = try join(anchors: anchors.sorted(), onConflict: onConflict).sorted()
        var placement = Placement(reader: placements)
        try placement.advance()
        try walk(writer: writer, placing: &placement)
    }

    /// Whether the tree has no root, or a root object with none of `keys`.
    private func rootLacks(_ keys: Set<String>) throws -> Bool {
        let reader = JSONReader(source: tree.stream(from: 0), sourceName: "tree of moved records")
        guard tree.size > 0, try reader.peek() != .end else { return true }
        guard try reader.next() == .beginObject else { return false }
        while try reader.next() == .name {
            if keys.contains(reader.stringValue) { return false }
            try reader.skipValue()
        }
        return true
    }

    /// Writes the spooled members into the object `writer` is in.
    private func writeMembers(to writer: JSONWriter) throws {
        for m in spool.members {
            try writer.name(m.key)
            try spool.writeValue(m.range, to: writer)
        }
    }

    // MARK: - Join

    private struct Anchor {
        var key: [UInt8]
        var number: UInt64
        var isObject: Bool
    }

    /// Matches each moved record with the deepest anchor above it; returns the placements, keyed
    /// by the anchor's number (`u64` big-endian) and the record's `PathKey`, with the record's value
    /// range as payload.
    private func join(anchors: ExternalSorter.Reader, onConflict: (MoveConflict) throws -> Void) throws -> ExternalSorter {
        let placements = ExternalSorter(temporaryDirectory: temporaryDirectory)
        let moves = try spool.sortedEntries(temporaryDirectory: temporaryDirectory)
        var stack: [Anchor] = []
        var hasAnchor = try anchors.next()
        var last: MoveSpool.Entry?
        while try moves.next() {
            let move = MoveSpool.Entry(key: moves.key, payload: moves.payload)
            let target = Array(move.targetKey)
            while hasAnchor && !target.lexicographicallyPrecedes(anchors.key) {
                let key = anchors.key
                while let top = stack.last, !PathKey.isPrefix(top.key[...], of: key[...]) { stack.removeLast() }
                let (number, isObject) = anchors.payload.withUnsafeBytes {
                    (UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)), $0[8] == 1)
                }
                stack.append(Anchor(key: key, number: number, isObject: isObject))
                hasAnchor = try anchors.next()
            }
            while let top = stack.last, !PathKey.isPrefix(top.key[...], of: move.targetKey) { stack.removeLast() }
            var reason: MoveConflict.Reason?
            if let last, PathKey.isPrefix(last.targetKey, of: move.targetKey) {
                reason = .movedRecord(source: PathKey.path(last.sourceKey), target: PathKey.path(last.targetKey))
            } else if let top = stack.last, top.key[...] == move.targetKey {
                reason = .existingValue
            } else if let top = stack.last, !top.isObject {
                reason = .notAnObject(parent: PathKey.path(top.key))
            }
            if let reason {
                try onConflict(
                    MoveConflict(
                        source: PathKey.path(move.sourceKey), target: PathKey.path(move.targetKey), reason: reason,
                        value: spool.value(move.range)))
                continue
            }
            var key: [UInt8] = []
            withUnsafeBytes(of: (stack.last?.number ?? Self.noRoot).bigEndian) { key.append(contentsOf: $0) }
            key += move.targetKey
            var payload: [UInt8] = []
            withUnsafeBytes(of: UInt64(move.range.lowerBound).littleEndian) { payload.append(contentsOf: $0) }
            withUnsafeBytes(of: UInt64(move.range.upperBound).littleEndian) { payload.append(contentsOf: $0) }
            try placements.add(key: key, payload: payload)
            last = move
        }
        return placements
    }

    // MARK: - Walking the tree

    /// The placement `reader` stands on.
    private struct Placement {
        let reader: ExternalSorter.Reader
        /// The anchor number of the current placement; nil after the last.
        var anchor: UInt64?
        var path: [String] = []
        var range: Range<Int64> = 0..<0

        init(reader: ExternalSorter.Reader) { self.reader = reader }

        mutating func advance() throws {
            guard try reader.next() else {
                anchor = nil
                return
            }
            let key = reader.key
            anchor = key.withUnsafeBytes { UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self)) }
            path = PathKey.path(key[8...])
            range = reader.payload.withUnsafeBytes {
                Int64(
                    $0.loadUnaligned(fromByteOffset: 0, as: UInt64.self).littleEndian)..<Int64(
                        $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self).littleEndian)
            }
        }
    }

    /// Writes the placements for anchor `number` (an object `depth` keys deep that `writer` is in).
    private func place(_ placement: inout Placement, anchor number: UInt64, depth: Int, writer: JSONWriter) throws {
        guard placement.anchor == number else { return }
        let placer = PathPlacer(writer: writer, baseDepth: depth)
        while placement.anchor == number {
            try placer.place(placement.path) { try spool.writeValue(placement.range, to: $0) }
            try placement.advance()
        }
        try placer.closeAll()
    }

    /// Copies the tree to `writer` with the placements; without a tree, they make the root.
    private func walk(writer: JSONWriter, placing placement: inout Placement) throws {
        try walk(
            writer: writer,
            beforeClosing: { number, depth in
                try self.place(&placement, anchor: number, depth: depth, writer: writer)
            }, anchor: { _, _, _ in })
        if placement.anchor == Self.noRoot {
            try writer.beginObject()
            try place(&placement, anchor: Self.noRoot, depth: 0, writer: writer)
            try writer.endObject()
        }
    }

    /// Walks the tree, descending only into containers at a proper prefix of a target: calls
    /// `anchor` with each anchor's path, number and objectness as it ends; with a `writer`, copies
    /// the tree to it and calls `beforeClosing` with each anchor object's number and depth before it
    /// closes.
    private func walk(writer: JSONWriter?, beforeClosing: (UInt64, Int) throws -> Void, anchor: ([String], UInt64, Bool) throws -> Void)
        throws
    {
        let reader = JSONReader(source: tree.stream(from: 0), sourceName: "tree of moved records")
        var path: [String] = []
        var containers: [(isObject: Bool, index: Int)] = []
        var number: UInt64 = 0

        /// Handles the value at `path`; true when it is a container the walk descends into.
        func value() throws -> Bool {
            let token = try reader.peek()
            let isContainer = token == .beginObject || token == .beginArray
            if isContainer && targets.contains(where: { $0.isPrefix(path) }) {
                try reader.next()
                if token == .beginObject { try writer?.beginObject() } else { try writer?.beginArray() }
                containers.append((token == .beginObject, 0))
                return true
            }
            let isAnchor = targets.contains { t in path.count <= t.depth && path.indices.allSatisfy { t.segmentMatches(path[$0], at: $0) } }
            if let writer { try reader.transfer(to: writer) } else { try reader.skipValue() }
            if isAnchor {
                try anchor(path, number, token == .beginObject)
                number += 1
            }
            return false
        }

        guard tree.size > 0 else { return }
        _ = try value()
        while let top = containers.last {
            let token = try reader.peek()
            if token == .endObject || token == .endArray {
                try reader.next()
                containers.removeLast()
                if let writer {
                    if top.isObject {
                        try beforeClosing(number, path.count)
                        try writer.endObject()
                    } else {
                        try writer.endArray()
                    }
                }
                try anchor(path, number, top.isObject)
                number += 1
                if !containers.isEmpty { path.removeLast() }
                continue
            }
            if top.isObject {
                try reader.next()
                path.append(reader.stringValue)
                try writer?.name(path[path.count - 1])
            } else {
                path.append(String(top.index))
                containers[containers.count - 1].index += 1
            }
            if try !value() { path.removeLast() }
        }
        guard try reader.next() == .end else { throw reader.error(.trailingData, "unexpected data after the tree") }
    }
}
