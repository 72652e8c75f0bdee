// The two kinds of errors every job throws besides input and output errors; the command line
// maps them to exit codes 2 and 1.

/// Options that do not fit together or values out of range (exit code 2).
public struct UsageError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ message: String) { description = message }
}

/// An error in the data itself rather than in how it was given: the command exits with 1.
public protocol DataError: Error {}
