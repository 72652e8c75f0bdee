import ArgumentParser
import CloudHTTP
import DumpKit
import Foundation
import LiveDatabase

/// Options of the commands that talk to a live Realtime Database (`export`, `import`).
struct DatabaseOptions: ParsableArguments {
    @Option(
        help:
            "An OAuth2 access token (sent as Authorization: Bearer), e.g. from `gcloud auth print-access-token`; default GOOGLE_OAUTH_ACCESS_TOKEN, else a token for the service-account key GOOGLE_APPLICATION_CREDENTIALS names."
    )
    var accessToken: String?

    @Option(name: .customLong("auth"), help: "A legacy database secret or a Firebase ID token, sent as auth=.")
    var authSecret: String?

    @Option(help: "Requests in flight at once.")
    var jobs: Int = 8

    @Option(help: "Seconds a request may go without an answer before it is abandoned and tried again.")
    var timeout: Int = 300

    func validate() throws {
        guard jobs >= 1, jobs <= 256 else { throw ValidationError("--jobs must be 1...256") }
        guard timeout >= 1 else { throw ValidationError("--timeout must be at least 1 second") }
        if accessToken != nil, authSecret != nil { throw ValidationError("give --access-token or --auth, not both") }
    }

    /// The location `text` names, with `FIREBASE_DATABASE_EMULATOR_HOST` applied.
    func location(_ text: String) throws -> DatabaseURL { try Self.location(text) }

    static func location(_ text: String) throws -> DatabaseURL {
        do {
            return try DatabaseURL(text)
        } catch let error as DatabaseURL.Invalid {
            throw UsageError(error.description)
        }
    }

    /// A client with the credentials the options and the environment give (none for an emulator):
    /// `--auth`, else an access token from `--access-token`, `GOOGLE_OAUTH_ACCESS_TOKEN` or the
    /// service-account key `GOOGLE_APPLICATION_CREDENTIALS` names (CloudHTTP's token provider).
    func client(for location: DatabaseURL) throws -> DatabaseClient {
        try Self.client(for: location, accessToken: accessToken, authSecret: authSecret, timeout: timeout)
    }

    /// The client for options given another way (`restore`, whose `--access-token` serves its bucket too).
    static func client(for location: DatabaseURL, accessToken: String?, authSecret: String?, timeout: Int = 300) throws -> DatabaseClient {
        var auth = DatabaseAuth.none
        if location.sendsCredentials {
            if let secret = authSecret {
                auth = .authParameter(secret)
            } else if let provider = try GoogleAccessTokenProvider.fromEnvironment(accessToken: accessToken, scopes: Self.scopes) {
                auth = .accessToken { try await provider.accessToken() }
            }
        }
        return DatabaseClient(auth: auth, requestTimeout: .seconds(Int64(timeout)))
    }

    /// The scopes a service account's token needs for the Realtime Database
    /// (firebase.google.com/docs/database/rest/auth).
    static let scopes = ["https://www.googleapis.com/auth/firebase.database", "https://www.googleapis.com/auth/userinfo.email"]
}

/// Runs a database command body: errors become one line on standard error and the documented exit
/// code (2 for usage, credentials, a missing database or an unreachable one; 1 for data the database
/// or the limit checks refused).
func reportingDatabaseErrors<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    do {
        return try runBlocking(body)
    } catch let e as ImportJob.ChunkRefused {
        FileHandle.standardError.write(Data("dumpkit: error: \(e)\n".utf8))
        throw e.underlying.kind == .refused || e.underlying.kind == .writeTooLarge ? Exit.findings : Exit.input
    } catch let e as ExitCode {
        throw e
    } catch {
        FileHandle.standardError.write(Data("dumpkit: error: \(error)\n".utf8))
        throw error is DataError ? Exit.findings : Exit.input
    }
}
