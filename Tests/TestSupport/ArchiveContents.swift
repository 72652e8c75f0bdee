import Foundation

/// The manifest of a DumpKit `.tar.zst` (parsed) and its decompressed tar (`zstd -dc`) after the
/// manifest's entry: what a sharded archive's merge must give as the unsharded archive does.
public func manifestAndEntries(of archive: String) throws -> (manifest: NSDictionary, entries: Data) {
    struct NotADumpKitArchive: Error, CustomStringConvertible { let description: String }
    let zstd = try RequiredTool.path("zstd", package: "zstd")
    let tar = try Shell.runData(zstd, ["-dc", archive])
    var offset = 0
    func size(at header: Int) -> Int {
        let field = tar[(header + 124)..<(header + 136)].prefix { $0 != 0 && $0 != 0x20 }
        return Int(String(decoding: field, as: UTF8.self), radix: 8) ?? -1
    }
    // A pax extended header may come before the manifest's own.
    while tar.count > offset + 512, tar[offset + 156] == UInt8(ascii: "x") { offset += 512 + (size(at: offset) + 511) / 512 * 512 }
    guard tar.count > offset + 512 else { throw NotADumpKitArchive(description: "\(archive): no entry") }
    let name = String(decoding: tar[offset..<(offset + 100)].prefix { $0 != 0 }, as: UTF8.self)
    guard name == ".dumpkit-manifest.json" else {
        throw NotADumpKitArchive(description: "\(archive): the first entry is \(name), not .dumpkit-manifest.json")
    }
    let length = size(at: offset)
    guard let manifest = try JSONSerialization.jsonObject(with: tar[(offset + 512)..<(offset + 512 + length)]) as? NSDictionary else {
        throw NotADumpKitArchive(description: "\(archive): the manifest is not a JSON object")
    }
    return (manifest, tar[(offset + 512 + (length + 511) / 512 * 512)...])
}
