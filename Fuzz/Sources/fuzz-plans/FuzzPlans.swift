import DumpKit
import FuzzSupport
import JSONStream

// The plan decoder (YAML, or JSON when the text starts with `{`), reversal and application. The input
// is a plan, then a NUL and a record's value (JSON; an empty object without one). A plan that loads
// is applied to a record at each of its step patterns (captures and `*` as the key `k`); when it
// applies without rejects and the plan can be reversed from its operations alone (no step states its
// own `inverse:`, which may do anything the user wants), the reversed plan is applied to what came
// out, and must give back the original record when it applies without rejects. No input may crash
// or hang the decoder.

/// A path `pattern` matches: its literal keys, and `k` for captures and `*`.
func path(matching pattern: PathPattern) -> [String] {
    pattern.segments.map { segment in
        if case .literal(let key) = segment { return key }
        return "k"
    }
}

/// The records `plan` makes of `record` under `.fail`, or `nil` when it rejects or fails.
func apply(_ plan: MigrationPlan, to record: Record) -> [Record]? {
    let runner = PlanRunner(plans: [plan], onError: .fail)
    guard let result = try? runner.apply(record), result.rejects.isEmpty else { return nil }
    return result.records
}

@main
enum FuzzPlans {
    static func main() {
        runFuzzer { data in
            let (planBytes, valueBytes) = splitAtNUL(data)
            let text = String(decoding: planBytes, as: UTF8.self)
            let fileName = text.first == "{" ? "fuzz.json" : "fuzz.yaml"
            guard let plan = try? MigrationPlan.parse(text: text, fileName: fileName) else { return }
            let value = valueBytes.isEmpty ? JSONValue.object([:]) : (try? JSONReader(bytes: valueBytes).readValue()) ?? .object([:])
            let reversed = plan.steps.contains { $0.inverse != nil } ? nil : try? plan.reversed()
            for pattern in plan.patterns {
                let keys = path(matching: pattern)
                let record = Record(path: keys, captures: pattern.match(keys) ?? [:], value: value)
                guard let forward = apply(plan, to: record), let reversed, forward.count == 1, let migrated = forward.first else {
                    continue
                }
                let back = apply(reversed, to: Record(path: migrated.path, captures: [:], value: migrated.value))
                guard let back else { continue }
                precondition(
                    back.count == 1 && back[0].path == record.path && back[0].value == record.value,
                    "the reversed plan did not undo the plan on \(record): forward \(forward), back \(back)")
            }
        }
    }
}
