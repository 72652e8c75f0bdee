import Crypto
import Foundation

/// Where a command keeps the files of a run (saved pages, journals, work folders) for one of its
/// inputs or outputs: `.NAME.SUFFIX` beside it, so that the same command run again finds them. A
/// location without a folder of its own (a URL, `s3://b/dump.json`, or `-`) gets
/// `.NAME-HASH.SUFFIX` in `TMPDIR` instead, named by the whole location.
public enum RunFiles {
    public static func beside(_ location: String, suffix: String) -> String {
        let name = location.split(separator: "/").last.map(String.init) ?? location
        if location == "-" || location.contains("://") {
            let hash = Hex.lowercase(SHA256.hash(data: Array(location.utf8))).prefix(16)
            let temporary = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
            return URL(fileURLWithPath: temporary).appendingPathComponent(".\(name)-\(hash).\(suffix)").path
        }
        let url = URL(fileURLWithPath: location)
        return url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).\(suffix)").path
    }
}
