import Foundation

/// An access key, its secret and, for temporary credentials, a session token.
public struct AWSCredentials: Sendable {
    public let accessKeyID: String
    public let secretAccessKey: String
    public let sessionToken: String?

    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
    }
}

/// Where an S3 client connects and as whom, found the way AWS's own tools find it: `AWS_ACCESS_KEY_ID`,
/// `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, else the `AWS_PROFILE` (or `default`) section of
/// `~/.aws/credentials` (`AWS_SHARED_CREDENTIALS_FILE`); the region from `AWS_REGION`,
/// `AWS_DEFAULT_REGION`, else the profile in `~/.aws/config` (`AWS_CONFIG_FILE`), else `us-east-1`;
/// the endpoint from `--endpoint`, `AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL`, the profile's
/// `endpoint_url`, else AWS itself.
public struct AWSConfiguration: Sendable {
    public var credentials: AWSCredentials
    public var region: String
    /// A custom endpoint (`http://127.0.0.1:8333`), addressed path-style; `nil` for AWS, addressed
    /// virtual-host style (`https://BUCKET.s3.REGION.amazonaws.com`).
    public var endpoint: String?

    public init(credentials: AWSCredentials, region: String, endpoint: String?) {
        self.credentials = credentials
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
        if let id = env("AWS_ACCESS_KEY_ID"), let secret = env("AWS_SECRET_ACCESS_KEY") {
            credentials = AWSCredentials(accessKeyID: id, secretAccessKey: secret, sessionToken: env("AWS_SESSION_TOKEN"))
        } else if let id = profileValue("aws_access_key_id"), let secret = profileValue("aws_secret_access_key") {
            credentials = AWSCredentials(accessKeyID: id, secretAccessKey: secret, sessionToken: profileValue("aws_session_token"))
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
            credentials: credentials, region: region, endpoint: endpoint.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 })
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
