import ArgumentParser
import DumpKit

/// `--duplicate-keys`, for the commands that turn a dump into another (`convert`, `migrate`).
struct DuplicateKeysOption: ParsableArguments {
    @Option(
        name: .customLong("duplicate-keys"),
        help:
            "A name twice in one object: refuse (the default: exit 1, naming both) or keep-last (keep the last member of the name, leave out the others; reads the input twice)."
    )
    var policy: DuplicateKeyPolicy = .refuse

    /// Says how many members `keep-last` left out.
    func note(dropped: Int, _ common: CommonOptions) {
        if dropped > 0 {
            common.note("--duplicate-keys keep-last: left out \(counted(dropped, "member")) whose name came again later in its object")
        }
    }
}

extension DuplicateKeyPolicy: ExpressibleByArgument {}
