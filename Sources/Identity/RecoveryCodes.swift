import Secrets

/// Recovery codes (Ory Kratos' lookup secrets): ten single-use codes the user writes down, for
/// when the phone is gone. Shown once; only their keyed hashes are stored.
public enum RecoveryCodes {
    public static let count = 10
    /// Crockford's Base32: no i, l, o, u, so a code read aloud or copied by hand survives.
    static let alphabet = Array("0123456789abcdefghjkmnpqrstvwxyz".utf8)
    static let characters = 10  // 50 random bits

    /// `count` distinct codes, each `xxxxx-xxxxx`.
    static func generate() -> [String] {
        var codes: [String] = []
        while codes.count < count {
            let letters = SecureRandom.bytes(characters).map { alphabet[Int($0 & 31)] }  // 256 is a multiple of 32: no bias
            let code = String(decoding: letters.prefix(5), as: UTF8.self) + "-" + String(decoding: letters.suffix(5), as: UTF8.self)
            if !codes.contains(code) { codes.append(code) }
        }
        return codes
    }

    /// The code as hashed: lower case, without dashes or spaces, Crockford's look-alikes folded
    /// (i and l read as 1, o as 0). Nil when it cannot be a recovery code.
    static func normalize(_ text: String) -> String? {
        guard text.utf8.count <= 32 else { return nil }
        var letters: [UInt8] = []
        for byte in text.lowercased().utf8 where byte != UInt8(ascii: "-") && byte != UInt8(ascii: " ") {
            switch byte {
            case UInt8(ascii: "i"), UInt8(ascii: "l"): letters.append(UInt8(ascii: "1"))
            case UInt8(ascii: "o"): letters.append(UInt8(ascii: "0"))
            default:
                guard alphabet.contains(byte) else { return nil }
                letters.append(byte)
            }
        }
        return letters.count == characters ? String(decoding: letters, as: UTF8.self) : nil
    }

    /// HMAC-SHA-256 under identity's recovery-code key: a copy of the database alone does not
    /// let anyone test guesses offline.
    static func hash(_ normalized: String, key: [UInt8]) -> [UInt8] {
        HMACSHA256.authenticate(Array(normalized.utf8), key: key)
    }
}

extension IdentityService {
    /// A new set of codes, replacing every earlier one (used or not): a sensitive change.
    public func recoveryCodes(token: String, caller: Caller) throws -> [String] {
        let session = try recentlySteppedUpSession(token: token)
        let codes = RecoveryCodes.generate()
        let key = settings.recoveryCodeKey
        let hashes = codes.map { RecoveryCodes.hash(RecoveryCodes.normalize($0)!, key: key) }
        let now = clock.now()
        try store.replaceRecoveryCodes(
            userID: session.userID, hashes: hashes, now: now,
            event: event(session.userID, "recovery_codes.generated", String(codes.count), device: session.deviceID, caller, now))
        notify(.recoveryCodesGenerated, userID: session.userID, device: session.deviceID, at: now)
        return codes
    }

    /// A recovery code as a second factor: used up, the session lifted to aal 2. Returns the aal
    /// and how many unused codes remain (also recorded: `recovery_code.used`, `left_<n>`).
    public func recoveryVerify(token: String, code: String, caller: Caller) throws -> (aal: Int, remaining: Int) {
        let session = try introspect(token: token)
        guard let normalized = RecoveryCodes.normalize(code) else {
            throw IdentityError.invalidField("code", "code must be a recovery code: 10 letters and digits, dashes allowed")
        }
        let hash = RecoveryCodes.hash(normalized, key: settings.recoveryCodeKey)
        let userID = session.userID
        let now = clock.now()
        let outcome = try store.checkSecondFactor(
            userID: userID, policy: settings.secondFactorThrottle, now: now,
            events: { (remaining: Int?) in
                guard let remaining else { return [event(userID, "factor.failed", "recovery_code", device: session.deviceID, caller, now)] }
                return [
                    event(userID, "factor.passed", "recovery_code", device: session.deviceID, caller, now),
                    event(userID, "recovery_code.used", "left_\(remaining)", device: session.deviceID, caller, now),
                ]
            },
            check: { c in try IdentityStore.useRecoveryCode(c, userID: userID, hash: hash, now: now) })
        switch outcome {
        case .passed(let remaining):
            let aal = try elevate(sessionID: session.sessionID, factor: "recovery_code", caller: caller)
            if let user = try? store.user(id: userID) {
                notices.recoveryCodeUsed(to: user.email, locale: user.locale, remaining: remaining, productName: settings.brand)
            }
            return (aal, remaining)
        case .wrong(let attemptsLeft): throw IdentityError.invalidCode(attemptsLeft: attemptsLeft)
        case .locked(let seconds): throw IdentityError.factorLocked(retryAfterSeconds: seconds)
        }
    }
}
