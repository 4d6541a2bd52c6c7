import FoundationEssentials
import LineProtocol
import Platform
import RPC
import Runtime
import Secrets
import ServiceKit

/// What the service needs from the verification service (internal forms, see protocol/internal.md).
public protocol VerificationPort: Sendable {
    /// Starts an SMS code bound to `payload`; returns its request id. `provenPhone`: the user's
    /// proven phone as identity gave it to this request (nil: verification looks it up).
    func start(userID: String, provenPhone: String?, payload: [String: JSON], expirySeconds: Int64, context: CallContext?) async throws(RPCError) -> String
    /// Checks `code` against the request and the same payload; throws verification's error.
    func check(requestID: String, code: String, payload: [String: JSON], context: CallContext?) async throws(RPCError)
    /// True when the request is already verified (the code was right earlier).
    func isVerified(requestID: String, context: CallContext?) async throws(RPCError) -> Bool
    /// Ends a pending request: its code stops working at once.
    func cancel(requestID: String, context: CallContext?) async throws(RPCError)
}

public struct TransferRequest: Sendable {
    public let from: AccountName
    public let to: AccountName
    public let amountMinor: Int64
    public let idempotencyKey: String
}

public struct TransferTicket: Sendable, Equatable {
    public let transfer: Transfer

    public var json: JSON {
        [
            "transfer_id": .string(transfer.id), "request_id": transfer.requestID.map(JSON.string) ?? .null,
            "status": .string(transfer.state.rawValue), "amount": .int(transfer.amountMinor),
            "currency": .string(transfer.currency), "from": .string(transfer.from), "to": .string(transfer.to),
            "expires_at": .int(transfer.expiresAt),
        ]
    }
}

/// The meaning of the accounts methods: typed in, typed out, domain errors. No sockets, no JSON text.
public final class AccountsService: Sendable {
    public let store: LedgerStore
    public let settings: AccountsSettings
    let verification: VerificationPort
    /// Identity's check of device-key signatures (nil: transfers are confirmed by SMS code only).
    let deviceKeys: DeviceKeyPort?
    let clock: @Sendable () -> Int64
    /// Outcome counters (`accounts.metrics` -> `counters`), when the service runs in a host.
    let metrics: Metrics?
    let twins = TwinSignal()
    let historyCursor: PageCursor

    public init(
        store: LedgerStore, verification: VerificationPort, deviceKeys: DeviceKeyPort? = nil, settings: AccountsSettings = .init(),
        clock: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) }, metrics: Metrics? = nil
    ) {
        self.metrics = metrics
        self.deviceKeys = deviceKeys
        self.store = store
        self.verification = verification
        self.settings = settings
        self.clock = clock
        historyCursor = PageCursor(key: settings.serverKey, method: "accounts.history")
    }

    public func balances(userID: String) throws -> [AccountBalance] {
        try store.balances(userID: userID).map { balance in
            balance.currency.isEmpty ? AccountBalance(name: balance.name, balanceMinor: balance.balanceMinor, currency: settings.currency) : balance
        }
    }

    /// Validates, reserves the idempotency key, starts the transfer's code and attaches it.
    /// Idempotent by key, also for twins sent at once: one of them reserves and starts the one
    /// code; the others wait (bounded by `twinWaitMilliseconds`) and answer the same transfer.
    /// `provenPhone`: the user's proven phone, read with the session (saves verification a call
    /// to identity per code); nil lets verification look it up.
    public func transfer(userID: String, _ request: TransferRequest, provenPhone: String? = nil, context: CallContext?) async throws -> TransferTicket {
        try validate(request)
        // A retry of a recorded transfer answers from a read, without the writer.
        if let existing = try store.existingTransfer(userID: userID, idempotencyKey: request.idempotencyKey), existing.requestID != nil {
            guard SQLLedgerStore.sameRequest(existing, newTransfer(userID: userID, request)) else {
                throw AccountsError.conflict("this idempotency_key was used for a different transfer")
            }
            return TransferTicket(transfer: existing)
        }
        let deadline = MonotonicClock.nowMilliseconds() + settings.twinWaitMilliseconds
        while true {
            let seen = twins.current
            let candidate = newTransfer(userID: userID, request)
            let now = candidate.now
            switch try store.reserveTransfer(candidate, staleBefore: now - settings.codeStartTimeoutSeconds) {
            case .existing(let transfer): return TransferTicket(transfer: transfer)
            case .reserved(let transfer): return try await startCode(for: transfer, provenPhone: provenPhone, context: context)
            case .insufficientFunds: throw AccountsError.insufficientFunds
            case .conflict(let message): throw AccountsError.conflict(message)
            case .starting:
                let left = deadline - MonotonicClock.nowMilliseconds()
                guard left > 0 else {
                    throw AccountsError.conflict("a request with this idempotency_key is still starting its code; retry")
                }
                await twins.wait(after: seen, timeoutMilliseconds: min(left, 50))
            }
        }
    }

    func newTransfer(userID: String, _ request: TransferRequest) -> NewTransfer {
        let now = clock()
        return NewTransfer(
            id: SortableIDs.shared.next(prefix: "tr_", randomBytes: 16), userID: userID, from: request.from, to: request.to,
            amountMinor: request.amountMinor, currency: settings.currency, idempotencyKey: request.idempotencyKey,
            now: now, expiresAt: now + settings.transferExpirySeconds)
    }

    /// The reservation holder's part: start the code, bind it to the transfer, wake the twins.
    /// The checks every transfer passes before anything is written, whatever confirms it.
    func validate(_ request: TransferRequest) throws {
        guard request.from != request.to else {
            throw AccountsError.invalidParams(field: "to", message: "from and to must be different accounts")
        }
        guard (1...settings.maxAmountMinor).contains(request.amountMinor) else {
            throw AccountsError.invalidParams(field: "amount", message: "amount must be between 1 and \(settings.maxAmountMinor) minor units")
        }
    }

    private func startCode(for reserved: Transfer, provenPhone: String?, context: CallContext?) async throws -> TransferTicket {
        defer { twins.wake() }
        let requestID: String
        do {
            requestID = try await startCode(userID: reserved.userID, provenPhone: provenPhone, payload: reserved.verificationPayload, context: context)
        } catch {
            do {
                try store.releaseReservation(transferID: reserved.id)
            } catch let release {
                // The reservation goes stale and a retry takes it over (`codeStartTimeoutSeconds`).
                context?.logger.warning("could not release a reservation", ["error": .string(String(describing: release))])
            }
            throw error
        }
        let attached: Transfer?
        do {
            attached = try store.attachCode(transferID: reserved.id, userID: reserved.userID, requestID: requestID)
        } catch {
            await withdraw(requestID: requestID, context: context)
            throw error
        }
        if let attached {
            metrics?.increment("transfers.created")
            return TransferTicket(transfer: attached)
        }
        // A retry took this reservation over as stale and attached its own code first.
        await withdraw(requestID: requestID, context: context)
        guard let current = try store.transfer(id: reserved.id, userID: reserved.userID) else { throw AccountsError.notFound }
        return TransferTicket(transfer: current)
    }

    /// Best effort: cancels a code that no recorded transfer uses.
    private func withdraw(requestID: String, context: CallContext?) async {
        do {
            try await verification.cancel(requestID: requestID, context: context)
        } catch {
            context?.logger.warning("could not cancel an unused code", ["verification.request_id": .string(requestID)])
        }
    }

    /// Starts the code. Verification allows one live transfer code per user and phone (a login
    /// code never blocks it): when the live one belongs to this user's own pending transfer, the
    /// new transfer supersedes it (that code is cancelled and the old transfer can no longer be
    /// confirmed); a code not yet attached to a transfer (another key's, still starting) is
    /// answered `concurrent_verification`.
    private func startCode(userID: String, provenPhone: String?, payload: [String: JSON], context: CallContext?) async throws -> String {
        func start() async throws(RPCError) -> String {
            try await verification.start(
                userID: userID, provenPhone: provenPhone, payload: payload, expirySeconds: settings.transferExpirySeconds, context: context)
        }
        let first: Result<String, RPCError>
        do throws(RPCError) { first = .success(try await start()) } catch { first = .failure(error) }
        guard case .failure(let error) = first, error.reason == .concurrentVerification,
            let live = error.data?["request_id"]?.stringValue,
            let superseded = try store.pendingTransfer(userID: userID, requestID: live)
        else { return try first.get() }
        let cancelled: Result<Void, RPCError>
        do throws(RPCError) { cancelled = .success(try await verification.cancel(requestID: live, context: context)) } catch { cancelled = .failure(error) }
        switch cancelled {
        case .success:
            try store.cancel(transferID: superseded.id)
            metrics?.increment("transfers.superseded")
        case .failure(let refusal) where refusal.reason == .conflict:
            break  // it finished meanwhile (maybe verified by a confirm in flight): leave that transfer be
        case .failure(let refusal) where refusal.reason == .notFound:
            try store.cancel(transferID: superseded.id)
            metrics?.increment("transfers.superseded")
        case .failure(let refusal):
            throw refusal
        }
        return try await start()
    }

    /// Where a confirmation stops before any factor is checked: a transfer already done answers
    /// its balances again (a repeated confirm is not an error), an ended one its error, and a
    /// pending one past its expiry is marked expired. Nil: pending and still open.
    func settledOrExpired(_ transfer: Transfer, userID: String) throws -> [AccountBalance]? {
        switch transfer.state {
        case .done: return try finish(transferID: transfer.id, userID: userID)
        case .expired: throw AccountsError.expired
        case .failed: throw AccountsError.conflict("this transfer failed; start a new one")
        case .cancelled: throw AccountsError.conflict("a newer transfer replaced this one")
        case .pending: break
        }
        if clock() >= transfer.expiresAt {
            try store.markExpired(transferID: transfer.id)
            metrics?.increment("transfers.expired")
            throw AccountsError.expired
        }
        return nil
    }

    /// Checks the transfer's own code, then books it in one transaction.
    /// Repeated or concurrent confirms move the money once: the loser sees the same `done`
    /// result, or `conflict` while the winner's transaction is still in flight.
    public func confirm(userID: String, transferID: String, code: String, context: CallContext?) async throws -> [AccountBalance] {
        guard let transfer = try store.transfer(id: transferID, userID: userID) else { throw AccountsError.notFound }
        if let balances = try settledOrExpired(transfer, userID: userID) { return balances }
        guard let requestID = transfer.requestID else {
            if try store.keyChallenge(transferID: transferID) != nil { throw AccountsError.conflict("this transfer is confirmed with the device key") }
            throw AccountsError.notFound
        }
        let checkError: RPCError?
        do {
            try await verification.check(requestID: requestID, code: code, payload: transfer.verificationPayload, context: context)
            checkError = nil
        } catch {
            checkError = error
        }
        if let checkError { try await recover(from: checkError, transferID: transferID, requestID: requestID, context: context) }
        return try finish(transferID: transferID, userID: userID)
    }

    /// Maps verification's refusal; returns only when the code is known to be right after all.
    private func recover(from error: RPCError, transferID: String, requestID: String, context: CallContext?) async throws {
        switch error.reason {
        case .expired, .notFound:
            try store.markExpired(transferID: transferID)
            metrics?.increment("transfers.expired")
            throw AccountsError.expired
        case .conflict where error.data?["status"]?.stringValue == "verified":
            return  // verified earlier, see below
        case .conflict:
            // Already verified: by a concurrent confirm, or by one whose booking was cut short
            // (crash). The code was right for this very payload, so booking now is safe and
            // the state guard keeps it to once.
            guard try await verification.isVerified(requestID: requestID, context: context) else { throw error }
        default:
            throw error
        }
    }

    /// Books a pending transfer (`whileKeyAttemptsLeft`: only while its device-key challenge has
    /// attempts left), or answers what became of it.
    func finish(transferID: String, userID: String, whileKeyAttemptsLeft: Bool = false) throws -> [AccountBalance] {
        switch try store.complete(transferID: transferID, userID: userID, now: clock(), whileKeyAttemptsLeft: whileKeyAttemptsLeft) {
        case .done(let balances):
            metrics?.increment("confirms.done")
            return balances
        case .insufficientFunds:
            metrics?.increment("transfers.failed_insufficient_funds")
            throw AccountsError.insufficientFunds
        case .expired: throw AccountsError.expired
        case .notFound: throw AccountsError.notFound
        case .keyAttemptsSpent: throw AccountsError.tooManyAttempts
        case .notPending(.cancelled): throw AccountsError.conflict("a newer transfer replaced this one")
        case .notPending: throw AccountsError.conflict("this transfer failed; start a new one")
        }
    }

    public func history(userID: String, limit: Int?, before: String?) throws -> HistoryPage {
        let size = limit ?? settings.historyDefaultLimit
        guard (1...settings.historyMaxLimit).contains(size) else {
            throw AccountsError.invalidParams(field: "limit", message: "limit must be between 1 and \(settings.historyMaxLimit)")
        }
        let beforeID = try historyCursor.position(before, owner: userID)
        // One extra row tells whether an older page exists.
        let rows = try store.history(userID: userID, limit: size + 1, beforeLedgerID: beforeID)
        let entries = Array(rows.prefix(size))
        let last = rows.count > size ? entries.last : nil
        return HistoryPage(entries: entries, next: last.map { historyCursor.next(after: $0.ledgerID, owner: userID) })
    }

    /// Operator/demo funding from the `external` ledger account. Idempotent by key.
    public func deposit(userID: String, account: AccountName, amountMinor: Int64, idempotencyKey: String) throws -> Int64 {
        guard (1...settings.maxAmountMinor).contains(amountMinor) else {
            throw AccountsError.invalidParams(field: "amount", message: "amount must be between 1 and \(settings.maxAmountMinor) minor units")
        }
        let outcome = try store.deposit(NewDeposit(
            id: SortableIDs.shared.next(prefix: "dp_", randomBytes: 16), userID: userID, account: account, amountMinor: amountMinor,
            currency: settings.currency, idempotencyKey: idempotencyKey, now: clock(), maxBalanceMinor: settings.maxBalanceMinor))
        switch outcome {
        case .balance(let balance):
            metrics?.increment("deposits")
            return balance
        case .conflict(let message): throw AccountsError.conflict(message)
        case .balanceTooLarge:
            throw AccountsError.invalidParams(field: "amount", message: "the balance would exceed \(settings.maxBalanceMinor) minor units")
        }
    }

    public func payOut(userID: String, account: AccountName, amountMinor: Int64, idempotencyKey: String) throws -> Int64 {
        guard (1...settings.maxBalanceMinor).contains(amountMinor) else {
            throw AccountsError.invalidParams(field: "amount", message: "amount must be between 1 and \(settings.maxBalanceMinor) minor units")
        }
        let outcome = try store.payOut(NewPayOut(
            id: SortableIDs.shared.next(prefix: "po_", randomBytes: 16), userID: userID, account: account, amountMinor: amountMinor,
            currency: settings.currency, idempotencyKey: idempotencyKey, now: clock()))
        switch outcome {
        case .balance(let balance):
            metrics?.increment("pay_outs")
            return balance
        case .conflict(let message): throw AccountsError.conflict(message)
        case .insufficientFunds: throw AccountsError.insufficientFunds
        }
    }

    /// The most transfers and ledger entries an export holds (newest entries first): about 5 MB,
    /// well within the 16 MB answer a service may give the gateway.
    static let exportLimit = 20_000

    /// The user's part of `identity.export`: balances, every transfer and every ledger entry.
    public func exportPart(userID: String) throws -> JSON {
        [
            "balances": .array(try store.balances(userID: userID).map(\.json)),
            "transfers": .array(try store.transfersForExport(userID: userID, limit: Self.exportLimit)),
            "entries": .array(try store.history(userID: userID, limit: Self.exportLimit, beforeLedgerID: nil).map(\.json)),
        ]
    }

    /// A deleted user's part here: the accounts close, or nothing changes while money is left.
    public func erase(_ erasure: ErasureFollower.Erasure) throws -> ErasureFollower.Outcome {
        switch try store.closeUser(userID: erasure.userID, pseudonym: erasure.pseudonym, now: clock()) {
        case .closed:
            metrics?.increment("users_closed")
            return .done
        case .balanceNotZero(let balances):
            return .refused(detail: "balance_not_zero", balances: .array(balances.map(\.json)))
        }
    }

    public func audit() throws -> [Breach] {
        try store.audit(maxBreaches: 100)
    }
}
