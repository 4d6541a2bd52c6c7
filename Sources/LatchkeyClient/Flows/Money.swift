import Foundation

public typealias TransferRequest = LatchkeyClient.Accounts.Transfer
public typealias HistoryPage = LatchkeyClient.Accounts.History.Response

extension LatchkeyClient {
    /// `checking` then `saving`, balances in minor units.
    public func balances() async throws -> [Account] { try await send(Accounts.Balances()).accounts }

    /// Ledger rows, newest first; pass the page's `next` as `before` for the older page.
    public func history(limit: Int? = nil, before: Cursor? = nil) async throws -> HistoryPage {
        try await send(Accounts.History(limit: limit, before: before))
    }

    /// Starts a transfer; a code bound to its amount and accounts goes to the phone, or, with
    /// `confirmWith: .deviceKey`, the answer carries the bytes the device key signs. Retrying
    /// with the same `TransferRequest` value (its idempotency key) answers the same transfer and
    /// sends no second code; the client retries it by itself after `Retry-After` too.
    public func transfer(_ request: TransferRequest) async throws -> Accounts.Transfer.Response { try await send(request) }

    /// Books the transfer with the code from its own message. Returns the balances after it.
    public func confirmTransfer(transferID: String, code: String) async throws -> Accounts.Confirm.Response {
        try await send(Accounts.Confirm(transferID: transferID, code: code))
    }

    /// Books a transfer started with `confirmWith: .deviceKey(deviceID:)`: decodes its `sign`
    /// bytes, has `signer` sign them (Face ID on the phone: show the person `bytesToSign`
    /// first) and sends the DER signature. A signature over other bytes is `invalidCode`
    /// (3 attempts per transfer, then `tooManyAttempts`); a passcode key is `notFound(detail: "not_biometry")`.
    public func confirmTransfer(
        _ transfer: Accounts.Transfer.Response, deviceID: String, signer: any DeviceKeySigner
    ) async throws -> Accounts.Confirm.Response {
        // Without `sign` this is an SMS transfer (or a server that is not the protocol's): nothing to sign.
        guard let bytes = transfer.bytesToSign, !bytes.isEmpty else { throw LatchkeyError.invalidResponse(status: 200) }
        let signature = try await signer.signature(for: bytes)
        return try await send(Accounts.Confirm(transferID: transfer.transferID, deviceID: deviceID, signature: signature))
    }
}
