import JSONStream

/// Writes records given by absolute paths into the object the writer is in (`baseDepth` keys deep),
/// opening and closing objects below it as paths change; records must come grouped by path (a closed
/// object is never reopened). It remembers the paths of the objects it closed (not of the records),
/// to refuse reopening one.
final class PathPlacer {
    private let writer: JSONWriter
    /// Depth of the object the placer writes into (its keys are not written).
    private let baseDepth: Int
    private var open: [String] = []  // keys of the objects opened below the base
    private var closed: Set<[String]> = []

    init(writer: JSONWriter, baseDepth: Int) {
        self.writer = writer
        self.baseDepth = baseDepth
    }

    /// Places at `path` (the full path from the root) the value `writeValue` writes.
    func place(_ path: [String], writeValue: (JSONWriter) throws -> Void) throws {
        guard path.count > baseDepth else { throw PlacementError.notBelowBase(JSONPointer.string(path)) }
        let rel = path[baseDepth...]
        var common = 0
        while common < open.count, common < rel.count - 1, open[common] == rel[rel.startIndex + common] { common += 1 }
        while open.count > common {
            try writer.endObject()
            closed.insert(open)
            open.removeLast()
        }
        for key in rel[(rel.startIndex + common)..<(rel.endIndex - 1)] {
            open.append(key)
            if closed.contains(open) { throw PlacementError.outOfOrder(JSONPointer.string(path)) }
            try writer.name(key)
            try writer.beginObject()
        }
        try writer.name(rel[rel.endIndex - 1])
        try writeValue(writer)
    }

    /// Closes every object the placer opened.
    func closeAll() throws {
        while !open.isEmpty {
            try writer.endObject()
            open.removeLast()
        }
    }
}

/// A record that cannot be placed in the output tree.
public enum PlacementError: Error, CustomStringConvertible, Sendable {
    case outOfOrder(String)
    case notBelowBase(String)
    case undeclaredMove(from: String, to: String)

    public var description: String {
        switch self {
        case .outOfOrder(let p):
            return "record \(p) comes after its parent object was closed; records must be grouped by path (sort the NDJSON by path)"
        case .notBelowBase(let p):
            return "record \(p) cannot be placed: it would replace the whole document"
        case .undeclaredMove(let from, let to):
            return "record \(from) is moved to \(to), but the writer was not told that records move"
        }
    }
}
