import CloudHTTP
import DumpKit
import Foundation
import LiveDatabase

/// `backup --dump URL` and `--rules URL`: a live database's data (LiveDatabase's `ExportJob`) and its
/// security rules (`GET /.settings/rules.json`, kept byte for byte), fetched into a work folder beside
/// the archive, `.NAME.dumpkit-backup.d`, before the archive is written from it.
///
/// The export cannot go straight into its tar entry: an entry's size comes before its bytes, and
/// `ExportJob` assembles its output from saved pages at the end anyway. A killed run leaves the
/// folder, and the export's saved pages in it, so that the next run with the same arguments fetches
/// only what is missing; the folder is removed once the archive is written.
struct DatabaseBackup {
    /// The folder the fetched files go into.
    let workDirectory: String
    let accessToken: String?
    let authSecret: String?
    /// Export requests in flight.
    var jobs = 8

    /// Whether a `--dump` or `--rules` location names a database rather than a file.
    static func isDatabase(_ location: String) -> Bool {
        location.hasPrefix("https://") || location.hasPrefix("http://")
    }

    /// `.NAME.dumpkit-backup.d` beside `output` (in the temporary folder for standard output, and for a
    /// dry run, which must not touch what an interrupted run left).
    static func workDirectory(for output: String, dryRun: Bool) -> String {
        if output == "-" || dryRun { return NSTemporaryDirectory() + "/dumpkit-backup-\(getpid())\(dryRun ? "-dry" : "").d" }
        return RunFiles.beside(output, suffix: "dumpkit-backup.d")
    }

    /// The dump's file name: `NS.json`, or `NS_a_b.json` for the path `/a/b`.
    static func dumpName(_ location: DatabaseURL) -> String {
        ([location.namespace] + location.path).joined(separator: "_") + ".json"
    }

    /// The location `text` names (`FIREBASE_DATABASE_EMULATOR_HOST` applied).
    static func location(_ text: String) throws -> DatabaseURL {
        do {
            return try DatabaseURL(text)
        } catch let error as DatabaseURL.Invalid {
            throw UsageError(error.description)
        }
    }

    func makeWorkDirectory() throws {
        do {
            try FileManager.default.createDirectory(atPath: workDirectory, withIntermediateDirectories: false)
        } catch CocoaError.fileWriteFileExists {
        } catch {
            if FileManager.default.fileExists(atPath: workDirectory) { return }
            throw OutputError(file: workDirectory, message: "cannot make the folder of fetched files: \(error.localizedDescription)")
        }
    }

    /// The token provider for Google credentials (`--access-token`, `GOOGLE_OAUTH_ACCESS_TOKEN`, the
    /// service-account key), when no `--auth` secret is given.
    private func tokens() throws -> GoogleAccessTokenProvider? {
        guard authSecret == nil else { return nil }
        return try GoogleAccessTokenProvider.fromEnvironment(accessToken: accessToken, scopes: DatabaseOptions.scopes)
    }

    /// The credentials requests to `location` carry: none for an emulator, `--auth`, else a Google token.
    private func auth(for location: DatabaseURL) throws -> DatabaseAuth {
        guard location.sendsCredentials else { return .none }
        if let authSecret { return .authParameter(authSecret) }
        if let provider = try tokens() { return .accessToken { try await provider.accessToken() } }
        return .none
    }

    /// Exports `location` into the work folder, resuming an interrupted export; the file's path.
    func exportDump(_ location: DatabaseURL) throws -> String {
        try makeWorkDirectory()
        let path = workDirectory + "/" + Self.dumpName(location)
        var job = ExportJob(source: location, output: path)
        job.jobs = jobs
        let client = DatabaseClient(auth: try auth(for: location))
        _ = try reportingDatabaseErrors { [job] in try await client.using { try await job.run(client: $0) } }
        return path
    }

    /// Reads the rules of the database `location` names (its path is ignored) into the work folder as
    /// `database.rules.json`, the bytes as the database gives them; the file's path.
    func fetchRules(_ location: DatabaseURL) throws -> String {
        try makeWorkDirectory()
        let client = DatabaseClient(auth: try auth(for: location))
        let bytes = try reportingDatabaseErrors { try await client.using { try await DatabaseRules.read(location, client: $0) } }
        let path = workDirectory + "/database.rules.json"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// An empty file standing in for one a dry run does not fetch; its path.
    func placeholder(_ name: String) throws -> String {
        try makeWorkDirectory()
        let path = workDirectory + "/" + name
        guard FileManager.default.createFile(atPath: path, contents: nil) else {
            throw OutputError(file: path, message: "cannot create a placeholder for the dry run")
        }
        return path
    }

    /// Removes the work folder when nothing was fetched into it (a failed first request).
    func removeIfEmpty() {
        if (try? FileManager.default.contentsOfDirectory(atPath: workDirectory))?.isEmpty == true { remove() }
    }

    /// Removes the work folder (once the archive is written).
    func remove() {
        try? FileManager.default.removeItem(atPath: workDirectory)
    }
}
