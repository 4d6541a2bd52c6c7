import Foundation

extension LatchkeyClient {
    /// Sends a login code to the user's phone (the `sms` factor). Without a channel the server's
    /// workflow runs (SMS, then a voice call, then another call, each with a fresh code).
    /// `locale` picks the message's language (`en`, `fr`, `ru`); nil leaves it to the server.
    public func startCode(channel: CodeChannel? = nil, locale: String? = nil) async throws -> Verification.Start.Response {
        try await send(Verification.Start(channel: channel, locale: locale))
    }

    /// Checks the code the person typed. On success the session is at aal 2. `invalidCode`
    /// carries the attempts left; `tooManyAttempts` ends the verification (and a login session
    /// that owed it: sign in again).
    @discardableResult
    public func checkCode(_ code: String, requestID: String) async throws -> Verification.Check.Response {
        try await send(Verification.Check(requestID: requestID, code: code))
    }

    public func cancelCode(requestID: String) async throws { _ = try await send(Verification.Cancel(requestID: requestID)) }

    /// The workflow's next step now ("call me instead"): a fresh code replaces the current one once sent.
    public func nextCode(requestID: String) async throws { _ = try await send(Verification.Next(requestID: requestID)) }
}
