import JSONStream

extension JSONValue {
    /// The value with each child that `transform` rewrites replaced, or `nil` when no child changed.
    ///
    /// `transform` gets each member's key (an array element's index as a string) and value, and
    /// returns the new value or `nil` to keep it. Scalars have no children and give `nil`.
    func rewritingChildren(_ transform: (String, JSONValue) throws -> JSONValue?) rethrows -> JSONValue? {
        switch self {
        case .object(var o):
            var changed = false
            for i in o.members.indices {
                if let v = try transform(o.members[i].key, o.members[i].value) {
                    o.members[i].value = v
                    changed = true
                }
            }
            return changed ? .object(o) : nil
        case .array(var a):
            var changed = false
            for i in a.indices {
                if let v = try transform(String(i), a[i]) {
                    a[i] = v
                    changed = true
                }
            }
            return changed ? .array(a) : nil
        default:
            return nil
        }
    }
}
