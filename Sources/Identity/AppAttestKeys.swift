import LineProtocol
import Secrets
import WebAuthn

/// What `identity.enroll_key` carries when an App Attest key vouches for the device key: the
/// App Attest key's id and attestation (as `DCAppAttestService` gives them, base64) and the
/// challenge the attestation's client data binds.
public struct AppAttestEnrollment: Sendable {
    public var keyID: String
    public var attestation: String
    public var challenge: String

    public init(keyID: String, attestation: String, challenge: String) {
        (self.keyID, self.attestation, self.challenge) = (keyID, attestation, challenge)
    }
}

/// App Attest for device keys. The app makes an App Attest key (`generateKey`), asks for a
/// challenge, and attests that key over SHA-256(challenge ‖ the device key's X9.63 point)
/// (`attestKey(_:clientDataHash:)`), so the attestation vouches for exactly the key being
/// enrolled. A passkey registered from the app may carry one too, over SHA-256(challenge ‖ its
/// credential id): recorded and listed, never required (web passkeys cannot have one). Each later
/// use of the device key may carry an assertion of the App Attest key over
/// the same bytes the device key signs; its counter only grows.
extension IdentityService {
    public func appAttestChallenge(token: String) throws -> IssuedChallenge {
        let session = try settledSession(token: token)
        guard settings.appAttest.policy != nil else { throw Self.appAttestOff }
        let issued = try issuePasskeyChallenge(.appAttest, userID: session.userID)
        return IssuedChallenge(challenge: Base64URL.encode(issued.bytes), expiresAt: issued.expiresAt)
    }

    /// The attestation of an enrolment, verified and its challenge used up. `bound`: what the
    /// client data hash binds after the challenge (a device key's point, a passkey's credential id).
    func attest(_ enrollment: AppAttestEnrollment, userID: String, bound: [UInt8], now: Int64) throws -> DeviceKeyAttestation {
        guard let policy = settings.appAttest.policy else { throw Self.appAttestOff }
        guard let keyID = Base64URL.decode(enrollment.keyID), keyID.count == 32 else {
            throw IdentityError.invalidField("app_attest", "app_attest.key_id must be the App Attest key id (32 bytes, base64)")
        }
        guard let attestation = Base64URL.decode(enrollment.attestation) else {
            throw IdentityError.invalidField("app_attest", "app_attest.attestation must be base64")
        }
        guard let challenge = Base64URL.decode(enrollment.challenge) else {
            throw IdentityError.invalidField("app_attest", "app_attest.challenge must be the base64url challenge app_attest_challenge gave")
        }
        try consumePasskeyChallenge(challenge, purpose: .appAttest, userID: userID, now: now)
        do throws(WebAuthnError) {
            let key = try AppAttest.verifyAttestation(
                attestation, keyID: keyID, clientDataHash: SHA256.hash(challenge + bound), policy: policy, now: now)
            return DeviceKeyAttestation(appID: key.appID, environment: key.environment.rawValue, publicKey: key.publicKey, counter: 0, receipt: key.receipt)
        } catch {
            throw IdentityError.ceremonyRefused(error)
        }
    }

    /// Checks the assertion of a use of `key` over `clientData` (what the device key signed)
    /// and takes its counter. True: an attested use. An assertion for a key that has no App
    /// Attest key, or one that does not verify, is refused; none at all is simply not attested.
    func attestedUse(of key: DeviceKeyRecord, assertion: String?, clientData: [UInt8]) throws -> Bool {
        guard let assertion else { return false }
        guard let attestation = key.attestation else {
            throw IdentityError.invalidField("app_attest_assertion", "this device's key was enrolled without App Attest")
        }
        guard let bytes = Base64URL.decode(assertion) else { throw IdentityError.invalidField("app_attest_assertion", "app_attest_assertion must be base64") }
        let attested = AppAttest.AttestedKey(
            keyID: SHA256.hash(attestation.publicKey), publicKey: attestation.publicKey, appID: attestation.appID,
            environment: AppAttest.Environment(rawValue: attestation.environment) ?? .production, receipt: [])
        let counter: UInt32
        do throws(WebAuthnError) {
            counter = try AppAttest.verifyAssertion(bytes, clientData: clientData, key: attested, storedCounter: attestation.counter)
        } catch {
            throw IdentityError.ceremonyRefused(error)
        }
        guard try store.advanceAttestCounter(keyID: key.keyID, to: counter) else {
            throw IdentityError.ceremonyRefused(WebAuthnError(.counterRegressed, "App Attest: another assertion took this counter first"))
        }
        return true
    }

    /// Under `--require-app-attest`, a use that reaches aal 2 or confirms money must be attested.
    func requireAttestedUse(_ attested: Bool) throws {
        guard settings.appAttest.required, !attested else { return }
        throw IdentityError.notFound(
            "this server takes a device key for sign-in and money only with an App Attest assertion of the genuine app", detail: "app_attest_required")
    }

    static let appAttestOff = IdentityError.factorConflict(detail: "app_attest_off", "App Attest is not configured on this server")
}
