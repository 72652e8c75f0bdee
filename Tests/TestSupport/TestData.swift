import Foundation
import XCTest

/// Locates the shared test material in `../shared/testdata` beside the project root.
///
/// Where it is missing, tests skip with a clear message; with `CI=true` they fail instead, so CI can
/// never pass by skipping them.
public enum TestData {
    /// The project root (the folder holding `Package.swift`).
    public static let projectRoot: URL = {
        var url = URL(fileURLWithPath: #filePath)
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { return url }
        }
        fatalError("Package.swift not found above \(#filePath)")
    }()

    /// `../shared/testdata/<name>`, or a skip (a failure when `CI=true`) when it is absent.
    public static func directory(_ name: String) throws -> URL {
        let url = projectRoot.deletingLastPathComponent().appendingPathComponent("shared/testdata/\(name)")
        var isDir: ObjCBool = false
        if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDir), isDir.boolValue { return url }
        let message = "test material \(url.path) is missing (clone the project with ../shared beside it)"
        if ProcessInfo.processInfo.environment["CI"] == "true" { throw Missing(description: message) }
        throw XCTSkip(message)
    }

    /// Thrown (failing the test) when material is missing under CI.
    public struct Missing: Error, CustomStringConvertible {
        public let description: String
    }

    /// The files of a directory, sorted by name.
    public static func files(in dir: URL, withExtension ext: String? = nil) throws -> [URL] {
        try FileManager.default.contentsOfDirectory(at: dir, includingPropertiesForKeys: nil)
            .filter { ext == nil || $0.pathExtension == ext }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }
}

/// A temporary directory removed when the test ends.
public final class TemporaryDirectory {
    public let url: URL

    public init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("dumpkit-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    /// A path inside the directory.
    public func path(_ name: String) -> String { url.appendingPathComponent(name).path }
}
