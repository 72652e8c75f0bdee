import FuzzSupport

@testable import FirebaseRules
@testable import RegexEngine

#if canImport(Glibc)
    import Glibc
#endif

// The regular-expression engine (ECMA-262 syntax as JSON Schema's `pattern` has it, and Firebase's
// subset as rules' `matches()`). The input is a pattern, then a NUL and a subject string. Properties:
// - a pattern parses or is refused, never a crash (deep groups, huge counted repetitions);
// - the backtracker and the automaton, where both decide, agree;
// - no search takes longer than `timeLimit` of CPU time, whatever the pattern and subject (the
//   engine's step budgets must stop it first): a slower one is reported as a crash with the pattern.
//   CPU time, not wall time: on a loaded machine (a long run under `nice`) an input that took 0.2 s
//   of work once took over 2 s on the clock, a false alarm.

/// CPU time one input may take for everything below (ASan included).
let timeLimit = Duration.seconds(2)

/// The CPU time this thread has used.
func threadCPUTime() -> Duration {
    var now = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
    return .seconds(now.tv_sec) + .nanoseconds(now.tv_nsec)
}

@main
enum FuzzRegex {
    static func main() {
        runFuzzer { data in
            let (patternBytes, subjectBytes) = splitAtNUL(data)
            let pattern = String(decoding: patternBytes, as: UTF8.self)
            var subject = String(decoding: subjectBytes, as: UTF8.self)
            let start = threadCPUTime()
            defer {
                let elapsed = threadCPUTime() - start
                precondition(elapsed < timeLimit, "\(elapsed) for /\(pattern)/ on \(subject.utf8.count) bytes")
            }

            var parser = ECMARegexParser(pattern)
            if let (tree, groups) = try? parser.parse() {
                let regex = ECMARegex(tree: tree, groups: groups, source: pattern)
                let result = regex.search(subject)
                precondition(ECMARegex.isValidSyntax(pattern), "isValidSyntax refused a pattern that parses")
                if let automaton = RegexAutomaton(tree) {
                    let backtracker = RegexBacktracker(tree, groups: groups)
                    subject.withUTF8 { bytes in
                        let slow = backtracker.search(
                            bytes, anchored: false, firstByte: nil, budget: ECMARegex.backtrackingBudget(forBytes: bytes.count))
                        let fast = automaton.search(bytes, anchored: false, firstByte: nil, budget: RegexAutomaton.maxSteps)
                        if case .overBudget = slow { return }
                        if case .overBudget = fast { return }
                        precondition(slow == fast, "/\(pattern)/: the backtracker says \(slow), the automaton \(fast)")
                        precondition(result == fast, "/\(pattern)/: search says \(result), the automaton \(fast)")
                    }
                }
            } else {
                precondition(!ECMARegex.isValidSyntax(pattern), "isValidSyntax accepted a pattern that does not parse")
            }

            for flags in ["", "i"] {
                guard let rules = try? RulesRegex(pattern: pattern, flags: flags) else { continue }
                _ = try? rules.matches(subject)
            }
        }
    }
}
