import Foundation

extension LatchkeyClient.Identity {
    /// A single-use challenge for attesting the device key about to be enrolled: with
    /// `DCAppAttestService`, `generateKey`, then `attestKey(keyID, clientDataHash:
    /// SHA256(challenge bytes ‖ the device key's X9.63 point))`, then `EnrollKey(appAttest:)`.
    public struct AppAttestChallenge: LatchkeyRequest, WireKeyed {
        public static let method = "identity.app_attest_challenge", session = SessionUse.required, retry = RetryClass.safe
        public init() {}
        enum CodingKeys: CodingKey, CaseIterable {}

        public struct Response: Codable, Sendable, Equatable, WireKeyed {
            /// base64url of 32 bytes.
            public let challenge: String
            public let expiresAt: Int
            enum CodingKeys: String, CodingKey, CaseIterable { case challenge, expiresAt = "expires_at" }

            public var challengeData: Data { Base64URL.decode(challenge) ?? Data() }
        }
    }
}

/// What `DCAppAttestService` gave for a device key's enrolment: the App Attest key's id
/// (`generateKey`, base64 as it is), its attestation (`attestKey`) and the challenge it binds.
public struct AppAttestProof: Codable, Sendable, Equatable {
    public let keyID: String
    public let attestation: Data
    public let challenge: String

    public init(keyID: String, attestation: Data, challenge: String) {
        (self.keyID, self.attestation, self.challenge) = (keyID, attestation, challenge)
    }

    enum CodingKeys: String, CodingKey { case keyID = "key_id", attestation, challenge }
}
