import Foundation

extension LatchkeyClient.Identity {
    /// Options for a new passkey: feed them to
    /// `ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: options.rp.id)`
    /// `.createCredentialRegistrationRequest(challenge: options.challengeData, name: options.user.name, userID: options.userIDData)`.
    /// A sensitive change: needs a second factor passed in the last minutes.
    public struct PasskeyRegisterOptions: LatchkeyRequest, WireKeyed {
        public static let method = "identity.passkey_register_options", session = SessionUse.required, retry = RetryClass.safe
        public init() {}
        enum CodingKeys: CodingKey, CaseIterable {}

        /// `PublicKeyCredentialCreationOptionsJSON`.
        public struct Response: Codable, Sendable, Equatable, WireKeyed {
            public let challenge: String
            public let rp: RelyingParty
            public let user: User
            public let pubKeyCredParams: [Parameter]
            /// Milliseconds.
            public let timeout: Int
            public let excludeCredentials: [PasskeyDescriptor]
            public let authenticatorSelection: Selection
            public let attestation: String
            public let extensions: Extensions
            enum CodingKeys: String, CodingKey, CaseIterable {
                case challenge, rp, user, pubKeyCredParams, timeout, excludeCredentials, authenticatorSelection, attestation, extensions
            }

            public var challengeData: Data { Base64URL.decode(challenge) ?? Data() }
            /// The opaque user handle (never the user id): `userID:` of the registration request.
            public var userIDData: Data { Base64URL.decode(user.id) ?? Data() }

            public struct RelyingParty: Codable, Sendable, Equatable { public let id, name: String }
            public struct User: Codable, Sendable, Equatable { public let id, name, displayName: String }
            public struct Parameter: Codable, Sendable, Equatable {
                public let type: String
                /// COSE: -7 ES256, -257 RS256.
                public let alg: Int
            }
            public struct Selection: Codable, Sendable, Equatable {
                public let residentKey: String
                public let requireResidentKey: Bool
                public let userVerification: String
            }
            public struct Extensions: Codable, Sendable, Equatable { public let credProps: Bool }
        }
    }

    /// Stores the passkey the registration made, from `ASAuthorizationPlatformPublicKeyCredentialRegistration`'s
    /// `credentialID`, `rawClientDataJSON` and `rawAttestationObject`.
    public struct PasskeyRegister: LatchkeyRequest, WireKeyed {
        public static let method = "identity.passkey_register", session = SessionUse.required, retry = RetryClass.never
        public var credential: PasskeyRegistration
        /// Shown in the user's list (default: the passkey provider's name, or "Passkey").
        public var name: String?
        /// From the app: an App Attest key vouching for the registration, its attestation over
        /// SHA-256(`AppAttestChallenge`'s bytes ‖ the credential id).
        public var appAttest: AppAttestProof?
        public init(credential: PasskeyRegistration, name: String? = nil, appAttest: AppAttestProof? = nil) {
            (self.credential, self.name, self.appAttest) = (credential, name, appAttest)
        }
        enum CodingKeys: String, CodingKey, CaseIterable { case credential, name, appAttest = "app_attest" }

        public struct Response: Codable, Sendable, Equatable, WireKeyed {
            public let passkeyID: String
            enum CodingKeys: String, CodingKey, CaseIterable { case passkeyID = "passkey_id" }
        }
    }

    /// Options for signing in with a passkey: `createCredentialAssertionRequest(challenge: options.challengeData)`.
    /// Without a username, any of the user's passkeys on the device may answer (the system sheet lists them).
    public struct PasskeyLoginOptions: LatchkeyRequest, WireKeyed {
        public static let method = "identity.passkey_login_options", session = SessionUse.none, retry = RetryClass.safe
        public var username: String?
        public init(username: String? = nil) { self.username = username }
        enum CodingKeys: String, CodingKey, CaseIterable { case username }

        public typealias Response = PasskeyRequestOptions
    }

    /// Signs in with the assertion the system sheet gave. With user verification (Face ID,
    /// Touch ID or the passcode) the session is at aal 2 at once; without, it owes a factor.
    public struct PasskeyLogin: LatchkeyRequest, WireKeyed {
        public static let method = "identity.passkey_login", session = SessionUse.none, retry = RetryClass.never
        public var credential: PasskeyAssertion
        public var deviceID: String
        public var deviceToken: String?
        public init(credential: PasskeyAssertion, deviceID: String, deviceToken: String? = nil) {
            (self.credential, self.deviceID, self.deviceToken) = (credential, deviceID, deviceToken)
        }
        enum CodingKeys: String, CodingKey, CaseIterable { case credential, deviceID = "device_id", deviceToken = "device_token" }

        /// A passkey login answers as a password login does.
        public typealias Response = Login.Response
    }

    /// Options for a step-up with one of the user's passkeys (user verification required).
    public struct PasskeyVerifyOptions: LatchkeyRequest, WireKeyed {
        public static let method = "identity.passkey_verify_options", session = SessionUse.required, retry = RetryClass.safe
        public init() {}
        enum CodingKeys: CodingKey, CaseIterable {}

        public typealias Response = PasskeyRequestOptions
    }

    /// Pays an owed factor (the `passkey` factor) or refreshes the step-up window.
    public struct PasskeyVerify: LatchkeyRequest, WireKeyed {
        public static let method = "identity.passkey_verify", session = SessionUse.required, retry = RetryClass.never
        public var credential: PasskeyAssertion
        public init(credential: PasskeyAssertion) { self.credential = credential }
        enum CodingKeys: String, CodingKey, CaseIterable { case credential }

        public struct Response: Codable, Sendable, Equatable, WireKeyed {
            public let aal: Int
            enum CodingKeys: String, CodingKey, CaseIterable { case aal }
        }
    }

    public struct Passkeys: LatchkeyRequest, WireKeyed {
        public static let method = "identity.passkeys", session = SessionUse.required, retry = RetryClass.safe
        public init() {}
        enum CodingKeys: CodingKey, CaseIterable {}

        public struct Response: Codable, Sendable, Equatable, WireKeyed {
            public let passkeys: [PasskeySummary]
            enum CodingKeys: String, CodingKey, CaseIterable { case passkeys }
        }
    }

    /// Removes a passkey; a sensitive change.
    public struct RevokePasskey: LatchkeyRequest, WireKeyed {
        public typealias Response = OK
        public static let method = "identity.revoke_passkey", session = SessionUse.required, retry = RetryClass.safe
        public var passkeyID: String
        public init(passkeyID: String) { self.passkeyID = passkeyID }
        enum CodingKeys: String, CodingKey, CaseIterable { case passkeyID = "passkey_id" }
    }
}

/// `PublicKeyCredentialRequestOptionsJSON`.
public struct PasskeyRequestOptions: Codable, Sendable, Equatable, WireKeyed {
    public let challenge: String
    /// Milliseconds.
    public let timeout: Int
    public let rpId: String
    public let allowCredentials: [PasskeyDescriptor]
    public let userVerification: String
    enum CodingKeys: String, CodingKey, CaseIterable { case challenge, timeout, rpId, allowCredentials, userVerification }

    public var challengeData: Data { Base64URL.decode(challenge) ?? Data() }
}

/// `PublicKeyCredentialDescriptorJSON`: `allowedCredentials` / `excludedCredentials` of the iOS requests.
public struct PasskeyDescriptor: Codable, Sendable, Equatable {
    public let type: String
    public let id: String
    public let transports: [String]?

    public var credentialID: Data { Base64URL.decode(id) ?? Data() }
}

/// `RegistrationResponseJSON`, made from what iOS gives.
public struct PasskeyRegistration: Codable, Sendable, Equatable {
    public let id, rawId, type: String
    public let response: Response

    public init(credentialID: Data, rawClientDataJSON: Data, rawAttestationObject: Data) {
        id = Base64URL.encode(credentialID)
        rawId = id
        type = "public-key"
        response = Response(clientDataJSON: Base64URL.encode(rawClientDataJSON), attestationObject: Base64URL.encode(rawAttestationObject))
    }

    public struct Response: Codable, Sendable, Equatable { public let clientDataJSON, attestationObject: String }
}

/// `AuthenticationResponseJSON`, made from `ASAuthorizationPlatformPublicKeyCredentialAssertion`.
public struct PasskeyAssertion: Codable, Sendable, Equatable {
    public let id, rawId, type: String
    public let response: Response

    public init(credentialID: Data, rawClientDataJSON: Data, rawAuthenticatorData: Data, signature: Data, userID: Data?) {
        id = Base64URL.encode(credentialID)
        rawId = id
        type = "public-key"
        response = Response(
            clientDataJSON: Base64URL.encode(rawClientDataJSON), authenticatorData: Base64URL.encode(rawAuthenticatorData),
            signature: Base64URL.encode(signature), userHandle: userID.map(Base64URL.encode))
    }

    public struct Response: Codable, Sendable, Equatable { public let clientDataJSON, authenticatorData, signature: String; public let userHandle: String? }
}

/// One of the user's passkeys, as `identity.passkeys` lists it (never its key).
public struct PasskeySummary: Codable, Sendable, Equatable {
    public let passkeyID: String
    public let name: String
    public let createdAt: Int
    public let lastUsedAt: Int?
    /// Synced passkeys (iCloud Keychain) are backup eligible; `backedUp` says whether it is synced now.
    public let backupEligible, backedUp: Bool
    public let aaguid: String
    /// The passkey provider's name, where known ("iCloud Keychain").
    public let authenticator: String?
    /// `none`, `self`, `basic` or `anonca` (Apple's anonymous attestation).
    public let attestation: String
    /// Its signature counter went backwards (a cloned authenticator?): it signs nothing in until removed.
    public let flagged: Bool
    /// The app whose App Attest key vouched for the registration; nil when none did.
    public let appAttest: DeviceKeySummary.AppAttestedBy?
    enum CodingKeys: String, CodingKey {
        case passkeyID = "passkey_id", name, createdAt = "created_at", lastUsedAt = "last_used_at", backupEligible = "backup_eligible"
        case backedUp = "backed_up", aaguid, authenticator, attestation, flagged, appAttest = "app_attest"
    }
}
