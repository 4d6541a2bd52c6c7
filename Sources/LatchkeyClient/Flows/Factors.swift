import Foundation

public typealias AuthenticatorEnrollment = LatchkeyClient.Identity.TotpEnroll.Response
public typealias RecoveryResult = LatchkeyClient.Identity.RecoveryVerify.Response

extension LatchkeyClient {
    // MARK: Paying an owed factor

    /// Pays the `totp` factor with the six digits the authenticator app shows. Returns the
    /// session's aal (2). `invalidCode(attemptsLeft:)` for a wrong or replayed code; `locked`
    /// once the user's budget of wrong codes is spent (wait `retryAfter`).
    @discardableResult
    public func verifyAuthenticatorCode(_ code: String) async throws -> Int { try await send(Identity.TotpVerify(code: code)).aal }

    /// Pays whichever factor is owed with a recovery code (the phone or the app was lost).
    /// The code is used up; `remaining` says how many are left.
    @discardableResult
    public func verifyRecoveryCode(_ code: String) async throws -> RecoveryResult { try await send(Identity.RecoveryVerify(code: code)) }

    // MARK: Setting factors up (each needs a second factor passed in the last minutes)

    /// Starts setting up an authenticator app: show `uri` as a QR code (and `secret` for typing),
    /// then call `activateAuthenticator` with the first code the app shows. The secret is
    /// answered this once; do not store or log it. `conflict(detail: "totp_active")` when one is on.
    public func enrollAuthenticator() async throws -> AuthenticatorEnrollment { try await send(Identity.TotpEnroll()) }

    /// Turns the enrolled app on: from now on every sign-in owes `totp`.
    public func activateAuthenticator(code: String) async throws { _ = try await send(Identity.TotpActivate(code: code)) }

    /// Removes the authenticator app (active or pending); `notFound(detail: "no_totp")` when there is none.
    public func removeAuthenticator() async throws { _ = try await send(Identity.TotpRemove()) }

    /// Ten new single-use recovery codes for the person to write down; every earlier code stops working.
    public func generateRecoveryCodes() async throws -> [String] { try await send(Identity.RecoveryCodes()).codes }
}
