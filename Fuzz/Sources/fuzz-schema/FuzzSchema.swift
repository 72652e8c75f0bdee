import FuzzSupport
import JSONSchema
import JSONStream

// JSON Schema compile and evaluate. The input is a schema (JSON), then a NUL and an instance (JSON;
// `null` without one). A schema compiles or is refused with an error, never a crash or a hang
// (references that loop, deep nesting, patterns that backtrack); the compiled schema then
// evaluates the instance, with `format` asserted:
// - `isValid` is false exactly when `validate` reports something;
// - the instance read onto a tape by the reader and laid out from its value find the same
//   problems (keyword, pointer, schema path, message).

/// What the violations say.
func summary(_ violations: [SchemaViolation]) -> [String] {
    violations.map { "\($0.keyword) \($0.pointer) \($0.schemaPath): \($0.message)" }
}

@main
enum FuzzSchema {
    static func main() {
        runFuzzer { data in
            let (schemaBytes, instanceBytes) = splitAtNUL(data)
            guard let schemaValue = try? JSONReader(bytes: schemaBytes).readValue(),
                let schema = try? JSONSchema.compile(schemaValue, options: .init(assertFormat: true))
            else { return }
            let tape = JSONTape()
            let reader = JSONReader(bytes: instanceBytes.isEmpty ? Array("null".utf8) : instanceBytes)
            guard (try? reader.readValue(into: tape)) != nil else { return }
            let instance = tape.value(at: 0)
            let findings = schema.validate(instance)
            precondition(
                schema.isValid(instance) == findings.isEmpty, "isValid says \(schema.isValid(instance)), validate found \(findings)")
            precondition(
                summary(schema.validate(tape)) == summary(findings),
                "the reader's tape found \(schema.validate(tape)), the value \(findings)")
        }
    }
}
