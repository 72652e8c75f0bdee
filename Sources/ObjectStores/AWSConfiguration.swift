import Foundation

/// An access key, its secret and, for temporary credentials, a session token.
public struct AWSCredentials: Sendable {
    public let accessKeyID: String
    public let secretAccessKey: String
    public let sessionToken: String?
    /// When temporary credentials stop working (a `credential_process`'s `Expiration`).
    public let expiration: Date?

    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil, expiration: Date? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
        self.expiration = expiration
    }
}

/// Where an S3 client connects and as whom, found the way AWS's own tools find it: `AWS_ACCESS_KEY_ID`,
/// `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, else the `AWS_PROFILE` (or `default`) section of
/// `~/.aws/credentials` (`AWS_SHARED_CREDENTIALS_FILE`) or `~/.aws/config`: its keys, else its
/// `credential_process` (run when the store is opened, and again before what it gave expires); the region from `AWS_REGION`,
/// `AWS_DEFAULT_REGION`, else the profile in `~/.aws/config` (`AWS_CONFIG_FILE`), else `us-east-1`;
/// the endpoint from `--endpoint`, `AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL`, the profile's
/// `endpoint_url`, else AWS itself.
public struct AWSConfiguration: Sendable {
    public var credentials: AWSCredentials
    /// Gets new credentials when `credentials` expire (a `credential_process` run again).
    public var refresh: (@Sendable () throws -> AWSCredentials)?
    public var region: String
    /// A custom endpoint (`http://127.0.0.1:8333`), addressed path-style; `nil` for AWS, addressed
    /// virtual-host style (`https://BUCKET.s3.REGION.amazonaws.com`).
    public var endpoint: String?

    public init(
        credentials: AWSCredentials, region: String, endpoint: String?, refresh: (@Sendable () throws -> AWSCredentials)? = nil
    ) {
        self.credentials = credentials
        self.refresh = refresh
        self.region = region
        self.endpoint = endpoint
    }

    /// The configuration the environment and the profile files give; `store` names the store in errors.
    public static func resolve(
        store: String, endpoint: String? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> AWSConfiguration {
        func env(_ key: String) -> String? { environment[key].flatMap { $0.isEmpty ? nil : $0 } }
        let home = env("HOME") ?? NSHomeDirectory()
        let profile = env("AWS_PROFILE") ?? "default"
        let credentialsFile = INIFile(path: env("AWS_SHARED_CREDENTIALS_FILE") ?? home + "/.aws/credentials")
        let configFile = INIFile(path: env("AWS_CONFIG_FILE") ?? home + "/.aws/config")
        let configSection = profile == "default" ? "default" : "profile \(profile)"
        func profileValue(_ key: String) -> String? {
            credentialsFile.value(section: profile, key: key) ?? configFile.value(section: configSection, key: key)
        }

        let credentials: AWSCredentials
        var refresh: (@Sendable () throws -> AWSCredentials)?
        if let id = env("AWS_ACCESS_KEY_ID"), let secret = env("AWS_SECRET_ACCESS_KEY") {
            credentials = AWSCredentials(accessKeyID: id, secretAccessKey: secret, sessionToken: env("AWS_SESSION_TOKEN"))
        } else if let id = profileValue("aws_access_key_id"), let secret = profileValue("aws_secret_access_key") {
            credentials = AWSCredentials(accessKeyID: id, secretAccessKey: secret, sessionToken: profileValue("aws_session_token"))
        } else if let command = profileValue("credential_process") {
            let run: @Sendable () throws -> AWSCredentials = {
                try ProcessCredentials.run(
                    command, environment: environment,
                    fail: { ObjectStoreError(store: store, endpoint: endpoint ?? "AWS", message: "the profile \"\(profile)\": \($0)") })
            }
            credentials = try run()
            refresh = run
        } else if profileValue("sso_session") != nil || profileValue("sso_start_url") != nil {
            throw ObjectStoreError(
                store: store, endpoint: endpoint ?? "AWS",
                message:
                    "the profile \"\(profile)\" signs in with IAM Identity Center (SSO), which dumpkit does not do itself: give a profile "
                    + "credential_process = aws configure export-credentials --profile \(profile) --format process, "
                    + "or export them: eval \"$(aws configure export-credentials --profile \(profile) --format env)\"")
        } else {
            throw ObjectStoreError(
                store: store, endpoint: endpoint ?? "AWS",
                message:
                    "no credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or the profile \"\(profile)\" in ~/.aws/credentials")
        }
        let region =
            env("AWS_REGION") ?? env("AWS_DEFAULT_REGION") ?? configFile.value(section: configSection, key: "region") ?? "us-east-1"
        let endpoint =
            endpoint ?? env("AWS_ENDPOINT_URL_S3") ?? env("AWS_ENDPOINT_URL")
            ?? configFile.value(section: configSection, key: "endpoint_url")
        if let endpoint, !(endpoint.hasPrefix("http://") || endpoint.hasPrefix("https://")) {
            throw ObjectStoreError(store: store, endpoint: endpoint, message: "the endpoint must be an http:// or https:// URL")
        }
        return AWSConfiguration(
            credentials: credentials, region: region, endpoint: endpoint.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 },
            refresh: refresh)
    }
}

/// A profile's `credential_process`: a command (run by `/bin/sh -c`) that prints
/// `{"Version": 1, "AccessKeyId": ..., "SecretAccessKey": ..., "SessionToken": ..., "Expiration": ...}`,
/// as AWS's tools run it (docs.aws.amazon.com/cli/v1/userguide/cli-configure-sourcing-external.html).
enum ProcessCredentials {
    static func run(_ command: String, environment: [String: String], fail: (String) -> ObjectStoreError) throws -> AWSCredentials {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        process.environment = environment
        let output = Pipe()
        let errors = TemporaryOutput()
        process.standardOutput = output
        process.standardError = errors.handle
        do { try process.run() } catch { throw fail("cannot run its credential_process (\(command)): \(error)") }
        let printed = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw fail("its credential_process (\(command)) exited with status \(process.terminationStatus): \(errors.text)")
        }
        guard let o = (try? JSONSerialization.jsonObject(with: printed)) as? [String: Any], o["Version"] as? Int == 1,
            let id = o["AccessKeyId"] as? String, let secret = o["SecretAccessKey"] as? String
        else {
            throw fail("its credential_process (\(command)) did not print {\"Version\": 1, \"AccessKeyId\": ..., \"SecretAccessKey\": ...}")
        }
        var expires: Date?
        if let expiration = o["Expiration"] as? String {
            guard let date = S3Client.date(iso8601: expiration) else {
                throw fail("its credential_process (\(command)) gave an Expiration that is no ISO 8601 time: \(expiration)")
            }
            guard date > Date() else { throw fail("its credential_process (\(command)) gave credentials that expired at \(expiration)") }
            expires = date
        }
        return AWSCredentials(accessKeyID: id, secretAccessKey: secret, sessionToken: o["SessionToken"] as? String, expiration: expires)
    }

    /// Standard error kept in an unnamed file, read after the process ends (a pipe left unread could
    /// fill and stop it).
    private final class TemporaryOutput {
        let handle: FileHandle
        init() {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("dumpkit-\(UUID().uuidString)").path
            _ = FileManager.default.createFile(atPath: path, contents: nil)
            handle = FileHandle(forUpdatingAtPath: path) ?? FileHandle.nullDevice
            unlink(path)
        }
        var text: String {
            handle.seek(toFileOffset: 0)
            let data = handle.readDataToEndOfFile()
            return String(decoding: data.prefix(2000), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }
}

/// The `[section]` / `key = value` files of the AWS tools; a missing file has no values.
struct INIFile {
    private var sections: [String: [String: String]] = [:]

    init(path: String) {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return }
        var section = ""
        for rawLine in text.split(whereSeparator: \.isNewline) {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("["), line.hasSuffix("]") {
                section = line.dropFirst().dropLast().trimmingCharacters(in: .whitespaces)
            } else if let eq = line.firstIndex(of: "=") {
                let key = line[..<eq].trimmingCharacters(in: .whitespaces).lowercased()
                sections[section, default: [:]][key] = line[line.index(after: eq)...].trimmingCharacters(in: .whitespaces)
            }
        }
    }

    func value(section: String, key: String) -> String? { sections[section]?[key] }
}
