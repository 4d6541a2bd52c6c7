import Foundation

/// The "Security settings" screen: the password, the e-mail address and its proof.
extension LatchkeyClient {
    /// Needs a recent step-up. Every other device is signed out; this one stays signed in.
    /// Returns how many other sessions ended.
    @discardableResult
    public func changePassword(current: String, new: String) async throws -> Int {
        try await send(Identity.ChangePassword(currentPassword: current, newPassword: new)).sessionsEnded
    }

    /// Needs a recent step-up. The new number must then be proven with a code
    /// (`startCode` for the phone proof); for some days after, transfers are confirmed with the
    /// device key only (`.conflict(field: nil, detail: "phone_recently_changed", status: nil)` for an SMS one).
    public func changePhone(to phone: String) async throws { _ = try await send(Identity.ChangePhone(phone: phone)) }

    /// The token of a `verify-email` link the app was opened with. Returns the verified address.
    @discardableResult
    public func verifyEmail(token: String) async throws -> String { try await send(Identity.VerifyEmail(token: token)).email }

    /// Mails a fresh verification link (at most one a minute).
    public func resendEmailVerification() async throws { _ = try await send(Identity.ResendVerification()) }

    /// Needs a recent step-up. Nothing changes until the link mailed to `email` is opened.
    public func changeEmail(to email: String) async throws { _ = try await send(Identity.ChangeEmail(email: email)) }

    /// The token of an `email-change/confirm` link. Returns the account's new address.
    @discardableResult
    public func confirmEmailChange(token: String) async throws -> String { try await send(Identity.ConfirmEmailChange(token: token)).email }

    /// The token of an `email-change/revert` link. Returns the restored address; every session,
    /// this one too, has ended.
    @discardableResult
    public func revertEmailChange(token: String) async throws -> String { try await send(Identity.RevertEmailChange(token: token)).email }

    /// Needs a recent step-up and the password. Deletes the account and what every service
    /// holds about the user, and forgets the session here. Throws
    /// `.conflict(field: nil, detail: "balance_not_zero", status: nil)` while money is left: the
    /// account stays until support has paid it out. Returns false when accounts had not decided
    /// yet (the deletion goes on by itself; signing in again shows whether it is done).
    @discardableResult
    public func deleteAccount(password: String) async throws -> Bool {
        let state = try await send(Identity.DeleteAccount(password: password)).state
        guard state != "closing_accounts" else { return false }
        try? store.saveSession(nil)
        return true
    }

    /// Needs a recent step-up. Everything every service holds about the user, as one document
    /// (`protocol/export.schema.json`), for a "Download my data" button.
    public func exportData() async throws -> Identity.Export.Response { try await send(Identity.Export()) }
}
