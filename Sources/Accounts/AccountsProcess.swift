import Foundation
import LineProtocol
import ServiceKit

/// Builds the accounts service from configuration and serves until SIGTERM.
public enum AccountsProcess {
    public static let currency = ConfigOption("currency", default: "USD", help: "ISO 4217 code of every account")
    public static let maxAmountMinor = ConfigOption(
        "max-amount-minor", default: "100000000", help: "largest transfer or deposit, in minor units")
    public static let transferExpirySeconds = ConfigOption(
        "transfer-expiry-s", default: "300", help: "a pending transfer and its code expire after this long")
    public static let groupCommitMax = ConfigOption(
        "group-commit-max", default: "64", help: "writes sharing one transaction (1 = one commit per write)")
    public static let options = [currency, maxAmountMinor, transferExpirySeconds, groupCommitMax]

    public static func run(arguments: [String], environment: [String: String]) throws -> Int32 {
        let host = try ServiceHost(name: "accounts", defaultPort: 7403, arguments: arguments, environment: environment, extraOptions: options)
        let configuration = host.configuration
        var settings = AccountsSettings()
        settings.currency = try configuration.requiredString(currency)
        guard settings.currency.utf8.count == 3, settings.currency.utf8.allSatisfy({ (65...90).contains($0) }) else {
            throw ConfigurationError("--currency must be three capital letters (ISO 4217)")
        }
        settings.maxAmountMinor = Int64(try configuration.int(maxAmountMinor, range: 1...1_000_000_000_000))
        settings.transferExpirySeconds = Int64(try configuration.int(transferExpirySeconds, range: 10...86_400))
        let store = try SQLiteLedgerStore(
            path: try host.dataFile("accounts.sqlite"), groupCommitMax: try configuration.int(groupCommitMax, range: 1...10_000))
        let verification = RPCVerification(client: try host.client(for: "verification", option: CommonOptions.verification))
        let service = AccountsService(store: store, verification: verification, settings: settings)
        let sessions = SessionResolver(identity: try host.client(for: "identity", option: CommonOptions.identity))
        AccountsRoutes.register(on: host.router, service: service, sessions: sessions)
        host.addHealthCheck {
            let statistics = store.groupCommitStatistics
            return ("ledger", ["batches": .int(Int64(statistics.batches)), "writes": .int(Int64(statistics.jobs))])
        }
        host.logger.info("ledger open", ["db.synchronous": "FULL", "accounts.currency": .string(settings.currency)])
        return host.run()
    }
}

/// The wire side of the methods: params in, JSON out. Sessions resolve through identity on every call.
public enum AccountsRoutes {
    public static func register(on router: Router, service: AccountsService, sessions: SessionResolver) {
        router.register("accounts.balances") { params, context in
            let session = try sessions.resolve(params, context)
            return ["accounts": .array(try service.balances(userID: session.userID).map(\.json))]
        }
        router.register("accounts.transfer") { params, context in
            let session = try sessions.resolve(params, context)
            let request = TransferRequest(
                from: try accountName(params, "from"), to: try accountName(params, "to"),
                amountMinor: try params.int("amount"),
                idempotencyKey: try idempotencyKey(params, maxBytes: service.settings.maxIdempotencyKeyBytes))
            return try service.transfer(userID: session.userID, request, context: context).json
        }
        router.register("accounts.confirm") { params, context in
            let session = try sessions.resolve(params, context)
            let transferID = try params.string("transfer_id", maxLength: 64)
            let code = try params.string("code", maxLength: 32)
            let balances = try service.confirm(userID: session.userID, transferID: transferID, code: code, context: context)
            return ["status": "done", "transfer_id": .string(transferID), "accounts": .array(balances.map(\.json))]
        }
        router.register("accounts.history") { params, context in
            let session = try sessions.resolve(params, context)
            let limit = try params.optionalInt("limit", range: 1...Int64(service.settings.historyMaxLimit)).map { Int($0) }
            let page = try service.history(userID: session.userID, limit: limit, before: try params.optionalString("before", maxLength: 32))
            return ["entries": .array(page.entries.map(\.json)), "next": page.next.map(JSON.string) ?? .null]
        }
        router.register("accounts.deposit") { params, _ in
            let userID = try params.string("user_id", maxLength: 128)
            guard !userID.isEmpty else { throw RPCError.invalidParams("user_id must not be empty", field: "user_id") }
            let balance = try service.deposit(
                userID: userID, account: try accountName(params, "account"), amountMinor: try params.int("amount"),
                idempotencyKey: try idempotencyKey(params, maxBytes: service.settings.maxIdempotencyKeyBytes))
            return ["balance": .int(balance), "currency": .string(service.settings.currency)]
        }
        router.register("accounts.audit") { _, _ in
            let breaches = try service.audit()
            return ["ok": .bool(breaches.isEmpty), "breaches": .array(breaches.map(\.json))]
        }
    }

    static func accountName(_ params: Params, _ key: String) throws(RPCError) -> AccountName {
        guard let name = AccountName(rawValue: try params.string(key, maxLength: 16)) else {
            throw RPCError.invalidParams("\(key) must be checking or saving", field: key)
        }
        return name
    }

    static func idempotencyKey(_ params: Params, maxBytes: Int) throws(RPCError) -> String {
        let key = try params.string("idempotency_key", maxLength: maxBytes)
        guard !key.isEmpty else { throw RPCError.invalidParams("idempotency_key must not be empty", field: "idempotency_key") }
        return key
    }
}

/// `VerificationPort` over the wire: internal `verification.start` / `check` / `status`,
/// check and status pinned to the replica named in the request id (`vr_<replica>_<random>`).
public struct RPCVerification: VerificationPort {
    let client: RPCClient

    public init(client: RPCClient) { self.client = client }

    public func start(userID: String, payload: [String: JSON], expirySeconds: Int64, context: CallContext?) throws(RPCError) -> String {
        let answer = try client.callAndWait("verification.start", params: [
            "user_id": .string(userID), "channel": "sms", "purpose": "transaction",
            "payload": .object(payload), "code_expiry_s": .int(expirySeconds),
        ], context: context)
        guard let requestID = answer["request_id"]?.stringValue, !requestID.isEmpty else {
            throw RPCError(.unavailable, "verification gave no request_id")
        }
        return requestID
    }

    public func check(requestID: String, code: String, payload: [String: JSON], context: CallContext?) throws(RPCError) {
        let answer = try pinnedCall("verification.check", requestID: requestID, params: [
            "request_id": .string(requestID), "code": .string(code), "payload": .object(payload),
        ], context: context)
        guard answer["status"]?.stringValue == "verified" else {
            throw RPCError(.unavailable, "verification gave an unexpected answer")
        }
    }

    public func isVerified(requestID: String, context: CallContext?) throws(RPCError) -> Bool {
        let answer = try pinnedCall("verification.status", requestID: requestID, params: ["request_id": .string(requestID)], context: context)
        return answer["status"]?.stringValue == "verified"
    }

    public func cancel(requestID: String, context: CallContext?) throws(RPCError) {
        _ = try pinnedCall("verification.cancel", requestID: requestID, params: ["request_id": .string(requestID)], context: context)
    }

    /// The owner replica of a request id, or nil for ids without one.
    static func replicaID(of requestID: String) -> String? {
        guard requestID.hasPrefix("vr_") else { return nil }
        let rest = requestID.dropFirst(3)
        guard let end = rest.firstIndex(of: "_"), end != rest.startIndex else { return nil }
        return String(rest[..<end])
    }

    /// Calls the owning replica. Its id may not be learned yet right after start-up: retry briefly.
    private func pinnedCall(_ method: String, requestID: String, params: JSON, context: CallContext?) throws(RPCError) -> JSON {
        let replica = Self.replicaID(of: requestID)
        var attempt = 0
        while true {
            do {
                return try client.callAndWait(method, params: params, context: context, replicaID: replica)
            } catch let error where error.reason == Reason.unavailable.rawValue && error.data?["sent"] == .bool(false) && attempt < 10 {
                attempt += 1
                usleep(50_000)
            }
        }
    }
}
