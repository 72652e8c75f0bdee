import Foundation
import JSONSchema
import JSONStream
import TestSupport
import XCTest

@testable import DumpKit

/// Schema sets found by `$id` in folders and through URI prefixes, never over the network.
final class SchemaCatalogTests: XCTestCase {
    private func json(_ text: String) throws -> JSONValue {
        try JSONReader(source: MemoryByteSource(text)).readValue()
    }

    private func compile(_ text: String, resolver: JSONSchemaResolver) throws -> JSONSchema {
        try JSONSchema.compile(json(text), resolver: resolver)
    }

    func testCatalogFindsSchemasByTheirID() throws {
        let dir = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.path("sub"), withIntermediateDirectories: true)
        try Data(#"{"$id": "https://json.schemastore.org/eslintrc.json", "properties": {"root": {"type": "boolean"}}}"#.utf8)
            .write(to: dir.url.appendingPathComponent("sub/eslintrc.json"))
        // Data, broken JSON and schemas without an absolute $id are passed over.
        try Data(#"{"users": {"$id": "https://json.schemastore.org/x.json"}}"#.utf8).write(to: dir.url.appendingPathComponent("dump.json"))
        try Data("{".utf8).write(to: dir.url.appendingPathComponent("broken.json"))
        try Data(#"{"$id": "relative.json"}"#.utf8).write(to: dir.url.appendingPathComponent("relative.json"))
        let package = #"{"$id": "https://json.schemastore.org/package.json", "properties": {"eslintConfig": {"$ref": "eslintrc.json"}}}"#
        let flat = SchemaCatalog()
        try flat.addDirectory(dir.url.path, recursive: false)
        XCTAssertThrowsError(try compile(package, resolver: flat.resolver()))
        let deep = SchemaCatalog()
        try deep.addDirectory(dir.url.path, recursive: true)
        let schema = try compile(package, resolver: deep.resolver())
        XCTAssertTrue(schema.isValid(try json(#"{"eslintConfig": {"root": true}}"#)))
        XCTAssertFalse(schema.isValid(try json(#"{"eslintConfig": {"root": 1}}"#)))
        XCTAssertThrowsError(try SchemaCatalog().addDirectory(dir.path("nowhere"), recursive: true))
        // A URI prefix served from a folder.
        let mapped = SchemaCatalog()
        mapped.addPrefix("https://json.schemastore.org", directory: dir.path("sub"))
        XCTAssertFalse(try compile(package, resolver: mapped.resolver()).isValid(try json(#"{"eslintConfig": {"root": 1}}"#)))
    }
}
