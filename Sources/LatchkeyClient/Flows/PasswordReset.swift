import Foundation

extension LatchkeyClient {
    /// Asks for a reset link by e-mail. The server answers the same whether or not an account
    /// uses the address, so this returns normally for both.
    public func requestPasswordReset(email: String) async throws { _ = try await send(Reset.Request(email: email)) }

    /// Checks the token of the link the app was opened with (`ResetLink`) before showing the
    /// new-password form. Returns when the token expires; `invalidToken` when it cannot be used.
    public func validateResetToken(_ token: String) async throws -> Date { try await send(Reset.Validate(token: token)).expiresAt }

    /// Sets the new password. `weakPassword(rule:)` leaves the token usable for another try. Every
    /// session of the user ends (this one too) and device keys are revoked: sign in again.
    public func completePasswordReset(token: String, newPassword: String) async throws {
        _ = try await send(Reset.Complete(token: token, password: newPassword))
    }
}
