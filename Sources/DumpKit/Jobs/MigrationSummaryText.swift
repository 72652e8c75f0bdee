import JSONStream

/// How `dumpkit migrate` tells people what a run did or would do.
public enum MigrationSummaryText {
    /// The dry-run report: per step, records matched, what each operation did, values that fail,
    /// and the first record before and after.
    public static func dryRun(_ s: MigrateJob.Summary) -> String {
        var out = "dry run: nothing written\n"
        out +=
            "\(s.stats.records) records read, \(s.stats.matched) matched, \(s.stats.changed) would change (\(s.stats.moved) moved, \(s.stats.deleted) deleted), \(s.stats.rejects) values would be rejected"
        out += (s.moveConflicts > 0 ? ", \(s.moveConflicts) moved records could not be placed" : "") + "\n"
        if s.nothingToDo { out += alreadyDone(s) + "\n" }
        for step in s.stats.steps {
            out +=
                "\n\(step.plan) step \(step.step)\(step.name.map { " '\($0)'" } ?? "") [\(step.patterns.joined(separator: ", "))]: \(step.matched) records\n"
            for op in step.operations {
                out += "  \(op.summary): \(op.applied) changed" + (op.rejected > 0 ? ", \(op.rejected) failed" : "") + "\n"
            }
            if let e = step.example {
                out += "  example \(e.before.pointer):\n"
                out += "    before: \(compact(e.before.value))\n"
                out +=
                    "    after:  " + (e.after.map { ($0.path != e.before.path ? "\($0.pointer) " : "") + compact($0.value) } ?? "(deleted)")
                    + "\n"
            }
        }
        if let blobs = s.blobs { out += "\nextract-blobs steps: " + blobs.text + "\n" }
        if !s.rejectExamples.isEmpty {
            out +=
                "\nvalues that would be rejected"
                + (s.failures > s.rejectExamples.count ? " (the first \(s.rejectExamples.count) of \(s.failures))" : "") + ":\n"
            for e in s.rejectExamples { out += "  \(e)\n" }
        }
        return out
    }

    /// The line printed after a run.
    public static func done(_ s: MigrateJob.Summary, output: String) -> String {
        var line =
            "migrated \(s.stats.matched) of \(s.stats.records) records (\(s.stats.changed) changed, \(s.stats.moved) moved, \(s.stats.deleted) deleted)"
        if output != "-" { line += " -> \(output)" }
        if let r = s.rejectsPath {
            var parts: [String] = []
            if s.stats.rejects > 0 || s.moveConflicts == 0 {
                parts.append("\(s.stats.rejects) rejected value" + (s.stats.rejects == 1 ? "" : "s"))
            }
            if s.moveConflicts > 0 {
                parts.append("\(s.moveConflicts) moved record" + (s.moveConflicts == 1 ? "" : "s") + " that could not be placed")
            }
            line += "; " + parts.joined(separator: " and ") + " in \(r)"
        }
        if s.nothingToDo { line += "\n" + alreadyDone(s) }
        return line
    }

    /// Why nothing changed: the plans' records are not there (the dump is already migrated), or they
    /// are and no operation applied to them (which operations found nothing to do).
    private static func alreadyDone(_ s: MigrateJob.Summary) -> String {
        guard s.stats.matched > 0 else {
            let to = s.plans.last?.to ?? "the target version"
            return "nothing to change: the dump is already at \(to)"
                + (s.alreadyMigrated > 0 ? " (\(s.alreadyMigrated) records found at the plans' output paths)" : "")
        }
        var lines = ["nothing changed: \(s.stats.matched) records matched the plans, and no operation applied to any of them:"]
        for step in s.stats.steps where step.matched > 0 {
            for op in step.operations where op.applied == 0 {
                lines.append(
                    "  \(step.plan) step \(step.step)\(step.name.map { " '\($0)'" } ?? ""): \(op.summary) matched nothing in \(step.matched) records"
                )
            }
        }
        return lines.joined(separator: "\n")
    }

    private static func compact(_ v: JSONValue?) -> String {
        guard let v else { return "null" }
        let sink = MemoryByteSink()
        let w = JSONWriter(sink: sink)
        try? w.value(v)
        try? w.flush()
        let s = sink.string
        return s.count > 300 ? String(s.prefix(300)) + "…" : s
    }
}
