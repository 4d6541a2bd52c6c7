import FoundationEssentials
import Secrets

/// What `identity.totp_enroll` gives, once: the secret in Base32 and the URI a QR code carries.
public struct TotpEnrollment: Sendable, Equatable {
    public var secret: String
    public var uri: String
}

extension IdentitySettings {
    /// Subkeys of the server key, one per use, so that one never doubles as another.
    var totpSealKey: [UInt8] { HMACSHA256.authenticate(Array("latchkey identity totp seal v1".utf8), key: serverKey) }
    var recoveryCodeKey: [UInt8] { HMACSHA256.authenticate(Array("latchkey identity recovery codes v1".utf8), key: serverKey) }
}

/// Authenticator apps (RFC 6238). Enrolling and removing are sensitive changes (recent aal 2);
/// a pending secret becomes a factor after one good code (`totp_activate`); `totp_verify` passes
/// it as a second factor. Codes share the user's budget of wrong second-factor codes.
extension IdentityService {
    static let totpSecretByteCount = 20  // 160 bits, RFC 4226's recommendation

    public func totpEnroll(token: String, caller: Caller) throws -> TotpEnrollment {
        let session = try recentlySteppedUpSession(token: token)
        guard let user = try store.user(id: session.userID) else { throw IdentityError.unauthenticated }
        var secret = SecureRandom.bytes(Self.totpSecretByteCount)
        defer { secureWipe(&secret) }
        let parameters = TotpParameters.standard
        let record = TotpRecord(
            sealedSecret: AES256GCM.seal(secret, key: settings.totpSealKey, associatedData: Array(user.userID.utf8)),
            parameters: parameters, createdAt: clock.now(), activatedAt: nil, lastStep: 0)
        guard try store.savePendingTotp(userID: user.userID, record: record) else {
            throw IdentityError.factorConflict(detail: "totp_active", "an authenticator app is already set up; remove it first")
        }
        let encoded = Base32.encode(secret)
        return TotpEnrollment(secret: encoded, uri: Self.otpauthURI(secret: encoded, issuer: settings.brand, account: user.username, parameters))
    }

    /// Turns the pending secret on after one good code from the app (proof it was scanned).
    public func totpActivate(token: String, code: String, caller: Caller) throws {
        let session = try recentlySteppedUpSession(token: token)
        try checkTotp(session: session, code: code, activating: true, caller: caller)
        notify(.authenticatorAdded, userID: session.userID, device: session.deviceID, at: clock.now())
    }

    /// A second factor: lifts the session to aal 2, as an SMS code does.
    public func totpVerify(token: String, code: String, caller: Caller) throws -> Int {
        let session = try introspect(token: token)
        try checkTotp(session: session, code: code, activating: false, caller: caller)
        return try elevate(sessionID: session.sessionID, factor: "totp", caller: caller)
    }

    public func totpRemove(token: String, caller: Caller) throws {
        let session = try recentlySteppedUpSession(token: token)
        let now = clock.now()
        guard try store.removeTotp(userID: session.userID, event: event(session.userID, "totp.removed", "ok", device: session.deviceID, caller, now)) else {
            throw IdentityError.notFound("no authenticator app is set up", detail: "no_totp")
        }
        notify(.authenticatorRemoved, userID: session.userID, device: session.deviceID, at: now)
    }

    private func checkTotp(session: SessionRecord, code: String, activating: Bool, caller: Caller) throws {
        guard code.utf8.count == TotpParameters.standard.digits, code.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
            throw IdentityError.invalidField("code", "code must be the 6 digits the authenticator app shows")
        }
        let userID = session.userID
        let now = clock.now()
        let sealKey = settings.totpSealKey
        let skew = settings.totpSkewSteps
        let outcome = try store.checkSecondFactor(
            userID: userID, policy: settings.secondFactorThrottle, now: now,
            events: { (step: Int64?) in
                let name = step == nil ? "factor.failed" : (activating ? "totp.enrolled" : "factor.passed")
                return [event(userID, name, step == nil || !activating ? "totp" : "ok", device: session.deviceID, caller, now)]
            },
            check: { c in
                guard let record = try IdentityStore.totpRecord(c, userID: userID), (record.activatedAt == nil) == activating else {
                    throw IdentityError.notFound(
                        activating ? "no authenticator app is waiting for its first code; enroll again" : "no authenticator app is set up",
                        detail: "no_totp")
                }
                var secret = try AES256GCM.open(record.sealedSecret, key: sealKey, associatedData: Array(userID.utf8))
                defer { secureWipe(&secret) }
                guard let step = Totp.matchingStep(code: code, secret: secret, now: now, after: record.lastStep, skewSteps: skew, record.parameters),
                    try IdentityStore.acceptTotpStep(c, userID: userID, step: step, activateAt: activating ? now : nil)
                else { return nil }
                return step
            })
        switch outcome {
        case .passed: return
        case .wrong(let attemptsLeft): throw IdentityError.invalidCode(attemptsLeft: attemptsLeft)
        case .locked(let seconds): throw IdentityError.factorLocked(retryAfterSeconds: seconds)
        }
    }

    /// `otpauth://totp/<issuer>:<account>?secret=...&issuer=...&algorithm=SHA1&digits=6&period=30`
    /// (the Key Uri Format authenticator apps read from a QR code).
    static func otpauthURI(secret: String, issuer: String, account: String, _ parameters: TotpParameters) -> String {
        "otpauth://totp/\(issuer.percentEncoded):\(account.percentEncoded)?secret=\(secret)&issuer=\(issuer.percentEncoded)"
            + "&algorithm=\(parameters.algorithm.rawValue)&digits=\(parameters.digits)&period=\(parameters.periodSeconds)"
    }
}
