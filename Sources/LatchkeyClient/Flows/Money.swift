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

    /// Starts a transfer; a code bound to its amount and accounts goes to the phone. Retrying
    /// with the same `TransferRequest` value (its idempotency key) answers the same transfer and
    /// sends no second code; the client retries it by itself after `Retry-After` too.
    public func transfer(_ request: TransferRequest) async throws -> Accounts.Transfer.Response { try await send(request) }

    /// Books the transfer with the code from its own message. Returns the balances after it.
    public func confirmTransfer(transferID: String, code: String) async throws -> Accounts.Confirm.Response {
        try await send(Accounts.Confirm(transferID: transferID, code: code))
    }
}
