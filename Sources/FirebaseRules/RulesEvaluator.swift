import JSONStream

/// Evaluates a rules file offline: validates whole dumps, and simulates single writes and reads.
///
/// Dump validation treats the dump as one write to an empty database: `data` is absent everywhere,
/// `newData` is the dump at each node, and `root` is the dump's root (so cross-references such as
/// `root.child('rooms').child($room).exists()` see the rest of the dump). The rule tree is walked
/// alongside the data: a literal key's rules take precedence over the `$wildcard` at the same level,
/// which captures the key. Every `.validate` that applies to a present node is evaluated (`.validate`
/// does not cascade); a rule that is false or fails at run time (e.g. `null.length`) is a finding.
/// Nodes without rules below them are not visited, so a dump costs little beyond its rule coverage.
///
/// Dumps larger than memory: pass an `OnDiskRulesSource`. Every lookup (`newData` at the node being
/// checked, and `root`, `parent()` or `child()` leaving it) goes through the source, and the walk
/// enumerates children with `forEachChildKey`, so nothing holds more than the source's cache and the
/// path being walked; violations are the same as over the dump in memory.
public struct RulesEvaluator {
    public let rules: RulesFile
    /// The `auth` variable: the user's token claims (`uid`, `token.email`, ...), or null.
    public let auth: JSONValue
    /// The `now` variable, in milliseconds since the epoch.
    public let now: Double

    public init(rules: RulesFile, auth: JSONValue = .null, now: Double) {
        self.rules = rules
        self.auth = auth
        self.now = now
    }

    /// The databases a rule reads: `root`, `data` (before the write) and `newData` (after it).
    private struct Sources {
        var root: any RulesSnapshotSource
        var data: any RulesSnapshotSource
        var newData: any RulesSnapshotSource
    }

    // MARK: - Dumps

    /// Validates the dump's subtree at `path` (the whole dump by default) as if written to an empty
    /// database; violations point at the nodes whose `.validate` failed.
    ///
    /// With `strict`, also reports values that no `.write` rule lets this `auth` write: a node may be
    /// written if a `.write` on its path from the root is true (rules cascade). Each finding is the
    /// topmost node of a subtree in which nothing may be written.
    public func validateDump(_ dump: any RulesSnapshotSource, at path: [String] = [], strict: Bool = false) -> [RulesViolation] {
        guard dump.content(at: path) != .absent else { return [] }
        let sources = Sources(root: dump, data: InMemoryRulesSource(.null), newData: dump)
        var granted = false
        let target = descend(path) { depth, node, captures in
            if strict, !granted, let write = node.write {
                granted = evaluate(write, at: Array(path[..<depth]), captures, sources).passed
            }
        }
        var violations: [RulesViolation] = []
        var at = path
        var captures = target?.captures ?? []
        if walk(&at, target?.node, &captures, granted: granted, sources, strict: strict, into: &violations) {
            violations.append(writeRefused(path))
        }
        return violations
    }

    /// Evaluates only the `.validate` of the node at `path` (none when the node is absent).
    public func validateNode(_ dump: any RulesSnapshotSource, at path: [String]) -> [RulesViolation] {
        guard dump.content(at: path) != .absent, let (node, captures) = descend(path), let validate = node.validate else { return [] }
        let sources = Sources(root: dump, data: InMemoryRulesSource(.null), newData: dump)
        let outcome = evaluate(validate, at: path, captures, sources)
        return outcome.passed ? [] : [validateFailure(validate, node, path, outcome.error)]
    }

    /// Visits the present node at `path` and the nodes below it that have rules; returns whether
    /// nothing in the subtree may be written (always false unless `strict`).
    private func walk(
        _ path: inout [String], _ node: RulesNode?, _ captures: inout [String], granted inherited: Bool,
        _ sources: Sources, strict: Bool, into violations: inout [RulesViolation]
    ) -> Bool {
        guard let node else { return strict && !inherited }
        var granted = inherited
        if strict, !granted, let write = node.write {
            granted = evaluate(write, at: path, captures, sources).passed
        }
        if let validate = node.validate {
            let outcome = evaluate(validate, at: path, captures, sources)
            if !outcome.passed { violations.append(validateFailure(validate, node, path, outcome.error)) }
        }
        let mayBeRefused = strict && !granted
        if node.children.isEmpty { return mayBeRefused }
        var refused: [[String]] = []
        var allRefused = true
        sources.newData.forEachChildKey(at: path) { key in
            let child = node.child(for: key)
            if child == nil && !mayBeRefused {
                allRefused = false
                return
            }
            path.append(key)
            if let captured = child?.captured { captures.append(captured) }
            if walk(&path, child?.node, &captures, granted: granted, sources, strict: strict, into: &violations) {
                refused.append(path)
            } else {
                allRefused = false
            }
            if child?.captured != nil { captures.removeLast() }
            path.removeLast()
        }
        let subtreeRefused = mayBeRefused && allRefused
        if !subtreeRefused { violations += refused.map(writeRefused) }
        return subtreeRefused
    }

    // MARK: - Single operations

    /// Simulates a write at `path`: `data` is the database before it, `newData` after it (with the
    /// written value in place and server values resolved). Follows Firebase: `root` is the database
    /// before the write; the write is permitted if a `.write` from the root down to `path` is true; every
    /// `.validate` on that path and below it must pass where `newData` is present.
    public func checkWrite(at path: [String], data: any RulesSnapshotSource, newData: any RulesSnapshotSource) -> RulesWriteResult {
        let sources = Sources(root: data, data: data, newData: newData)
        var result = RulesWriteResult(permitted: false, failures: [])
        let target = descend(path) { depth, node, captures in
            let prefix = Array(path[..<depth])
            if !result.permitted, let write = node.write {
                result.permitted = evaluate(write, at: prefix, captures, sources).passed
            }
            if let validate = node.validate, newData.content(at: prefix) != .absent {
                let outcome = evaluate(validate, at: prefix, captures, sources)
                if !outcome.passed { result.failures.append(validateFailure(validate, node, prefix, outcome.error)) }
            }
        }
        guard let node = target?.node, var captures = target?.captures else { return result }
        if !result.permitted, let write = node.write {
            result.permitted = evaluate(write, at: path, captures, sources).passed
        }
        if newData.content(at: path) != .absent {
            var at = path
            _ = walk(&at, node, &captures, granted: true, sources, strict: false, into: &result.failures)
        }
        return result
    }

    /// Whether a read of `path` is allowed: some `.read` from the root down to `path` is true.
    public func canRead(at path: [String], data: any RulesSnapshotSource, query: JSONValue = .object(JSONObject())) -> Bool {
        let sources = Sources(root: data, data: data, newData: data)
        var allowed = false
        func check(_ node: RulesNode, _ at: [String], _ captures: [String]) {
            if !allowed, let read = node.read { allowed = evaluate(read, at: at, captures, sources, query: query).passed }
        }
        let target = descend(path) { depth, node, captures in check(node, Array(path[..<depth]), captures) }
        if let (node, captures) = target { check(node, path, captures) }
        return allowed
    }

    // MARK: - Helpers

    /// Follows the rules from the root down `path`, calling `visit` at each node above its end with the
    /// depth and the keys captured so far; returns the rules for `path` itself, or nil where no rules reach.
    private func descend(_ path: [String], visit: (_ depth: Int, _ node: RulesNode, _ captures: [String]) -> Void = { _, _, _ in })
        -> (node: RulesNode, captures: [String])?
    {
        var node = rules.root
        var captures: [String] = []
        for (depth, key) in path.enumerated() {
            visit(depth, node, captures)
            guard let next = node.child(for: key) else { return nil }
            node = next.node
            if let captured = next.captured { captures.append(captured) }
        }
        return (node, captures)
    }

    private func evaluate(
        _ rule: RulesRule, at path: [String], _ captures: [String], _ sources: Sources,
        query: JSONValue = .object(JSONObject())
    ) -> (passed: Bool, error: String?) {
        let context = RulesContext(
            auth: auth, now: now, root: RulesSnapshot(source: sources.root), data: RulesSnapshot(source: sources.data, path: path),
            newData: rule.kind == .read ? nil : RulesSnapshot(source: sources.newData, path: path), query: query, captures: captures)
        do {
            return (try rule.evaluate(in: context), nil)
        } catch {
            return (false, error.message)
        }
    }

    private func validateFailure(_ rule: RulesRule, _ node: RulesNode, _ path: [String], _ error: String?) -> RulesViolation {
        let expression = rule.source.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        let reason = error.map { ": \($0)" } ?? ""
        return RulesViolation(
            rule: .validate, pointer: JSONPointer.string(path),
            message: "\(expression) is false\(reason) (.validate at \(node.path))")
    }

    private func writeRefused(_ path: [String]) -> RulesViolation {
        RulesViolation(
            rule: .write, pointer: JSONPointer.string(path),
            message: "no .write rule on the path lets this auth write here")
    }
}

/// The outcome of `RulesEvaluator.checkWrite`.
public struct RulesWriteResult {
    /// Whether a `.write` rule granted the write.
    public var permitted: Bool
    /// The `.validate` rules that were false, at the nodes they apply to.
    public var failures: [RulesViolation]
    /// Whether Firebase would accept the write.
    public var allowed: Bool { permitted && failures.isEmpty }
}
