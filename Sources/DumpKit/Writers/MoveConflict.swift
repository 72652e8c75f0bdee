import JSONStream

/// A moved record that cannot be placed at its new path: the path is taken, lies inside a value
/// that is not an object, or is one the database forbids.
public struct MoveConflict: Error, DataError, CustomStringConvertible, Sendable {
    /// Why the record cannot be placed.
    public enum Reason: Sendable, Equatable {
        /// The input already has a value at the target.
        case existingValue
        /// Another moved record (read at `source`) is placed at the target, or at a path above it.
        case movedRecord(source: [String], target: [String])
        /// The value at `parent`, above the target, is not an object.
        case notAnObject(parent: [String])
        /// A key of the target holds a byte the database forbids, or is empty or too long.
        case forbiddenKey(String)
        /// The value would end deeper than the database allows.
        case tooDeep(Int)
    }

    /// Where the record was read.
    public var source: [String]
    /// Where it was moved.
    public var target: [String]
    public var reason: Reason
    /// The record's value, so that a run that sets conflicts aside loses nothing.
    public var value: JSONValue

    public var description: String {
        let record = "record \(JSONPointer.string(source)) moved to \(JSONPointer.string(target))"
        switch reason {
        case .existingValue:
            return "\(record): the input already has a value there"
        case .movedRecord(let other, let otherTarget) where otherTarget == target:
            return "\(record): record \(JSONPointer.string(other)) is moved there too"
        case .movedRecord(let other, let otherTarget):
            return "\(record): record \(JSONPointer.string(other)) is moved to \(JSONPointer.string(otherTarget)), above it"
        case .notAnObject(let parent):
            return "\(record): \(parent.isEmpty ? "the document root" : JSONPointer.string(parent)) is not an object"
        case .forbiddenKey(let why):
            return "\(record): \(why)"
        case .tooDeep(let depth):
            return "\(record): its value would end \(depth) keys deep, deeper than the database's \(DatabaseLimitsChecker.maxDepth)"
        }
    }

    /// Why a record moved to `target` with a value `valueDepth` levels deep breaks the database's
    /// limits, if it does.
    static func limitProblem(target: [String], valueDepth: Int) -> Reason? {
        for key in target {
            var k = key
            if let problem = k.withUTF8({ utf8 -> String? in
                if utf8.isEmpty { return "an empty key, which the database forbids" }
                if utf8.count > DatabaseLimitsChecker.maxKeyBytes {
                    return
                        "key '\(key.prefix(40))...' is \(utf8.count) bytes long, longer than the database's \(DatabaseLimitsChecker.maxKeyBytes)"
                }
                if let b = DatabaseLimitsChecker.firstForbiddenKeyByte(UnsafeRawBufferPointer(utf8)) {
                    let shown =
                        b < 0x20 || b == 0x7F ? "byte 0x" + String(b, radix: 16, uppercase: true) : "'\(Character(UnicodeScalar(b)))'"
                    return "key '\(JSONPointer.escape(key))' holds \(shown), which the database forbids in keys"
                }
                return nil
            }) {
                return .forbiddenKey(problem)
            }
        }
        let depth = target.count + valueDepth
        return depth > DatabaseLimitsChecker.maxDepth ? .tooDeep(depth) : nil
    }
}
