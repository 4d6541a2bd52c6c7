import Secrets
import Storage

/// A signed-in user's own changes to the account: the password, and the e-mail address, which
/// is proven by a link mailed to it and changed only through one.
///
/// An address that is not verified yet still receives what the account needs (its verification
/// link, reset links, security notices): it is the only address there is. A change never sends
/// an undo link to an address that was never proven, since it may be a stranger's (a typo).
extension IdentityService {
    static let emailTokenPrefix = "lke_"

    /// A fresh link token and its row.
    func emailToken(
        _ purpose: EmailTokenPurpose, userID: String, email: String, changeID: String? = nil, previousVerifiedAt: Int64? = nil, now: Int64
    ) -> (token: String, record: EmailTokenRecord) {
        let token = OpaqueToken.make(prefix: Self.emailTokenPrefix)
        let lifetime = purpose == .revert ? settings.emailRevertSeconds : settings.emailLinkSeconds
        return (token, EmailTokenRecord(
            tokenHash: OpaqueToken.hash(token), purpose: purpose, userID: userID, email: email, changeID: changeID,
            previousVerifiedAt: previousVerifiedAt, createdAt: now, expiresAt: now + lifetime))
    }

    // MARK: Password

    /// Needs a recent step-up and the current password, which is checked on the account's login
    /// budget (a session thief cannot guess it faster than a login could). Every other session
    /// and device token ends; this session and its device's token stay. Returns how many
    /// sessions ended.
    public func changePassword(token: String, currentPassword: String, newPassword: String, caller: Caller) throws -> Int {
        let session = try recentlySteppedUpSession(token: token)
        guard let user = try store.user(id: session.userID) else { throw IdentityError.unauthenticated }
        try settings.policy.check(newPassword, username: user.username, email: user.email)
        let now = clock.now()
        try checkCurrentPassword(currentPassword, of: user, session: session, caller: caller, now: now)
        let hash = try PasswordHasher.hash(PasswordPolicy.normalize(newPassword), parameters: settings.scrypt)
        let ended = try store.changePassword(
            userID: user.userID, username: user.username, hash: hash, keep: (session.sessionID, session.deviceTokenHash), now: now,
            events: [
                event(user.userID, "password.changed", "ok", device: session.deviceID, caller, now),
                event(user.userID, "session.revoked", "password_changed", device: session.deviceID, caller, now),
            ])
        notices.passwordChanged(to: user.email, locale: user.locale, device: session.deviceID, at: now, productName: settings.brand)
        return ended
    }

    /// The signed-in user's password, checked on the account's and the client's login budgets
    /// exactly as a login without a device token is: wrong ones lock the account for logins too.
    func checkCurrentPassword(_ password: String, of user: UserRecord, session: SessionRecord, caller: Caller, now: Int64) throws {
        let reservation = try reserveLoginAttempt(
            username: user.username, user: user, deviceID: session.deviceID, deviceToken: nil, caller: caller, now: now)
        guard verifyPassword(PasswordPolicy.normalize(password), against: user.passwordHash) else {
            try settleFailedLogin(reservation, username: user.username, user: user, deviceID: session.deviceID, caller: caller, now: now)
            throw IdentityError.invalidCredentials("the current password is wrong")
        }
        if case .untrusted(let address) = reservation { try? clientBudget.refund(address: address, now: Double(now)) }
    }

    // MARK: Phone

    /// Needs a recent step-up. The new number is a claim until its owner passes a proof code
    /// (`verification.start` with `purpose: phone_proof`): no code goes to it as a factor
    /// before. For `phoneChangeCoolingOffSeconds` after, SMS codes confirm no money. The
    /// address is mailed at once.
    public func changePhone(token: String, phone rawPhone: String, caller: Caller) throws {
        let session = try recentlySteppedUpSession(token: token)
        let phone = try Normalization.phone(rawPhone, defaultCountry: settings.defaultCountry)
        guard let user = try store.user(id: session.userID) else { throw IdentityError.unauthenticated }
        guard phone != user.phone else { throw IdentityError.invalidField("phone", "this is the account's phone number already") }
        let now = clock.now()
        try store.changePhone(userID: user.userID, phone: phone, notifying: (user.phone, user.locale), now: now, event: event(user.userID, "phone.changed", "ok", device: session.deviceID, caller, now))
        notices.phoneChanged(
            to: user.email, locale: user.locale, newPhone: phone, device: session.deviceID, at: now, coolingOffSeconds: settings.phoneChangeCoolingOffSeconds,
            productName: settings.brand)
    }

    /// Until when SMS codes confirm no money for this user (nil: they do).
    func phoneCoolingOffUntil(_ user: UserRecord) -> Int64? {
        guard let changed = user.phoneChangedAt, settings.phoneChangeCoolingOffSeconds > 0 else { return nil }
        let until = changed + settings.phoneChangeCoolingOffSeconds
        return until > clock.now() ? until : nil
    }

    // MARK: Verification

    /// Marks the address the link was mailed to verified, if it is still the account's.
    /// Returns that address.
    public func verifyEmail(token: String, caller: Caller) throws -> String {
        let now = clock.now()
        let used = try useLink(token, .verify, now: now) { link, user, c in
            guard user.email == link.email else { throw EmailTokenRefusal.invalid }
            guard try IdentityStore.markVerified(userID: user.userID, email: user.email, at: now, c) else { return [] }
            return [event(user.userID, "email.verified", "ok", device: nil, caller, now)]
        }
        return used.token.email
    }

    /// Mails a fresh verification link (the earlier ones stop working), at most one a minute.
    public func resendVerification(token: String, caller: Caller) throws {
        let session = try settledSession(token: token)
        guard let user = try store.user(id: session.userID) else { throw IdentityError.unauthenticated }
        guard user.emailVerifiedAt == nil else { throw IdentityError.factorConflict(detail: "already_verified", "this address is verified already") }
        let now = clock.now()
        let (link, record) = emailToken(.verify, userID: user.userID, email: user.email, now: now)
        try store.issueEmailTokens(
            [record], voidingEarlier: [.verify], now: now, interval: settings.emailResendIntervalSeconds, event: event(user.userID, "email.verification_sent", "resend", device: session.deviceID, caller, now))
        notices.verifyAddress(to: user.email, locale: user.locale, token: link, links: settings.accountLinks, validForSeconds: settings.emailLinkSeconds, productName: settings.brand)
    }

    /// The operator's word that the address is the user's (the demo user's, a support call).
    /// False when it was verified already.
    public func operatorVerifyEmail(userID: String, caller: Caller) throws -> Bool {
        let now = clock.now()
        return try store.markEmailVerified(userID: userID, now: now, event: event(userID, "email.verified", "operator", device: nil, caller, now))
    }

    // MARK: Changing the address

    /// Starts a change: a confirmation link to the new address, and at once a notice to the old
    /// one with a link that undoes the change for a week (when the old address was verified).
    /// An address another account has gets the same answer; its owner is told by mail instead.
    public func changeEmail(token: String, email rawEmail: String, caller: Caller) throws {
        let session = try recentlySteppedUpSession(token: token)
        let email = try Normalization.email(rawEmail)
        guard let user = try store.user(id: session.userID) else { throw IdentityError.unauthenticated }
        guard email != user.email else { throw IdentityError.invalidField("email", "this is the account's address already") }
        let now = clock.now()
        let audit = event(user.userID, "email.change_requested", "ok", device: session.deviceID, caller, now)
        let oldVerified = user.emailVerifiedAt != nil
        if try store.user(email: email) != nil {
            try store.record([audit])
            notices.addressInUse(to: email, locale: user.locale, productName: settings.brand)
            if oldVerified {
                notices.addressChangeRequested(
                    to: user.email, locale: user.locale, newAddress: email, token: nil, links: settings.accountLinks, validForSeconds: 0, productName: settings.brand)
            }
            return
        }
        let changeID = Self.newID("emc_")
        let confirm = emailToken(.change, userID: user.userID, email: email, changeID: changeID, now: now)
        let revert = emailToken(.revert, userID: user.userID, email: user.email, changeID: changeID, previousVerifiedAt: user.emailVerifiedAt, now: now)
        try store.issueEmailTokens(oldVerified ? [confirm.record, revert.record] : [confirm.record], voidingEarlier: [.change], now: now, event: audit)
        notices.confirmAddressChange(
            to: email, locale: user.locale, token: confirm.token, links: settings.accountLinks, validForSeconds: settings.emailLinkSeconds, productName: settings.brand)
        if oldVerified {
            notices.addressChangeRequested(
                to: user.email, locale: user.locale, newAddress: email, token: revert.token, links: settings.accountLinks,
                validForSeconds: settings.emailRevertSeconds, productName: settings.brand)
        }
    }

    /// Applies a change: the new address, verified by this very link. Returns it.
    public func confirmEmailChange(token: String, caller: Caller) throws -> String {
        let now = clock.now()
        let used = try useLink(token, .change, now: now) { link, user, c in
            try IdentityStore.setEmail(userID: user.userID, email: link.email, verifiedAt: now, c)
            return [event(user.userID, "email.changed", "ok", device: nil, caller, now)]
        }
        return used.token.email
    }

    /// Undoes a change, pending or applied: the old address is back (verified as it was), the
    /// change's confirmation stops working, and every session and device token ends, since
    /// whoever made the change may hold them. Returns the restored address.
    public func revertEmailChange(token: String, caller: Caller) throws -> String {
        let now = clock.now()
        let used = try useLink(token, .revert, now: now) { link, user, c in
            if let changeID = link.changeID { try IdentityStore.voidChange(changeID, purpose: .change, now: now, c) }
            if user.email != link.email {
                try IdentityStore.setEmail(userID: user.userID, email: link.email, verifiedAt: link.previousVerifiedAt, c)
            }
            _ = try IdentityStore.endEverySession(userID: user.userID, now: now, c)
            return [
                event(user.userID, "email.change_reverted", "ok", device: nil, caller, now),
                event(user.userID, "session.revoked", "email_change_reverted", device: nil, caller, now),
            ]
        }
        notices.addressRestored(to: used.token.email, locale: used.user.locale, productName: settings.brand)
        return used.token.email
    }

    /// Uses a mailed link of `purpose` once, or throws `invalid_token` (`conflict` when the address
    /// it would set has another account now).
    private func useLink(
        _ token: String, _ purpose: EmailTokenPurpose, now: Int64,
        apply: (EmailTokenRecord, UserRecord, Connection) throws -> [PendingEvent]
    ) throws -> (token: EmailTokenRecord, user: UserRecord) {
        guard OpaqueToken.isWellFormed(token, prefix: Self.emailTokenPrefix) else { throw IdentityError.invalidLink }
        switch try store.useEmailToken(hash: OpaqueToken.hash(token), purpose: purpose, now: now, apply: apply) {
        case .success(let used): return used
        case .failure(.invalid): throw IdentityError.invalidLink
        case .failure(.addressTaken): throw IdentityError.conflict(field: "email", "this address belongs to another account now")
        }
    }
}
