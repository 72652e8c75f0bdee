import Foundation

/// The relative paths of the files below `directory` (not folders), sorted.
public func filesBelow(_ directory: String) -> [String] {
    guard let enumerator = FileManager.default.enumerator(atPath: directory) else { return [] }
    return (enumerator.allObjects as? [String] ?? []).filter {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: directory + "/" + $0, isDirectory: &isDirectory) && !isDirectory.boolValue
    }.sorted()
}

/// The bytes of the file at `path`.
public func contents(_ path: String) throws -> [UInt8] {
    Array(try Data(contentsOf: URL(fileURLWithPath: path)))
}

/// Writes `bytes` to the file at `path`, replacing it.
public func writeFile(_ path: String, _ bytes: [UInt8]) throws {
    try Data(bytes).write(to: URL(fileURLWithPath: path))
}
