/// A file that cannot be opened or read (as opposed to bad JSON inside it).
public struct InputError: Error, CustomStringConvertible, Sendable {
    public let file: String
    public let message: String
    public init(file: String, message: String) {
        self.file = file
        self.message = message
    }
    public var description: String { "\(file): \(message)" }
}
