extension LatchkeyClient {
    /// Every typed call, one per public method: the test holds this list against
    /// `protocol/methods.json`, so a method the table gains without a call here fails it.
    static let requestTypes: [any LatchkeyRequest.Type] = [
        Gateway.Ping.self, Gateway.Health.self,
        Identity.Ping.self, Identity.Register.self, Identity.Login.self, Identity.Logout.self, Identity.Sessions.self,
        Identity.Revoke.self, Identity.Preferences.self, Identity.Challenge.self, Identity.AppAttestChallenge.self, Identity.EnrollKey.self,
        Identity.VerifyKey.self, Identity.KeyLogin.self, Identity.Keys.self, Identity.RevokeKey.self, Identity.Activity.self,
        Identity.TotpEnroll.self, Identity.TotpActivate.self, Identity.TotpVerify.self, Identity.TotpRemove.self,
        Identity.RecoveryCodes.self, Identity.RecoveryVerify.self, Identity.ChangePassword.self, Identity.ChangePhone.self, Identity.VerifyEmail.self,
        Identity.ResendVerification.self, Identity.ChangeEmail.self, Identity.ConfirmEmailChange.self, Identity.RevertEmailChange.self,
        Identity.DeleteAccount.self, Identity.Export.self, Identity.PasskeyRegisterOptions.self, Identity.PasskeyRegister.self,
        Identity.PasskeyLoginOptions.self, Identity.PasskeyLogin.self, Identity.PasskeyVerifyOptions.self, Identity.PasskeyVerify.self,
        Identity.Passkeys.self, Identity.RevokePasskey.self,
        Verification.Ping.self, Verification.Start.self, Verification.Check.self, Verification.Cancel.self, Verification.Next.self,
        Accounts.Ping.self, Accounts.Balances.self, Accounts.Transfer.self, Accounts.Confirm.self, Accounts.History.self,
        Reset.Ping.self, Reset.Request.self, Reset.Validate.self, Reset.Complete.self,
    ]
}
