import CLibFuzzer
import Foundation

/// The harness's body, called by libFuzzer's C callback (which cannot capture context).
nonisolated(unsafe) private var body: ((UnsafeRawBufferPointer) -> Void)?

/// Runs libFuzzer with the process's arguments over `target`, which gets each input's bytes (valid
/// only during the call) and traps (`preconditionFailure`) when a property does not hold; exits with
/// libFuzzer's status.
public func runFuzzer(_ target: @escaping (UnsafeRawBufferPointer) -> Void) -> Never {
    body = target
    var argc = CommandLine.argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
    let status = LLVMFuzzerRunDriver(&argc, &argv) { data, size in
        body!(UnsafeRawBufferPointer(start: data, count: size))
        return 0
    }
    exit(status)
}

/// Splits `input` at the first NUL byte: the harnesses that take two documents (a plan and a record,
/// rules and a database, a schema and an instance) read them this way. Without a NUL, the second is empty.
public func splitAtNUL(_ input: UnsafeRawBufferPointer) -> (first: [UInt8], second: [UInt8]) {
    guard let i = input.firstIndex(of: 0) else { return (Array(input), []) }
    return (Array(input[..<i]), Array(input[(i + 1)...]))
}
