import JSONStream

/// A name twice in one object of a dump: the database has one value per key, so the dump is
/// ambiguous. `convert` and `migrate` refuse such a dump (`validate` reports `json:duplicate-key`).
public struct DuplicateKeyError: Error, DataError, CustomStringConvertible, Sendable {
    public let file: String
    public let duplicate: DuplicateKeyDetector.Duplicate

    public var description: String {
        let d = duplicate
        return "\(file):\(d.line):\(d.column) (byte \(d.secondOffset)) at \(d.pointer): the name is in this object twice "
            + "(first at byte \(d.firstOffset)): the dump is ambiguous"
    }

    /// Watches `reader` for duplicate names; call `check()` after reading to throw the first one.
    final class Watch {
        private var first: DuplicateKeyDetector.Duplicate?
        private let file: String

        init(_ reader: JSONReader, file: String) {
            self.file = file
            let detector = DuplicateKeyDetector { [unowned self] d in if self.first == nil { self.first = d } }
            reader.tokenObserver = { detector.observe($0, $1) }
        }

        func check() throws {
            if let first { throw DuplicateKeyError(file: file, duplicate: first) }
        }
    }
}
