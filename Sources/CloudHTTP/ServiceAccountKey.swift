import Crypto
import Foundation
import _CryptoExtras

/// A Google service-account key file (the JSON `GOOGLE_APPLICATION_CREDENTIALS` names), and the signed
/// JWT assertion that is exchanged for an access token at its `token_uri`.
public struct ServiceAccountKey: Sendable {
    public let clientEmail: String
    public let privateKeyID: String?
    public let tokenURI: String
    let privateKey: _RSA.Signing.PrivateKey

    /// Reads a key file; the error names the file and what is wrong with it.
    public init(contentsOf path: String) throws {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw GoogleCredentialsError("cannot read the service-account key \(path): \(error.localizedDescription)")
        }
        try self.init(json: data, source: path)
    }

    /// Reads a key from its JSON; `source` names it in errors.
    public init(json: Data, source: String) throws {
        struct File: Decodable {
            let type: String?
            let client_email: String?
            let private_key: String?
            let private_key_id: String?
            let token_uri: String?
        }
        guard let file = try? JSONDecoder().decode(File.self, from: json) else {
            throw GoogleCredentialsError("the service-account key \(source) is not a JSON object")
        }
        if let type = file.type, type != "service_account" {
            throw GoogleCredentialsError(
                "the credentials \(source) are of type \"\(type)\"; only \"service_account\" keys are supported (or pass --access-token)")
        }
        guard let email = file.client_email, let pem = file.private_key else {
            throw GoogleCredentialsError("the service-account key \(source) lacks \"client_email\" or \"private_key\"")
        }
        do {
            privateKey = try _RSA.Signing.PrivateKey(pemRepresentation: pem)
        } catch {
            throw GoogleCredentialsError("the private key in \(source) is not an RSA key of 2048 bits or more: \(error)")
        }
        clientEmail = email
        privateKeyID = file.private_key_id
        tokenURI = file.token_uri ?? "https://oauth2.googleapis.com/token"
    }

    /// The RS256-signed JWT that asks `tokenURI` for an access token with `scopes`, valid for an hour from `issuedAt`.
    public func assertion(scopes: [String], issuedAt: Date) throws -> String {
        var header: [String: String] = ["alg": "RS256", "typ": "JWT"]
        if let privateKeyID { header["kid"] = privateKeyID }
        let iat = Int(issuedAt.timeIntervalSince1970)
        let claims: [String: Any] = [
            "iss": clientEmail, "scope": scopes.joined(separator: " "), "aud": tokenURI, "iat": iat, "exp": iat + 3600,
        ]
        let signingInput =
            try base64URL(JSONSerialization.data(withJSONObject: header, options: .sortedKeys)) + "."
            + base64URL(JSONSerialization.data(withJSONObject: claims, options: .sortedKeys))
        let signature = try privateKey.signature(for: SHA256.hash(data: Data(signingInput.utf8)), padding: .insecurePKCS1v1_5)
        return signingInput + "." + base64URL(signature.rawRepresentation)
    }
}

/// Base64url without padding, as JWTs are written.
func base64URL(_ data: Data) -> String {
    data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        .replacingOccurrences(of: "=", with: "")
}

/// Credentials that cannot be read or are refused (exit code 2).
public struct GoogleCredentialsError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}
