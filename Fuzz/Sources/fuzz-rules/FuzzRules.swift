import FirebaseRules
import FuzzSupport
import JSONStream

// The rules file parser, expression parser and compiler, and the evaluator. The input is a rules
// file, then a NUL and a database (JSON): the rules are loaded (refused with an error, never a crash,
// however deep or long the expressions), and when they load and the database is JSON, every rule is
// evaluated over it (`validate --rules --strict`): no crash, no hang, and the same findings twice.

@main
enum FuzzRules {
    static func main() {
        runFuzzer { data in
            let (rulesBytes, databaseBytes) = splitAtNUL(data)
            guard let rules = try? RulesFile(bytes: rulesBytes, name: "fuzz.rules.json") else { return }
            let database = databaseBytes.isEmpty ? JSONValue.null : (try? JSONReader(bytes: databaseBytes).readValue()) ?? .null
            let evaluator = RulesEvaluator(rules: rules, auth: .object(["uid": .string("fuzz")]), now: 1_480_000_000_000)
            let source = InMemoryRulesSource(database)
            let findings = evaluator.validateDump(source, strict: true)
            precondition(evaluator.validateDump(source, strict: true) == findings, "a second evaluation found otherwise")
        }
    }
}
