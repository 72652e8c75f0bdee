import JSONStream

/// Finds what is suspicious but not fatal in a plan's steps; the messages become `MigrationPlan.warnings`.
enum PlanLinter {
    /// Warnings in plan order, formatted like `PlanError`.
    static func warnings(for steps: [PlanStep], file: String) -> [String] {
        var out: [String] = []
        func warn(_ step: PlanStep, _ message: String) {
            out.append(
                PlanError(
                    file: file, line: step.location.line, column: step.location.column, step: step.index, stepName: step.name,
                    message: message
                ).description)
        }
        let recordSteps = steps.filter { $0.extractBlobs == nil }
        for step in steps {
            for p in step.patterns {
                if let key = forbiddenKey(in: p) {
                    warn(
                        step,
                        "\(p) can never match: the key '\(key)' has a character the Realtime Database forbids in keys (. $ # [ ] / or a control character)"
                    )
                }
            }
            for case let move as MoveOperation in step.operations {
                if let key = forbiddenKey(in: move.target) {
                    warn(step, "the move target \(move.target) has the key '\(key)', which the Realtime Database forbids")
                }
            }
            if step.conditions.isEmpty, step.operations.contains(where: { $0 is DeleteOperation }) {
                warn(step, "'delete' without 'where' deletes every record the step matches")
            }
            if let inverse = step.inverse, let move = step.operations.last(where: { $0 is MoveOperation }) as? MoveOperation,
                !inverse.contains(where: { $0 is MoveOperation })
            {
                warn(step, "the stated 'inverse' has no 'move', so reversed records stay at \(move.target)")
            }
        }
        for (i, step) in recordSteps.enumerated() {
            for p in step.patterns {
                // One warning per pattern: the first step whose records enclose it.
                for other in recordSteps where other.index != step.index {
                    if let outer = other.patterns.first(where: { isInside(p, $0) }) {
                        warn(
                            step,
                            "\(p) lies inside \(outer) of \(other.label): the reader hands over whole records at that depth, so this step never sees them"
                        )
                        break
                    } else if let target = other.outputPatterns.first(where: { isInside(p, $0) }), other.index < step.index {
                        warn(step, "\(p) lies inside \(target), where \(other.label) moves whole records, so this step never sees them")
                        break
                    }
                }
                let earlier = recordSteps[..<i]
                if let shadow = earlier.first(where: { e in
                    e.conditions.isEmpty && e.operations.contains { $0 is MoveOperation || $0 is DeleteOperation }
                        && e.patterns.contains { covers($0, p) }
                }),
                    !earlier.contains(where: { e in
                        e.outputPatterns.contains { overlaps($0, p) } && e.operations.contains { $0 is MoveOperation }
                    })
                {
                    warn(
                        step,
                        "\(p) can never match anything: \(shadow.label) moves or deletes every record there first, and no step moves records there"
                    )
                }
            }
        }
        return out
    }

    /// A literal key of `pattern` that no database key can equal.
    private static func forbiddenKey(in pattern: PathPattern) -> String? {
        for case .literal(let key) in pattern.segments
        where key.unicodeScalars.contains(where: { ".$#[]/".unicodeScalars.contains($0) || $0.value < 0x20 || $0.value == 0x7F }) {
            return key
        }
        return nil
    }

    /// Whether two segments can match the same key.
    private static func compatible(_ a: PathPattern.Segment, _ b: PathPattern.Segment) -> Bool {
        if case .literal(let x) = a, case .literal(let y) = b { return x == y }
        return true
    }

    /// Whether some path matches both patterns.
    static func overlaps(_ a: PathPattern, _ b: PathPattern) -> Bool {
        a.depth == b.depth && zip(a.segments, b.segments).allSatisfy { compatible($0, $1) }
    }

    /// Whether every path `inner` matches is also matched by `outer`.
    private static func covers(_ outer: PathPattern, _ inner: PathPattern) -> Bool {
        guard outer.depth == inner.depth else { return false }
        return zip(outer.segments, inner.segments).allSatisfy { o, i in
            if case .literal(let x) = o { if case .literal(let y) = i { return x == y } else { return false } }
            return true
        }
    }

    /// Whether some path `inner` matches lies strictly below a path `outer` matches.
    static func isInside(_ inner: PathPattern, _ outer: PathPattern) -> Bool {
        inner.depth > outer.depth && zip(outer.segments, inner.segments).allSatisfy { compatible($0, $1) }
    }
}
